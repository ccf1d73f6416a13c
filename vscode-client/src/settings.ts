/**
 * The extension's settings (`deepseek.*`) and how they reach the server:
 * as `initializationOptions` at start and `workspace/didChangeConfiguration`
 * on change. Pure: takes a getter, so it is unit-tested without VS Code.
 */
import { AGENT_MODE_IDS, PROFILE_IDS, type AgentMode, type RouterMode } from "./modes";

export type { RouterMode } from "./modes";

/** Anything with VS Code's `WorkspaceConfiguration.get` shape. */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
}


export interface Settings {
  serverCommand: string[];
  serverInterpreter: string;
  serverEnv: Record<string, string>;
  baseUrl: string;
  routerMode: RouterMode;
  agentMode: AgentMode;
  approval: "suggest" | "auto" | "never";
  trace: "off" | "messages" | "verbose";
}

export const SECTION = "deepseek";

/** Settings whose change needs a server restart (they shape the process). */
export const RESTART_KEYS = ["server.command", "server.interpreter", "server.env", "llm.baseUrl"];

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

function stringList(value: unknown): string[] {
  if (typeof value === "string") return value.trim() ? [value.trim()] : [];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : [];
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = String(v);
    }
  }
  return out;
}

/** Read and normalise the settings; a bad value falls back to the default. */
export function readSettings(source: SettingsSource): Settings {
  const str = (key: string) => {
    const v = source.get<unknown>(key);
    return typeof v === "string" ? v.trim() : "";
  };
  return {
    serverCommand: stringList(source.get("server.command")),
    serverInterpreter: str("server.interpreter"),
    serverEnv: stringMap(source.get("server.env")),
    baseUrl: str("llm.baseUrl"),
    routerMode: oneOf(source.get("router.mode"), PROFILE_IDS, "auto"),
    agentMode: oneOf(source.get("agent.mode"), AGENT_MODE_IDS, "agent"),
    approval: oneOf(source.get("agent.approval"), ["suggest", "auto", "never"] as const, "suggest"),
    trace: oneOf(source.get("trace.server"), ["off", "messages", "verbose"] as const, "off"),
  };
}

/**
 * Overrides in the shape of the server's `Config` (`deepseek_ls/config_models.py`),
 * sent as `initializationOptions` and as `settings.deepseek` in
 * `didChangeConfiguration`; the server layers them over `.deepseek/config.toml`.
 * Every key is always sent, so switching a setting back replaces the old value.
 * (`llm.baseUrl` reaches the server as `DEEPSEEK_BASE_URL` in its environment.)
 */
export function configOverrides(s: Settings): Record<string, Record<string, unknown>> {
  return {
    router: { force_profile: s.routerMode === "fast" ? "fast" : s.routerMode === "max-think" ? "max_think" : null },
    agent_loop: { mode: s.agentMode },
    policy: { approval_mode: s.approval },
  };
}

/** The `initializationOptions` the server receives. */
export function initializationOptions(s: Settings): Record<string, unknown> {
  return configOverrides(s);
}

/** True when a configuration change touches a key that needs a restart. */
export function needsRestart(affects: (key: string) => boolean): boolean {
  return RESTART_KEYS.some((k) => affects(`${SECTION}.${k}`));
}

/**
 * The session modes and router profiles a person can pick, defined once: the
 * settings (`deepseek.agent.mode`, `deepseek.router.mode`), the panel's pickers
 * and the palette read them from here. `package.json`'s setting enums must list
 * the same values (a unit test checks). A new mode is one line here (and there).
 */

export interface Choice<T extends string> {
  id: T;
  label: string;
  detail: string;
}

export const AGENT_MODES = [
  { id: "plan", label: "Plan", detail: "read-only: the agent plans, nothing is changed" },
  { id: "agent", label: "Agent", detail: "asks before writing files or running commands" },
  { id: "yolo", label: "YOLO", detail: "approves on its own (trusted repositories only)" },
  { id: "hetun", label: "Hetun", detail: "research first, then one mission card to approve" },
] as const satisfies readonly Choice<string>[];

export type AgentMode = (typeof AGENT_MODES)[number]["id"];

export const PROFILES = [
  { id: "auto", label: "Auto", detail: "the router picks fast or max-think per call" },
  { id: "fast", label: "Fast", detail: "always the fast profile" },
  { id: "max-think", label: "Max-think", detail: "always the thinking profile" },
] as const satisfies readonly Choice<string>[];

export type RouterMode = (typeof PROFILES)[number]["id"];

export const AGENT_MODE_IDS = AGENT_MODES.map((m) => m.id) as AgentMode[];
export const PROFILE_IDS = PROFILES.map((p) => p.id) as RouterMode[];

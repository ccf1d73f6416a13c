/**
 * Finding the `deepseek-ls` server: the `deepseek.server.command` setting,
 * else `deepseek.server.interpreter`, else the workspace's virtualenv, else
 * `deepseek-ls` on PATH. Pure (the file system is passed in) so every branch
 * is unit-tested.
 */
import * as path from "path";

export type ServerSource = "setting" | "interpreter" | "workspace-venv" | "path";

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
}

export interface Lookup {
  /** True when `file` exists and is executable (or just exists on Windows). */
  isExecutable(file: string): boolean;
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
}

export const SERVE_ARGS = ["serve", "--stdio"];
const VENV_DIRS = [".venv", "venv", "env"];

function binDir(platform: NodeJS.Platform): string {
  return platform === "win32" ? "Scripts" : "bin";
}

function exeNames(name: string, platform: NodeJS.Platform): string[] {
  return platform === "win32" ? [`${name}.exe`, `${name}.cmd`, name] : [name];
}

function withServe(args: string[]): string[] {
  return args.includes("serve") ? args : [...args, ...SERVE_ARGS];
}

/** Look `name` up on PATH like a shell would. */
export function which(name: string, lookup: Lookup): string | undefined {
  const pathVar = lookup.env.PATH ?? lookup.env.Path ?? "";
  const sep = lookup.platform === "win32" ? ";" : ":";
  for (const dir of pathVar.split(sep)) {
    if (!dir) continue;
    for (const exe of exeNames(name, lookup.platform)) {
      const candidate = path.join(dir, exe);
      if (lookup.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The server command to run, or `undefined` when none can be found. */
export function resolveServerCommand(
  settings: { serverCommand: string[]; serverInterpreter: string },
  workspaceFolders: string[],
  lookup: Lookup,
  trusted: boolean,
): ServerCommand | undefined {
  if (settings.serverCommand.length > 0) {
    const [command, ...args] = settings.serverCommand;
    return { command, args: withServe(args), source: "setting" };
  }
  if (settings.serverInterpreter) {
    return {
      command: settings.serverInterpreter,
      args: ["-m", "deepseek_ls", ...SERVE_ARGS],
      source: "interpreter",
    };
  }
  for (const folder of trusted ? workspaceFolders : []) {
    for (const venv of VENV_DIRS) {
      for (const exe of exeNames("deepseek-ls", lookup.platform)) {
        const candidate = path.join(folder, venv, binDir(lookup.platform), exe);
        if (lookup.isExecutable(candidate)) {
          return { command: candidate, args: [...SERVE_ARGS], source: "workspace-venv" };
        }
      }
    }
  }
  const onPath = which("deepseek-ls", lookup);
  if (onPath) return { command: onPath, args: [...SERVE_ARGS], source: "path" };
  return undefined;
}

/**
 * A configured command given as a path that is not an executable file: the
 * message to show instead of trying to spawn it, else `undefined`.
 */
export function missingCommandMessage(cmd: ServerCommand, lookup: Lookup): string | undefined {
  if (cmd.source !== "setting" && cmd.source !== "interpreter") return undefined;
  const isPath = cmd.command.includes("/") || cmd.command.includes("\\");
  const found = isPath ? lookup.isExecutable(cmd.command) : which(cmd.command, lookup) !== undefined;
  if (found) return undefined;
  const setting = cmd.source === "setting" ? "deepseek.server.command" : "deepseek.server.interpreter";
  return (
    `DeepSeek: the language server could not start: ${cmd.command} (from the \`${setting}\` setting) ` +
    `${isPath ? "does not exist or is not executable" : "is not on PATH"}. Fix: point \`${setting}\` at your ` +
    "deepseek-ls (or clear it to use the workspace's .venv or PATH), then run `DeepSeek: Restart Server`."
  );
}

/** What to tell the user when no server was found: what happened and the fix. */
export function notFoundMessage(trusted = true): string {
  const venv = trusted
    ? "no .venv/bin/deepseek-ls in the workspace"
    : "the workspace's .venv is not used in Restricted Mode: trust the workspace to use it";
  return (
    "DeepSeek: the deepseek-ls language server was not found (no `deepseek.server.command` " +
    `or \`deepseek.server.interpreter\` setting, ${venv}, ` +
    "no deepseek-ls on PATH). Fix: `pip install deepseek-ls` into your environment, or set " +
    "`deepseek.server.command` to the full path of deepseek-ls, then run `DeepSeek: Restart Server`."
  );
}

/** What to tell the user when the server was found but failed to start. */
export function startFailedMessage(cmd: ServerCommand, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const shown = [cmd.command, ...cmd.args].join(" ");
  const fix =
    cmd.source === "setting" || cmd.source === "interpreter"
      ? "check the `deepseek.server.*` settings"
      : "check that it runs in a terminal";
  return (
    `DeepSeek: the language server (${shown}, from ${cmd.source}) failed to start: ${reason}. ` +
    `Fix: ${fix}; the 'DeepSeek' output channel has the server's log. Then run \`DeepSeek: Restart Server\`.`
  );
}

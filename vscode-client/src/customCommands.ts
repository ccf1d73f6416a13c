/**
 * Custom commands (docs/extensions.md): the Markdown prompts of
 * `.deepseek/commands/`, `.claude/commands/` and the user's config, run by the
 * server (`deepseek.runCommand`). The palette's **DeepSeek: Run Custom
 * Command…** lists them (`deepseek.listCommands`), asks for the arguments with
 * the command's hint, and runs it; the agent panel runs a prompt that starts
 * with `/name`. The editor parts come in as `CustomCommandUI`, so this is pure
 * and unit-tested in node.
 */
import type { PickItem } from "./approvals";
import { Commands, type ServerApi } from "./protocol";

export interface CustomCommand {
  name: string;
  description: string;
  argument_hint: string;
  origin: string;
}

/** `deepseek.listCommands`' answer (the part the editor uses). */
export interface CommandList {
  commands: CustomCommand[];
  problems: string[];
  notice: string | null;
}

/** `deepseek.runCommand`'s answer (the part the editor uses). */
export interface CommandRun {
  session_id: string;
  command: string;
  answer?: { content?: string } | null;
}

export interface CustomCommandUI {
  pick<T>(items: PickItem<T>[], placeholder: string): Promise<PickItem<T> | undefined>;
  /** A line of text; undefined when the person dismissed it. */
  input(prompt: string, placeholder: string): Promise<string | undefined>;
  info(message: string): void;
}

/** `/name arguments` typed in the panel: the command and its arguments; null for a prompt (`//` sends a slash). */
export function parseSlash(text: string): { name: string; arguments: string } | null {
  const line = text.trim();
  if (!line.startsWith("/") || line.startsWith("//")) return null;
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line);
  return match ? { name: match[1], arguments: match[2].trim() } : null;
}

/**
 * Pick a custom command, ask its arguments, run it. Undefined: there is none,
 * or the person dismissed a question (nothing ran). A failed run throws (the
 * server has said why).
 */
export async function runCustomCommand(api: ServerApi, ui: CustomCommandUI, context: object = {}): Promise<CommandRun | undefined> {
  const list = await api.command<CommandList>(Commands.listCommands, {});
  for (const problem of list.problems) ui.info(`DeepSeek: ${problem}`);
  if (!list.commands.length) {
    ui.info(`DeepSeek: no custom commands here${list.notice ? ` (${list.notice})` : ""}; see docs/extensions.md.`);
    return undefined;
  }
  const items: PickItem<CustomCommand>[] = list.commands.map((c) => ({
    label: `/${c.name}`, description: [c.argument_hint, c.description].filter(Boolean).join("  "), detail: c.origin, value: c,
  }));
  const chosen = await ui.pick(items, "DeepSeek: run which custom command?");
  if (!chosen) return undefined;
  const args = chosen.value.argument_hint ? await ui.input(`/${chosen.value.name}`, chosen.value.argument_hint) : "";
  if (args === undefined) return undefined;
  return api.command<CommandRun>(Commands.runCommand, { name: chosen.value.name, arguments: args, ...context });
}

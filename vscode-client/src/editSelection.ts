/**
 * "Edit Selection with DeepSeek…" (docs/protocol.md, "Work from a comment"): what the person
 * types is run on the selection's file and lines by the server's `deepseek.edit`, the command a
 * `deepseek:` comment's code action carries too. The server plans, asks before running the plan
 * ("Run DeepSeek's plan for: …") and ends in pending hunks with the usual lenses; it says itself
 * when nothing ran. The editor parts come in as `EditSelectionUI`, so this is pure and unit-tested
 * in node.
 */
import { Commands, type ServerApi } from "./protocol";

interface Position {
  line: number;
  character: number;
}

/** The file and lines the instruction is for. */
export interface SelectionTarget {
  uri: string;
  range: { start: Position; end: Position };
}

/** `deepseek.edit`'s answer (the part the editor uses). */
export interface EditResult {
  session_id: string;
  ran: boolean;
  answer?: string;
  step?: { status: string; patch_ids: string[]; message?: string };
}

export interface EditSelectionUI {
  /** A line of text; undefined when the person dismissed it. */
  input(prompt: string, placeholder: string): Promise<string | undefined>;
  info(message: string): void;
}

/**
 * Ask what to change and send it with `target`. Undefined: no file to edit, or the person
 * dismissed the question or typed nothing (nothing sent). A failed run throws (the server has
 * said why).
 */
export async function editSelection(api: ServerApi, ui: EditSelectionUI, target: SelectionTarget | undefined): Promise<EditResult | undefined> {
  if (!target) {
    ui.info("DeepSeek: open a file of the workspace and select the code to edit first.");
    return undefined;
  }
  const typed = await ui.input("DeepSeek: what should change in the selection?", "e.g. handle an empty list");
  const instruction = typed?.trim();
  if (!instruction) return undefined;
  const result = await api.command<EditResult>(Commands.edit, { ...target, instruction });
  if (result.ran && result.step?.status === "staged") ui.info("DeepSeek: the change is ready: Accept or Reject its hunks.");
  return result;
}

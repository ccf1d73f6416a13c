/**
 * "Rewind to here" on a prompt of the agent panel: the person picks what to restore (code,
 * conversation, both; dismissing the pick does nothing), `deepseek.rewind` goes back to before
 * that prompt (the server shows what it takes back and asks Rewind / Cancel; a refusal naming
 * the files comes back as the command's error), the result is shown with a Redo action that
 * sends `deepseek.redoRewind`. No vscode import: the editor half is injected (unit tested).
 */
import type { PickItem } from "../approvals";
import { Commands } from "../protocol";

export type RewindWhat = "code" | "conversation" | "both";

export interface RewindUI {
  pick<T>(items: PickItem<T>[], placeholder: string): Promise<PickItem<T> | undefined>;
  /** A message with actions; the action chosen, or undefined when dismissed. */
  info(message: string, ...actions: string[]): Promise<string | undefined>;
}

export interface RewindServer {
  command<T>(name: string, args: object): Promise<T>;
}

/** `deepseek.rewind`'s answer (docs/protocol.md). */
export interface RewindResult {
  rewound: boolean;
  message?: string;
  rewind_id?: string;
  files?: string[];
  kept?: string[];
}

export const REDO = "Redo";

export const REWIND_CHOICES: PickItem<RewindWhat>[] = [
  { label: "Code and conversation", description: "both", value: "both" },
  { label: "Code", description: "the files as they were before this prompt (your edits since are kept)", value: "code" },
  { label: "Conversation", description: "this prompt and those after it leave the conversation; files stay", value: "conversation" },
];

/** What happened: nothing picked, the server's question declined, rewound, or rewound then redone. */
export type RewindOutcome = "cancelled" | "declined" | "rewound" | "redone";

export async function rewindToHere(server: RewindServer, ui: RewindUI, sessionId: string): Promise<RewindOutcome> {
  const picked = await ui.pick(REWIND_CHOICES, "Rewind to before this prompt: restore what?");
  if (!picked) return "cancelled";
  const what = picked.value;
  const result = await server.command<RewindResult>(Commands.rewind, { session_id: sessionId, what });
  if (!result.rewound) {
    void ui.info(`DeepSeek: ${result.message ?? "not rewound: nothing was changed"}`);
    return "declined";
  }
  const files = result.files?.length ? result.files.join(", ") : "no file changed";
  const kept = result.kept?.length ? `; left as they are: ${result.kept.join(", ")}` : "";
  const answer = await ui.info(`DeepSeek: rewound ${what}: ${files}${kept}`, REDO);
  if (answer !== REDO) return "rewound";
  await server.command(Commands.redoRewind, result.rewind_id ? { rewind_id: result.rewind_id } : {});
  return "redone";
}

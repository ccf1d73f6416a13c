/**
 * `deepseek/attention` (docs/protocol.md#attention): a session waits for the person or stopped.
 * The panel's badge shows how many approvals and questions wait (the server's `pending`, so it
 * goes back down once they are answered, whoever answered them); a notification with "Open panel"
 * says a wait or a finish when the person would not see it otherwise (the window is not focused
 * or the panel is hidden). No VS Code import here: the extension passes its window as `AttentionUI`.
 */
import { Experimental, type Attention } from "./protocol";

export interface AttentionUI {
  focused(): boolean;
  panelVisible(): boolean;
  setBadge(count: number): void;
  /** An information message with one action; resolves to the action when chosen. */
  show(message: string, action: string): PromiseLike<string | undefined>;
  openPanel(): void;
}

export const OPEN_PANEL = "Open panel";

/** Declare in the client capabilities that `deepseek/attention` is shown here. */
export function declareAttention(capabilities: { experimental?: unknown }): void {
  const current = capabilities.experimental;
  const base = current && typeof current === "object" ? (current as Record<string, unknown>) : {};
  capabilities.experimental = { ...base, [Experimental.attention]: true };
}

/** The badge follows `pending`; a wait or a finish the person cannot see is a notification. */
export async function onAttention(ui: AttentionUI, a: Attention): Promise<void> {
  ui.setBadge(Number.isInteger(a.pending) && a.pending > 0 ? a.pending : 0);
  if (a.kind === "answered") return;
  if (ui.focused() && ui.panelVisible()) return; // the panel shows it already
  const chosen = await ui.show(`DeepSeek ${a.message}`, OPEN_PANEL);
  if (chosen === OPEN_PANEL) ui.openPanel();
}

/** The panel's badge: what waits for the person's answer plus the pending changes to review. */
export interface PanelBadge {
  value: number;
  tooltip: string;
}

/**
 * One badge for both counts (VS Code gives a view one badge): a wait is not hidden by a refresh of
 * the changes, nor the changes by a wait. Value 0 shows no badge (an `undefined` badge does not clear
 * one already shown in VS Code 1.100), so the value is always set.
 */
export function panelBadge(waiting: number, changes: number): PanelBadge {
  const w = Number.isInteger(waiting) && waiting > 0 ? waiting : 0;
  const c = Number.isInteger(changes) && changes > 0 ? changes : 0;
  const said = [
    ...(w ? [`${w} waiting for you`] : []),
    ...(c ? [`${c} pending change${c === 1 ? "" : "s"} to review`] : []),
  ];
  return { value: w + c, tooltip: said.join(" · ") };
}

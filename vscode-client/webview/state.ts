/**
 * The webview's message handling: what it shows after each message from the
 * extension. A `state` message replaces everything; a `stream` message adds
 * to the answer being written (the extension does not resend the whole state
 * for every streamed piece). Pure: unit-tested in node.
 */
import { appendStream, type PanelState, type ToWebview } from "../src/panel/messages";

export interface ViewState {
  state: PanelState | null;
}

export function applyMessage(view: ViewState, msg: ToWebview | undefined | null): ViewState {
  if (!msg || typeof msg !== "object") return view;
  switch (msg.type) {
    case "state":
      return { state: msg.state };
    case "stream": {
      const s = view.state;
      // A stream of another session arrives with (or just before) the state that switches to it.
      if (!s || (s.session_id !== null && msg.session_id !== s.session_id)) return view;
      return { state: { ...s, live: appendStream(s.live, msg) } };
    }
    default:
      return view;
  }
}

/**
 * The messages between the agent panel's webview and the extension. The
 * webview renders model output, so what it sends is checked here before the
 * extension acts on it (`parseFromWebview`): an unknown type or a bad field is
 * dropped, never passed to the server. Pure (no vscode import): shared by the
 * extension, the webview bundle and the unit tests.
 */
import type { Choice } from "../modes";
import type { Hunk, Plan, SessionSummary, Spend, Status, StreamChannel, Turn } from "../protocol";

/** A turn being streamed right now (`deepseek/stream`), before the transcript has it. */
export interface LiveTurn {
  session_id: string;
  content: string;
  reasoning: string;
  status: string[];
}

export interface ChangeFile {
  uri: string;
  path: string;
  hunks: Hunk[];
}

export type ServerState = "starting" | "running" | "stopped" | "failed";

/** The last review run from the panel: running, what it found (one line), or why it failed. */
export interface ReviewView {
  state: "running" | "done" | "failed";
  text: string;
}

/** Everything the webview shows; sent whole (`state`) whenever the server's state changes. */
export interface PanelState {
  server: ServerState;
  status: Status | null;
  /** The session the conversation and plan belong to. */
  session_id: string | null;
  turns: Turn[];
  live: LiveTurn | null;
  plan: Plan | null;
  changes: ChangeFile[];
  sessions: SessionSummary[];
  modes: readonly Choice<string>[];
  profiles: readonly Choice<string>[];
  mode: string;
  profile: string;
  /** Files added as context with `@`. */
  context: string[];
  busy: boolean;
  error: string | null;
  review: ReviewView | null;
}

export type ToWebview =
  | { type: "state"; state: PanelState }
  | { type: "stream"; session_id: string; channel: StreamChannel; text: string }
  | { type: "focusPrompt" }
  | { type: "setPrompt"; text: string };

export type SubmitAction = "ask" | "plan" | "run";

export type FromWebview =
  | { type: "ready" }
  | { type: "submit"; action: SubmitAction; prompt: string; useSelection: boolean }
  | { type: "runStep" | "skipStep"; session_id: string; step_id: string }
  | { type: "reviseStep"; session_id: string; step_id: string | null; feedback: string }
  | { type: "acceptHunk" | "rejectHunk"; patch_id: string; hunk_id: string }
  | { type: "acceptFile" | "rejectFile"; uri: string }
  | { type: "acceptAll" | "rejectAll" | "openChanges" | "cancel" | "addContext" | "refresh" }
  | { type: "removeContext"; path: string }
  | { type: "openFile"; uri: string; line: number }
  | { type: "openSession" | "resumeSession" | "showEventLog" | "rewindTo"; session_id: string }
  | { type: "review"; pick: boolean }
  | { type: "setMode"; mode: string }
  | { type: "setProfile"; profile: string };

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const MAX_PROMPT = 100_000;

const str = (v: unknown): v is string => typeof v === "string";
const id = (v: unknown): v is string => str(v) && ID.test(v);
const uri = (v: unknown): v is string => str(v) && v.length <= 4096 && /^file:\/\//.test(v) && !/[\u0000-\u001f]/.test(v);

/**
 * The message if it is one the panel sends, well-formed; else undefined.
 * `modes` / `profiles`: the values a picker may set.
 */
export function parseFromWebview(raw: unknown, modes: readonly string[], profiles: readonly string[]): FromWebview | undefined {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case "ready":
    case "acceptAll":
    case "rejectAll":
    case "openChanges":
    case "cancel":
    case "addContext":
    case "refresh":
      return { type: m.type };
    case "review":
      return { type: "review", pick: m.pick === true };
    case "submit":
      if (!["ask", "plan", "run"].includes(m.action as string)) return undefined;
      if (!str(m.prompt) || !m.prompt.trim() || m.prompt.length > MAX_PROMPT) return undefined;
      return { type: "submit", action: m.action as SubmitAction, prompt: m.prompt, useSelection: m.useSelection === true };
    case "runStep":
    case "skipStep":
      return id(m.session_id) && id(m.step_id) ? { type: m.type, session_id: m.session_id, step_id: m.step_id } : undefined;
    case "reviseStep":
      if (!id(m.session_id) || !(m.step_id === null || id(m.step_id)) || !str(m.feedback) || m.feedback.length > MAX_PROMPT) return undefined;
      return { type: "reviseStep", session_id: m.session_id, step_id: m.step_id as string | null, feedback: m.feedback };
    case "acceptHunk":
    case "rejectHunk":
      return id(m.patch_id) && id(m.hunk_id) ? { type: m.type, patch_id: m.patch_id, hunk_id: m.hunk_id } : undefined;
    case "acceptFile":
    case "rejectFile":
      return uri(m.uri) ? { type: m.type, uri: m.uri } : undefined;
    case "removeContext":
      return str(m.path) && m.path.length <= 4096 ? { type: "removeContext", path: m.path } : undefined;
    case "openFile":
      return uri(m.uri) && Number.isInteger(m.line) && (m.line as number) >= 0
        ? { type: "openFile", uri: m.uri, line: m.line as number }
        : undefined;
    case "openSession":
    case "resumeSession":
    case "showEventLog":
    case "rewindTo":
      return id(m.session_id) ? { type: m.type, session_id: m.session_id } : undefined;
    case "setMode":
      return str(m.mode) && modes.includes(m.mode) ? { type: "setMode", mode: m.mode } : undefined;
    case "setProfile":
      return str(m.profile) && profiles.includes(m.profile) ? { type: "setProfile", profile: m.profile } : undefined;
    default:
      return undefined;
  }
}

/** The live turn after one `deepseek/stream` piece (status lines: the last few kept). */
export function appendStream(live: LiveTurn | null, p: { session_id: string; channel: StreamChannel; text: string }): LiveTurn {
  const base: LiveTurn = live && live.session_id === p.session_id ? live : { session_id: p.session_id, content: "", reasoning: "", status: [] };
  if (p.channel === "content") return { ...base, content: base.content + p.text };
  if (p.channel === "reasoning") return { ...base, reasoning: base.reasoning + p.text };
  return { ...base, status: [...base.status, p.text.trim()].slice(-5) };
}

/** The pending-hunk count shown in the view's badge. */
export function pendingCount(changes: ChangeFile[]): number {
  return changes.reduce((n, f) => n + f.hunks.filter((h) => h.status === "pending").length, 0);
}

/** One line for a spend: "1.2k in (1.0k cached, 200 missed), 40 out · $0.0012". */
export function spendLine(spend: Spend | null | undefined): string {
  return spend ? spend.text : "";
}

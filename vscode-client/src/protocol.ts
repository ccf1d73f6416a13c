/**
 * Protocol names of deepseek-ls, mirrored from `deepseek_ls/lsp/names.py` and
 * documented in `docs/protocol.md`. The unit test `test/protocol.test.ts`
 * checks that both files list the same names.
 */

/** `workspace/executeCommand` ids. Each takes ONE JSON object argument. */
export const Commands = {
  ask: "deepseek.ask",
  plan: "deepseek.plan",
  runStep: "deepseek.runStep",
  skipStep: "deepseek.skipStep",
  revisePlan: "deepseek.revisePlan",
  showPlan: "deepseek.showPlan",
  acceptHunk: "deepseek.acceptHunk",
  rejectHunk: "deepseek.rejectHunk",
  acceptFile: "deepseek.acceptFile",
  rejectFile: "deepseek.rejectFile",
  acceptAll: "deepseek.acceptAll",
  rejectAll: "deepseek.rejectAll",
  approve: "deepseek.approve",
  deny: "deepseek.deny",
  explainRouting: "deepseek.explainRouting",
  sessions: "deepseek.sessions",
  resume: "deepseek.resume",
  cancel: "deepseek.cancel",
  undo: "deepseek.undo",
  answer: "deepseek.answer",
  mcpStatus: "deepseek.mcpStatus",
  mcpApprove: "deepseek.mcpApprove",
  trustWorkspace: "deepseek.trustWorkspace",
  untrustWorkspace: "deepseek.untrustWorkspace",
  approveMission: "deepseek.approveMission",
  rejectMission: "deepseek.rejectMission",
  modifyMission: "deepseek.modifyMission",
  undoMission: "deepseek.undoMission",
  trustStatus: "deepseek.trustStatus",
  toggleTeammateMode: "deepseek.toggleTeammateMode",
  review: "deepseek.review",
  applyReviewFix: "deepseek.applyReviewFix",
  dismissFinding: "deepseek.dismissFinding",
  listCommands: "deepseek.listCommands",
  runCommand: "deepseek.runCommand",
  compact: "deepseek.compact",
  checkpoints: "deepseek.checkpoints",
  rewind: "deepseek.rewind",
  redoRewind: "deepseek.redoRewind",
  edit: "deepseek.edit",
  fixDiagnostic: "deepseek.fixDiagnostic",
  explainDiagnostic: "deepseek.explainDiagnostic",
} as const;

/** Custom requests (client -> server). */
export const Requests = {
  hunks: "deepseek/hunks",
  pendingApprovals: "deepseek/pendingApprovals",
  plan: "deepseek/plan",
  status: "deepseek/status",
  pendingQuestions: "deepseek/pendingQuestions",
  transcript: "deepseek/transcript",
  pendingHunks: "deepseek/pendingHunks",
  inlineCompletionStatus: "deepseek/inlineCompletionStatus",
} as const;

/** Custom notifications (server -> client). */
export const Notifications = {
  stream: "deepseek/stream",
  status: "deepseek/status",
  hunksChanged: "deepseek/hunksChanged",
  question: "deepseek/question",
  attention: "deepseek/attention",
} as const;

/** Keys set to `true` in `capabilities.experimental` (mirrors `EXPERIMENTAL_*` in names.py). */
export const Experimental = {
  /** We answer `deepseek/question` ourselves: the server skips its showMessage fallback. */
  questions: "deepseekQuestions",
  /** We show `deepseek/attention` ourselves: the server skips its showMessage of a finished request. */
  attention: "deepseekAttention",
} as const;

/** `deepseek/attention`: a session waits for the person, stopped, or a wait ended (docs/protocol.md#attention). */
export interface Attention {
  kind: "waiting" | "finished" | "answered";
  session_id: string | null;
  title: string;
  message: string;
  /** Approvals and questions waiting now: the panel's badge. */
  pending: number;
}

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

export type HunkStatus = "pending" | "accepted" | "rejected";

/** One staged hunk, as `deepseek/hunks` returns it. */
export interface Hunk {
  patch_id: string;
  hunk_id: string;
  uri: string;
  /** The range in the *current* buffer that the hunk replaces. */
  range: LspRange;
  old_text: string;
  new_text: string;
  /** 0-based lines (in the buffer after accepting) that the hunk adds. */
  added: number[];
  /** The line where removed text is shown. */
  removed_at: number;
  status: HunkStatus;
  profile?: string;
  decision_id?: string;
  session_id?: string | null;
  stale?: boolean;
}

export interface HunksResult { uri: string; version: number | null; hunks: Hunk[] }

export interface RoutingExplanation {
  decision_id: string;
  text: string;
  score: number;
  threshold: number;
  profile: string;
  model: string;
  escalation: boolean;
  contributions: Record<string, number>;
  reason_codes: string[];
}

/** Tokens and money of some model calls (`llm/budget.py` `Spend`); `cost` is null when no call had prices. */
export interface Spend {
  short: string;
  text: string;
  tokens: { cache_hit: number; cache_miss: number; output: number; total: number };
  cost: number | null;
  cost_complete: boolean;
  currency: string | null;
  calls: number;
  unpriced_calls: number;
}

/** What a session cost so far: in total, per plan step, and its last call. */
export interface SessionCost {
  session: Spend;
  steps: Record<string, Spend>;
  last_call?: { role: string; model: string; step_id: string | null; cost: number | null } | null;
}

/** How full the model's window is: the session's latest prompt, as the request counted it (docs/protocol.md). */
export interface ContextMeter {
  used: number;
  window: number;
  budget?: number | null;
  percent: number;
  parts: Record<string, number>;
  shortened: number;
  compactions: number;
  text: string;
}

export interface Status {
  session_id?: string | null;
  state: string;
  /** The server's vocabulary of states (deepseek_ls/agent/state.py), shown as sent. */
  state_label?: string;
  /** A run is live in this state (Cancel pauses it). */
  busy?: boolean;
  /** Busy and not waiting for the person: the agent itself is working. */
  working?: boolean;
  profile?: string | null;
  max_think_active: boolean;
  last_decision?: RoutingExplanation | null;
  last_error?: string | null;
  state_reason?: string | null;
  cost?: SessionCost | null;
  /** The context meter; null before the session's first model call. */
  context?: ContextMeter | null;
  /** Teammate mode (docs/agent.md#teammate-mode): the switch and the session's lanes. */
  teammate_mode?: boolean;
  lanes?: { running: number; queued: number; lanes: { lane: number; step_id: string; state: string; reason?: string }[] };
  /** Names of the server's running tasks (commands in progress). */
  running?: string[];
}

export interface ApprovalRequest {
  request_id: string;
  kind: string;
  title: string;
  detail: string;
  command?: string;
  files: string[];
  hunk_ids: string[];
  patch_id?: string;
  session_id?: string;
}

/** A clarifying question of the agent (`deepseek/question`), answered with `deepseek.answer`. */
export interface Question {
  session_id: string | null;
  question_id: string;
  question: string;
  choices: string[] | null;
}

export type StreamChannel = "content" | "reasoning" | "status";
export interface StreamParams { session_id: string; channel: StreamChannel; text: string }

export interface PlanStep {
  step_id: string;
  title: string;
  intent?: string;
  files?: string[];
  status?: string;
  done?: boolean;
}
export interface Plan {
  plan_id: string;
  version: number;
  goal: string;
  steps: PlanStep[];
  assumptions?: string[];
  verification?: string[];
  risk_notes?: string[];
  confidence?: number;
}

export interface SessionSummary {
  session_id: string;
  state: string;
  state_label?: string;
  created: string;
  prompt: string;
  mode?: string;
  error?: string | null;
  state_reason?: string | null;
  cost?: Spend | null;
}

/** One prompt or answer of a session (`deepseek/transcript`). */
export interface Turn {
  turn_id: string;
  role: "user" | "assistant";
  agent_role: string | null;
  content: string;
  step_id: string | null;
  reasoning?: string | null;
  tool_calls?: string[];
  model?: string | null;
  profile?: string | null;
  routing?: RoutingExplanation | null;
  spend?: Spend | null;
}

export interface Transcript { session_id: string; state: string; turns: Turn[] }

/** `deepseek/pendingHunks`: every pending hunk, by file. */
export interface PendingHunks { files: { uri: string; path: string; hunks: Hunk[] }[]; count: number }

/** How the extension's modules talk to the server (implemented over the LanguageClient). */
export interface ServerApi {
  /** `workspace/executeCommand` with one JSON object argument. */
  command<T = unknown>(name: string, arg: object): Promise<T>;
  /** A custom request such as `deepseek/hunks`. */
  request<T = unknown>(method: string, params: object): Promise<T>;
}

/** What a session state is called on screen: the server's label, else the state as it is. */
export function stateLabel(s: { state: string; state_label?: string | null }): string {
  return s.state_label || s.state;
}

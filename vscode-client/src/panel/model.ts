/**
 * What the agent panel shows, as a view of the server's state: folded from
 * `deepseek/status` and `deepseek/stream` notifications and the answers to
 * `deepseek/transcript`, `deepseek/plan`, `deepseek/pendingHunks` and
 * `deepseek.sessions`. It holds no agent logic: each notification says which
 * of those to read again (`Refresh`), and a reloaded panel is rebuilt the same
 * way. Pure, so the unit tests drive it with recorded notifications.
 */
import type { Choice } from "../modes";
import type { Plan, ServerApi, SessionSummary, Status, StreamParams, Transcript } from "../protocol";
import { reviewChanges, reviewSummary, type ReviewUI } from "../review";
import { appendStream, type ChangeFile, type PanelState, type ReviewView, type ServerState } from "./messages";

/** What to read from the server again after a notification. */
export interface Refresh {
  transcript?: boolean;
  plan?: boolean;
  changes?: boolean;
  sessions?: boolean;
}

const assistantTurns = (turns: PanelState["turns"]) => turns.filter((t) => t.role === "assistant").length;

export class PanelModel {
  private state: PanelState;
  /** Assistant turns the transcript had when the live turn started: once it has more, the live turn is in it. */
  private liveBase = 0;

  constructor(modes: readonly Choice<string>[], profiles: readonly Choice<string>[], mode: string, profile: string) {
    this.state = {
      server: "starting", status: null, session_id: null, turns: [], live: null, plan: null, changes: [], sessions: [],
      modes, profiles, mode, profile, context: [], busy: false, error: null, review: null,
    };
  }

  get snapshot(): PanelState {
    return this.state;
  }

  get sessionId(): string | null {
    return this.state.session_id;
  }

  private set(patch: Partial<PanelState>): void {
    this.state = { ...this.state, ...patch };
  }

  setServer(server: ServerState): Refresh {
    this.set({ server });
    return server === "running" ? { transcript: true, plan: true, changes: true, sessions: true } : {};
  }

  /** Show `sessionId` (the person opened it, or the server moved on to it). */
  showSession(sessionId: string | null): Refresh {
    if (sessionId === this.state.session_id) return {};
    this.set({ session_id: sessionId, turns: [], live: null, plan: null });
    return { transcript: true, plan: true };
  }

  /** `deepseek/status`: a session changed state. The panel follows the session that moves. */
  onStatus(status: Status): Refresh {
    this.set({ status, busy: status.busy === true });
    const switched = status.session_id ? this.showSession(status.session_id) : {};
    return { ...switched, transcript: true, plan: true, sessions: true };
  }

  /** `deepseek/stream`: text of the answer being written. Returns what to read when it is a new session's. */
  onStream(p: StreamParams): Refresh {
    const refresh = p.session_id && p.session_id !== this.state.session_id ? this.showSession(p.session_id) : {};
    if (!this.state.live) this.liveBase = assistantTurns(this.state.turns);
    this.set({ live: appendStream(this.state.live, p) });
    return refresh;
  }

  setTranscript(t: Transcript | null): void {
    if (!t) return;
    if (this.state.session_id === null) this.set({ session_id: t.session_id });
    if (t.session_id !== this.state.session_id) return; // an answer for a session no longer shown
    const live = this.state.live && assistantTurns(t.turns) > this.liveBase ? null : this.state.live;
    this.set({ turns: t.turns, live });
  }

  setPlan(p: { session_id: string; plan: Plan | null } | null): void {
    if (p && (this.state.session_id === null || p.session_id === this.state.session_id)) {
      this.set({ session_id: p.session_id, plan: p.plan });
    }
  }

  setChanges(files: ChangeFile[]): void {
    this.set({ changes: files.filter((f) => f.hunks.length > 0) });
  }

  /** The sessions, newest first. A panel showing none (a new window, a restarted server) shows the newest. */
  setSessions(sessions: SessionSummary[]): Refresh {
    this.set({ sessions });
    return this.state.session_id === null && sessions.length ? this.showSession(sessions[0].session_id) : {};
  }

  setPickers(mode: string, profile: string): void {
    this.set({ mode, profile });
  }

  setBusy(busy: boolean): void {
    this.set({ busy });
  }

  setError(error: string | null): void {
    this.set({ error });
  }

  setReview(review: ReviewView | null): void {
    this.set({ review });
  }

  addContext(path: string): void {
    if (!this.state.context.includes(path)) this.set({ context: [...this.state.context, path] });
  }

  removeContext(path: string): void {
    this.set({ context: this.state.context.filter((p) => p !== path) });
  }

  clearContext(): void {
    this.set({ context: [] });
  }
}

/** The prompt sent for a submit: the text, then the `@file` context as mentions the server's context gathering reads. */
export function promptWithContext(prompt: string, context: string[]): string {
  const mentions = context.filter((p) => !prompt.includes(`@${p}`)).map((p) => `@${p}`);
  return mentions.length ? `${prompt.trim()}\n\nContext files: ${mentions.join(" ")}` : prompt.trim();
}

/** The next step to run: the first one still pending (for "Run next step" and the Run action). */
export function nextStep(plan: Plan | null): Plan["steps"][number] | undefined {
  return plan?.steps.find((s) => (s.status ?? (s.done ? "done" : "pending")) === "pending");
}

/**
 * The panel's Review buttons: the palette's review (`reviewChanges`) of the
 * working tree, or of the change the person picks (`pick`), its outcome kept
 * in the model for the panel to show: running once the request is sent, then
 * what it found, nothing to review, or the error (a base that does not exist).
 * Dismissing the question leaves the last outcome as it was.
 */
export async function reviewFromPanel(model: PanelModel, api: ServerApi, ui: ReviewUI, pick: boolean, publish: () => void): Promise<void> {
  const shown: ReviewUI = {
    ...ui,
    progress: (title, job) => {
      model.setReview({ state: "running", text: "Reviewing…" });
      publish();
      return ui.progress(title, job);
    },
  };
  try {
    const result = await reviewChanges(api, shown, pick ? undefined : {});
    if (result) model.setReview({ state: "done", text: reviewSummary(result) });
  } catch (error) {
    model.setReview({ state: "failed", text: error instanceof Error ? error.message : String(error) });
  }
  publish();
}

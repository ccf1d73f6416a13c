/**
 * The agent panel: a webview view in the DeepSeek activity-bar container.
 * It shows the server's state (`PanelModel`, re-read on each notification)
 * and turns the webview's messages — checked by `parseFromWebview` — into the
 * server's commands. No agent logic: "Run" is the server's plan followed by
 * its runStep of the first step, the rest are single commands.
 */
import * as vscode from "vscode";
import { panelBadge } from "../attention";
import { editorContext, reviewUI, rewindUI } from "../commands";
import { parseSlash } from "../customCommands";
import { findEventLog } from "../eventLog";
import { rewindToHere } from "./rewind";
import { PATCHED_SCHEME, type InlineDiff } from "../inlineDiff";
import { AGENT_MODES, AGENT_MODE_IDS, PROFILES, PROFILE_IDS } from "../modes";
import {
  Commands, Requests, type Plan, type PendingHunks, type SessionSummary, type Status, type StreamParams, type Transcript,
} from "../protocol";
import { CommandCancelled, CommandFailed, currentSettings, type ServerManager } from "../server";
import { SECTION } from "../settings";
import { newNonce, panelHtml } from "./html";
import { parseFromWebview, pendingCount, type FromWebview, type ServerState, type ToWebview } from "./messages";
import { PanelModel, nextStep, promptWithContext, reviewFromPanel, type Refresh } from "./model";

export const PANEL_VIEW_ID = "deepseek.panel";
const REFRESH_DELAY_MS = 40;

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class AgentPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private waiting = 0; // approvals and questions waiting (deepseek/attention): the view's badge
  private readonly model: PanelModel;
  private wanted: Refresh = {};
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly server: ServerManager,
    private readonly inlineDiff: InlineDiff,
  ) {
    const s = currentSettings();
    this.model = new PanelModel(AGENT_MODES, PROFILES, s.agentMode, s.routerMode);
  }

  // -- the view ------------------------------------------------------------------

  /** Whether the panel is on screen now. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /** The number of approvals and questions waiting, counted in the panel's badge. */
  setBadge(count: number): void {
    this.waiting = count;
    this.updateBadge();
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const root = vscode.Uri.joinPath(this.extensionUri, "out", "webview");
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    view.webview.html = panelHtml(
      {
        cspSource: view.webview.cspSource,
        script: view.webview.asWebviewUri(vscode.Uri.joinPath(root, "main.js")).toString(),
        style: view.webview.asWebviewUri(vscode.Uri.joinPath(root, "main.css")).toString(),
      },
      newNonce(),
    );
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw) => {
        const msg = parseFromWebview(raw, AGENT_MODE_IDS, PROFILE_IDS);
        if (!msg) return this.server.log(`DeepSeek panel: ignored a malformed message from the webview`);
        void this.handle(msg);
      }),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
    this.updateBadge();
  }

  private post(msg: ToWebview): void {
    void this.view?.webview.postMessage(msg);
  }

  private publish(): void {
    this.post({ type: "state", state: this.model.snapshot });
    this.updateBadge();
  }

  private updateBadge(): void {
    if (!this.view) return;
    this.view.badge = panelBadge(this.waiting, pendingCount(this.model.snapshot.changes));
  }

  // -- server notifications ---------------------------------------------------------

  setServerState(state: ServerState): void {
    this.refresh(this.model.setServer(state));
    this.publish();
  }

  onStatus(status: Status): void {
    this.refresh(this.model.onStatus(status));
    this.publish();
  }

  onStream(p: StreamParams): void {
    const refresh = this.model.onStream(p);
    if (refresh.transcript) {
      this.refresh(refresh);
      this.publish();
    } else {
      this.post({ type: "stream", session_id: p.session_id, channel: p.channel, text: p.text });
    }
  }

  onHunksChanged(): void {
    this.refresh({ changes: true, plan: true });
  }

  onSettingsChanged(): void {
    const s = currentSettings();
    this.model.setPickers(s.agentMode, s.routerMode);
    this.publish();
  }

  /** Read again what `r` names, once, shortly (notifications come in bursts). */
  refresh(r: Refresh): void {
    this.wanted = {
      transcript: this.wanted.transcript || r.transcript,
      plan: this.wanted.plan || r.plan,
      changes: this.wanted.changes || r.changes,
      sessions: this.wanted.sessions || r.sessions,
    };
    if (!this.timer) this.timer = setTimeout(() => void this.load(), REFRESH_DELAY_MS);
  }

  private async load(): Promise<void> {
    this.timer = undefined;
    const want = this.wanted;
    this.wanted = {};
    if (!this.server.running) return;
    const sid = this.model.sessionId;
    const args = sid ? { session_id: sid } : {};
    const jobs: Promise<unknown>[] = [];
    const read = <T>(job: Promise<T>, use: (value: T) => void, what: string) =>
      jobs.push(job.then(use, (error) => this.server.log(`DeepSeek panel: reading ${what} failed: ${errorText(error)}`)));
    if (want.transcript) read(this.server.request<Transcript | null>(Requests.transcript, args), (t) => this.model.setTranscript(t), "the transcript");
    if (want.plan) read(this.server.request<{ session_id: string; plan: Plan | null } | null>(Requests.plan, args), (p) => this.model.setPlan(p), "the plan");
    if (want.changes) read(this.server.request<PendingHunks>(Requests.pendingHunks, {}), (c) => this.model.setChanges(c.files), "the pending changes");
    if (want.sessions) read(this.server.command<{ sessions: SessionSummary[] }>(Commands.sessions, {}), (s) => this.refresh(this.model.setSessions(s.sessions)), "the sessions");
    await Promise.all(jobs);
    this.publish();
  }

  // -- actions ---------------------------------------------------------------------------

  private async handle(msg: FromWebview): Promise<void> {
    try {
      await this.act(msg);
      this.model.setError(null);
    } catch (error) {
      // The server already showed a failed command (window/showMessage); the panel says it too.
      if (error instanceof CommandCancelled) this.server.log(`DeepSeek panel: ${msg.type} cancelled`);
      else if (!(error instanceof CommandFailed)) void vscode.window.showErrorMessage(`DeepSeek: ${msg.type} failed: ${errorText(error)}`);
      this.model.setError(error instanceof CommandCancelled ? null : errorText(error));
    }
    this.publish();
  }

  private async act(msg: FromWebview): Promise<void> {
    switch (msg.type) {
      case "ready":
        this.refresh({ transcript: true, plan: true, changes: true, sessions: true });
        return this.publish();
      case "refresh":
        return this.refresh({ transcript: true, plan: true, changes: true, sessions: true });
      case "submit":
        return this.submit(msg.action, msg.prompt, msg.useSelection);
      case "runStep":
        return this.runStep(msg.session_id, msg.step_id);
      case "review":
        // The palette's review; its outcome (or error) is shown in the panel's Review section.
        return reviewFromPanel(this.model, this.server, reviewUI, msg.pick, () => this.publish());
      case "skipStep":
        await this.server.command(Commands.skipStep, { session_id: msg.session_id, step_id: msg.step_id });
        return this.refresh({ plan: true, changes: true });
      case "reviseStep":
        return this.revise(msg.session_id, msg.step_id);
      case "acceptHunk": {
        const result = await this.server.command<{ applied: boolean; uri: string; message?: string }>(Commands.acceptHunk, { patch_id: msg.patch_id, hunk_id: msg.hunk_id });
        if (!result.applied) void vscode.window.showWarningMessage(`DeepSeek: the hunk was not applied: ${result.message ?? "it conflicts with your edits"}.`);
        if (result.uri) await this.inlineDiff.refresh(result.uri);
        return this.refresh({ changes: true, plan: true });
      }
      case "rejectHunk":
        await this.server.command(Commands.rejectHunk, { patch_id: msg.patch_id, hunk_id: msg.hunk_id });
        return this.refresh({ changes: true, plan: true });
      case "acceptFile":
      case "rejectFile":
        return this.decideFile(msg.uri, msg.type === "acceptFile");
      case "acceptAll":
        await this.server.command(Commands.acceptAll, {});
        this.inlineDiff.refreshVisible();
        return this.refresh({ changes: true, plan: true });
      case "rejectAll":
        await this.server.command(Commands.rejectAll, {});
        this.inlineDiff.refreshVisible();
        return this.refresh({ changes: true, plan: true });
      case "openChanges":
        return this.openAllChanges();
      case "openFile": {
        const pos = new vscode.Position(msg.line, 0);
        await vscode.window.showTextDocument(vscode.Uri.parse(msg.uri), { selection: new vscode.Range(pos, pos), preview: false });
        return;
      }
      case "openSession":
        return this.refresh(this.model.showSession(msg.session_id));
      case "resumeSession": {
        const result = await this.server.command<{ session_id: string }>(Commands.resume, { session_id: msg.session_id });
        return this.refresh({ ...this.model.showSession(result.session_id), sessions: true, changes: true });
      }
      case "showEventLog":
        return this.showEventLog(msg.session_id);
      case "rewindTo":
        await rewindToHere(this.server, rewindUI, msg.session_id);
        this.inlineDiff.refreshVisible();
        return this.refresh({ transcript: true, plan: true, changes: true, sessions: true });
      case "setMode":
        await vscode.workspace.getConfiguration(SECTION).update("agent.mode", msg.mode, vscode.ConfigurationTarget.Global);
        return this.onSettingsChanged();
      case "setProfile":
        await vscode.workspace.getConfiguration(SECTION).update("router.mode", msg.profile, vscode.ConfigurationTarget.Global);
        return this.onSettingsChanged();
      case "cancel": {
        const result = await this.server.command<{ cancelled: boolean }>(Commands.cancel, {});
        void vscode.window.showInformationMessage(result.cancelled ? "DeepSeek: cancelled." : "DeepSeek: nothing was running.");
        return;
      }
      case "addContext":
        return this.addContextFile();
      case "removeContext":
        return this.model.removeContext(msg.path);
    }
  }

  private context(useSelection: boolean): { uri?: string; range?: object } {
    if (useSelection) {
      const ctx = editorContext();
      if (ctx.uri) return ctx;
    }
    const first = this.model.snapshot.context[0];
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    return first && folder ? { uri: vscode.Uri.joinPath(folder, first).toString() } : {};
  }

  private async submit(action: "ask" | "plan" | "run", text: string, useSelection: boolean): Promise<void> {
    const prompt = promptWithContext(text, this.model.snapshot.context);
    const ctx = this.context(useSelection);
    this.model.clearContext();
    this.model.setBusy(true);
    this.publish();
    try {
      const slash = parseSlash(text);
      if (slash) {
        // A custom command (docs/extensions.md): the server expands it; the slash line never reaches the model.
        const result = await this.server.command<{ session_id: string }>(Commands.runCommand, { ...slash, ...ctx });
        this.refresh({ ...this.model.showSession(result.session_id), transcript: true, plan: true, changes: true, sessions: true });
        return;
      }
      if (action === "ask") {
        const result = await this.server.command<{ session_id: string }>(Commands.ask, { prompt, ...ctx });
        this.refresh({ ...this.model.showSession(result.session_id), transcript: true, sessions: true });
        return;
      }
      const planned = await this.server.command<{ session_id: string; plan: Plan }>(Commands.plan, { prompt, mode: currentSettings().agentMode, ...ctx });
      this.refresh({ ...this.model.showSession(planned.session_id), transcript: true, plan: true, sessions: true });
      const first = nextStep(planned.plan);
      if (action === "run" && first) await this.runStep(planned.session_id, first.step_id);
    } finally {
      this.model.setBusy(false);
    }
  }

  private async runStep(sessionId: string, stepId: string): Promise<void> {
    await this.server.command(Commands.runStep, { session_id: sessionId, step_id: stepId });
    this.inlineDiff.refreshVisible();
    this.refresh({ transcript: true, plan: true, changes: true });
  }

  private async revise(sessionId: string, stepId: string | null): Promise<void> {
    const feedback = await vscode.window.showInputBox({
      prompt: stepId ? "DeepSeek: what should change in this step? (empty: write it in the plan document)" : "DeepSeek: what should change in the plan? (empty: write it in the plan document)",
      ignoreFocusOut: true,
    });
    if (feedback === undefined) return;
    await this.server.command(Commands.revisePlan, { session_id: sessionId, feedback, ...(stepId ? { step_id: stepId } : {}) });
    this.refresh({ transcript: true, plan: true });
  }

  /** Accept or reject every pending hunk of a file (each patch that has some there). */
  async decideFile(uri: string, accept: boolean): Promise<void> {
    const file = this.model.snapshot.changes.find((f) => f.uri === uri);
    const patches = [...new Set((file?.hunks ?? []).map((h) => h.patch_id))];
    for (const patchId of patches) {
      const result = await this.server.command<{ applied?: boolean; message?: string }>(accept ? Commands.acceptFile : Commands.rejectFile, { patch_id: patchId, uri });
      if (accept && result.applied === false) void vscode.window.showWarningMessage(`DeepSeek: not applied: ${result.message ?? "it conflicts with your edits"}.`);
    }
    await this.inlineDiff.refresh(uri);
    this.refresh({ changes: true, plan: true });
  }

  /** Every file with pending hunks in VS Code's multi-diff editor: as it is ↔ with the hunks accepted. */
  async openAllChanges(): Promise<void> {
    const files = this.model.snapshot.changes;
    if (!files.length) {
      void vscode.window.showInformationMessage("DeepSeek: no changes waiting for review.");
      return;
    }
    const resources: [vscode.Uri, vscode.Uri, vscode.Uri][] = [];
    for (const f of files) {
      await this.inlineDiff.refresh(f.uri); // the patched side reads the hunks from this cache
      const uri = vscode.Uri.parse(f.uri);
      resources.push([uri, uri, uri.with({ scheme: PATCHED_SCHEME })]);
    }
    await vscode.commands.executeCommand("vscode.changes", `DeepSeek: ${pendingCount(files)} pending changes`, resources);
  }

  private async showEventLog(sessionId: string): Promise<void> {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const file = root ? findEventLog(root, sessionId) : undefined;
    if (!file) throw new Error(`no events.jsonl for session ${sessionId}`);
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  }

  async addContextFile(): Promise<void> {
    const found = await vscode.workspace.findFiles("**/*", "{**/node_modules/**,**/.git/**,**/.deepseek/**,**/.venv/**}", 5000);
    const picked = await vscode.window.showQuickPick(
      found.map((u) => vscode.workspace.asRelativePath(u, false)).sort(),
      { placeHolder: "DeepSeek: add a file to the prompt's context (@file)" },
    );
    if (picked) this.model.addContext(picked);
    this.publish();
    this.post({ type: "focusPrompt" });
  }

  // -- palette ---------------------------------------------------------------------------------

  async focusPrompt(): Promise<void> {
    await vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`);
    this.post({ type: "focusPrompt" });
  }

  /** Run (or skip) the plan's next pending step. */
  async nextStep(skip: boolean): Promise<void> {
    const { session_id, plan } = this.model.snapshot;
    const step = nextStep(plan);
    if (!session_id || !step) {
      void vscode.window.showInformationMessage("DeepSeek: no pending plan step.");
      return;
    }
    if (skip) {
      await this.server.command(Commands.skipStep, { session_id, step_id: step.step_id });
      this.refresh({ plan: true, changes: true });
    } else {
      await this.runStep(session_id, step.step_id);
    }
  }

  async revisePlan(): Promise<void> {
    const sid = this.model.snapshot.session_id;
    if (!sid || !this.model.snapshot.plan) {
      void vscode.window.showInformationMessage("DeepSeek: no plan to revise.");
      return;
    }
    await this.revise(sid, null);
  }

  /** Pick a file with pending hunks (the active editor's first) and accept or reject all of it. */
  async pickAndDecideFile(accept: boolean): Promise<void> {
    const files = this.model.snapshot.changes;
    if (!files.length) {
      void vscode.window.showInformationMessage("DeepSeek: no changes waiting for review.");
      return;
    }
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const ordered = [...files].sort((a, b) => Number(b.uri === active) - Number(a.uri === active));
    const picked = await vscode.window.showQuickPick(
      ordered.map((f) => ({ label: f.path, description: `${f.hunks.length} hunk${f.hunks.length === 1 ? "" : "s"}`, uri: f.uri })),
      { placeHolder: accept ? "Accept every pending hunk of which file?" : "Reject every pending hunk of which file?" },
    );
    if (picked) await this.decideFile(picked.uri, accept);
  }

  async pick(kind: "mode" | "profile"): Promise<void> {
    const choices = kind === "mode" ? AGENT_MODES : PROFILES;
    const current = kind === "mode" ? this.model.snapshot.mode : this.model.snapshot.profile;
    const picked = await vscode.window.showQuickPick(
      choices.map((c) => ({ label: c.label, description: c.id === current ? "(current)" : "", detail: c.detail, id: c.id })),
      { placeHolder: kind === "mode" ? "DeepSeek session mode" : "DeepSeek model profile" },
    );
    if (!picked) return;
    await this.act(kind === "mode" ? { type: "setMode", mode: picked.id } : { type: "setProfile", profile: picked.id });
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

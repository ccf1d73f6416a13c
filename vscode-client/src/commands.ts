/**
 * The palette commands (`deepseek-ls.*`). They are not the server's own
 * `deepseek.*` command ids: vscode-languageclient registers those itself (for
 * the code lenses), so ours gather input in the editor and then call them.
 */
import * as vscode from "vscode";
import { approve, deny, type ApprovalUI, type PickItem } from "./approvals";
import { findEventLog } from "./eventLog";
import { diagnosticsContext, type LspDiagnostic } from "./diagnosticsContext";
import { hunkAtLine, undoMessage } from "./hunks";
import type { InlineDiff } from "./inlineDiff";
import { mcpItems, type McpStatus } from "./mcp";
import { Commands, stateLabel, type ContextMeter, type Plan, type RoutingExplanation, type ServerApi, type SessionSummary } from "./protocol";
import { runCustomCommand, type CustomCommandUI } from "./customCommands";
import { editSelection, type EditSelectionUI, type SelectionTarget } from "./editSelection";
import { reviewChanges, type ReviewUI } from "./review";
import type { RewindUI } from "./panel/rewind";
import { SECRET_KEY } from "./secrets";
import type { ServerManager } from "./server";
import { CommandCancelled, CommandFailed, currentSettings } from "./server";
import type { StatusBar } from "./statusBar";
import type { StreamPanel } from "./streamPanel";
import { trustHint, type TrustStatus } from "./trust";

export interface CommandDeps {
  context: vscode.ExtensionContext;
  server: ServerManager;
  inlineDiff: InlineDiff;
  statusBar: StatusBar;
  stream: StreamPanel;
}

const ui: ApprovalUI = {
  pick: async <T>(items: PickItem<T>[], placeholder: string) => vscode.window.showQuickPick(items, { placeHolder: placeholder }),
  info: (message) => void vscode.window.showInformationMessage(message),
};

/** The editor half of a review, shared by the palette command and the agent panel. */
export const reviewUI: ReviewUI = {
  pick: ui.pick,
  input: async (prompt, value) => vscode.window.showInputBox({ prompt, value, ignoreFocusOut: true }),
  progress: (title, job) => Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, job)),
  showFindings: () => void vscode.commands.executeCommand("workbench.actions.view.problems"),
};

/** The editor half of "Rewind to here" in the agent panel. */
export const rewindUI: RewindUI = {
  pick: ui.pick,
  info: async (message, ...actions) => vscode.window.showInformationMessage(message, ...actions),
};

/** The editor half of running a custom command (palette and panel). */
export const customCommandUI: CustomCommandUI = {
  pick: ui.pick,
  input: async (prompt, placeholder) => vscode.window.showInputBox({ prompt, placeHolder: placeholder, ignoreFocusOut: true }),
  info: ui.info,
};

const editSelectionUI: EditSelectionUI = {
  input: async (prompt, placeholder) => vscode.window.showInputBox({ prompt, placeHolder: placeholder, ignoreFocusOut: true }),
  info: ui.info,
};

/** The active file's selection (the cursor's line when nothing is selected), for "Edit Selection with DeepSeek…". */
function selectionTarget(): SelectionTarget | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") return undefined;
  const sel = editor.selection;
  const range = sel.isEmpty ? editor.document.lineAt(sel.active.line).range : sel;
  return {
    uri: editor.document.uri.toString(),
    range: { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } },
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Run a command body; errors reach the user with what happened, once: a
 * command the server failed was already shown by the server, so it is logged.
 */
function guarded(server: ServerManager, name: string, body: (...args: unknown[]) => Promise<unknown>) {
  return async (...args: unknown[]) => {
    try {
      return await body(...args);
    } catch (error) {
      if (error instanceof CommandFailed) server.log(`DeepSeek: ${name}: ${error.message}`);
      else if (error instanceof CommandCancelled) server.log(`DeepSeek: ${name} cancelled`);
      else void vscode.window.showErrorMessage(`DeepSeek: ${name} failed: ${errorText(error)}`);
      return undefined;
    }
  };
}

/** The editor's context for `ask` / `plan`: the active file, selection and the file's diagnostics. */
export function editorContext(): { uri?: string; range?: object; diagnostics?: LspDiagnostic[] } {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") return {};
  const sel = editor.selection;
  const range = sel.isEmpty
    ? undefined
    : { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } };
  const diagnostics = diagnosticsContext(vscode.languages.getDiagnostics(editor.document.uri));
  return { uri: editor.document.uri.toString(), ...(range ? { range } : {}), ...(diagnostics.length ? { diagnostics } : {}) };
}

async function pickSession(api: ServerApi, placeholder: string): Promise<SessionSummary | undefined> {
  const { sessions } = await api.command<{ sessions: SessionSummary[] }>(Commands.sessions, {});
  if (!sessions.length) {
    void vscode.window.showInformationMessage("DeepSeek: no sessions in this workspace yet.");
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.prompt || "(no prompt)", description: `${stateLabel(s)} · ${s.created}`, detail: s.session_id, session: s })),
    { placeHolder: placeholder, matchOnDetail: true },
  );
  return picked?.session;
}

/** The hunk at the cursor (from `deepseek/hunks`), or a message saying there is none. */
async function hunkAtCursor(inlineDiff: InlineDiff) {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("DeepSeek: open the file with the staged hunk first.");
    return undefined;
  }
  const hunks = await inlineDiff.refresh(editor.document.uri.toString());
  const hunk = hunkAtLine(hunks, editor.selection.active.line);
  if (!hunk) void vscode.window.showInformationMessage("DeepSeek: no pending hunk in this file.");
  return hunk;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { context, server, inlineDiff, statusBar, stream } = deps;
  const reg = (id: string, title: string, body: (...args: unknown[]) => Promise<unknown>) =>
    vscode.commands.registerCommand(`deepseek-ls.${id}`, guarded(server, title, body));

  return [
    reg("plan", "Plan", async () => {
      const prompt = await vscode.window.showInputBox({ prompt: "DeepSeek: what should be planned?", placeHolder: "e.g. add input validation to app.py", ignoreFocusOut: true });
      if (!prompt) return undefined;
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "DeepSeek: planning…" },
        () => server.command<{ session_id: string; plan: Plan }>(Commands.plan, { prompt, mode: currentSettings().agentMode, ...editorContext() }),
      );
      const steps = result.plan.steps;
      stream.line(`Plan ${result.session_id}: ${result.plan.goal}`);
      steps.forEach((s, i) => stream.line(`  ${i + 1}. ${s.title}${s.files?.length ? ` (${s.files.join(", ")})` : ""}`));
      void vscode.window
        .showInformationMessage(`DeepSeek: plan ready, ${steps.length} step${steps.length === 1 ? "" : "s"}. Run them from the code lenses.`, "Open Plan")
        .then((c) => c && server.command(Commands.showPlan, { session_id: result.session_id }));
      return result;
    }),
    reg("hetun", "Hetun", async () => {
      const prompt = await vscode.window.showInputBox({ prompt: "DeepSeek Hetun: what should be researched and done?", ignoreFocusOut: true });
      if (!prompt) return undefined;
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "DeepSeek: researching (Hetun)…" },
        () => server.command<{ session_id: string; mission_uri?: string }>(Commands.plan, { prompt, mode: "hetun", ...editorContext() }),
      );
      if (result.mission_uri) {
        await vscode.window.showTextDocument(vscode.Uri.parse(result.mission_uri), { preview: false });
      }
      void vscode.window.showInformationMessage("DeepSeek: mission ready — Approve mission, Reject or Modify… from its lenses.");
      return result;
    }),
    reg("ask", "Ask", async () => {
      const prompt = await vscode.window.showInputBox({ prompt: "DeepSeek: ask about the code", ignoreFocusOut: true });
      if (!prompt) return undefined;
      stream.reveal();
      const result = await server.command<{ session_id: string; content: string }>(Commands.ask, { prompt, ...editorContext() });
      stream.finish(result.session_id, result.content);
      return result;
    }),
    reg("editSelection", "Edit Selection", () => editSelection(server, editSelectionUI, selectionTarget())),
    // The server says what it found (window/showMessage); the findings are in the Problems panel.
    reg("review", "Review Changes", () => reviewChanges(server, reviewUI)),
    reg("runCustomCommand", "Run Custom Command", async () => {
      const context = editorContext();
      stream.reveal();
      const result = await runCustomCommand(server, customCommandUI, context);
      if (result?.answer?.content) stream.finish(result.session_id, result.answer.content);
      return result;
    }),
    reg("acceptHunk", "Accept Hunk", async () => {
      const hunk = await hunkAtCursor(inlineDiff);
      if (!hunk) return undefined;
      const result = await server.command<{ applied: boolean; message?: string }>(Commands.acceptHunk, { patch_id: hunk.patch_id, hunk_id: hunk.hunk_id });
      if (!result.applied) void vscode.window.showWarningMessage(`DeepSeek: the hunk was not applied: ${result.message ?? "it conflicts with your edits"}.`);
      await inlineDiff.refresh(hunk.uri);
      return result;
    }),
    reg("rejectHunk", "Reject Hunk", async () => {
      const hunk = await hunkAtCursor(inlineDiff);
      if (!hunk) return undefined;
      const result = await server.command(Commands.rejectHunk, { patch_id: hunk.patch_id, hunk_id: hunk.hunk_id });
      await inlineDiff.refresh(hunk.uri);
      return result;
    }),
    reg("acceptAll", "Accept All", async () => {
      const result = await server.command(Commands.acceptAll, {});
      inlineDiff.refreshVisible();
      return result;
    }),
    reg("rejectAll", "Reject All", async () => {
      const result = await server.command(Commands.rejectAll, {});
      inlineDiff.refreshVisible();
      return result;
    }),
    reg("showPatchDiff", "Show Patch Diff", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) return void vscode.window.showInformationMessage("DeepSeek: open a file with staged hunks first.");
      return inlineDiff.showFileDiff(editor.document.uri);
    }),
    reg("approve", "Approve", () => approve(server, ui)),
    reg("deny", "Deny", () => deny(server, ui)),
    reg("showSessions", "Show Sessions", async () => {
      const picked = await pickSession(server, "DeepSeek sessions (pick one to resume)");
      return picked && server.command(Commands.resume, { session_id: picked.session_id });
    }),
    reg("resumeSession", "Resume Session", async () => {
      const picked = await pickSession(server, "Resume which session?");
      if (!picked) return undefined;
      const result = await server.command<{ state: string; state_label?: string }>(Commands.resume, { session_id: picked.session_id });
      void vscode.window.showInformationMessage(`DeepSeek: resumed session (${stateLabel(result)}).`);
      return result;
    }),
    reg("cancel", "Cancel", async () => {
      const result = await server.command<{ cancelled: boolean }>(Commands.cancel, {});
      void vscode.window.showInformationMessage(result.cancelled ? "DeepSeek: cancelled." : "DeepSeek: nothing was running.");
      return result;
    }),
    reg("compact", "Compact the Conversation", async () => {
      const focus = await vscode.window.showInputBox({ prompt: "DeepSeek: what should the summary keep? (optional)", ignoreFocusOut: true });
      if (focus === undefined) return undefined; // Esc: nothing asked
      const result = await server.command<{ message: string; context?: ContextMeter | null }>(Commands.compact, { focus });
      void vscode.window.showInformationMessage(`DeepSeek: ${result.message}${result.context ? ` (${result.context.text})` : ""}`);
      return result;
    }),
    reg("undo", "Undo Last Apply", async () => {
      const result = await server.command<{ restored: string[]; merged?: string[]; unsaved?: string[] }>(Commands.undo, {});
      void vscode.window.showInformationMessage(undoMessage(result));
      inlineDiff.refreshVisible();
      return result;
    }),
    reg("showEventLog", "Show Event Log", async () => {
      const sessionId = statusBar.status?.session_id ?? (await pickSession(server, "Show the event log of which session?"))?.session_id;
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      if (!sessionId || !root) return undefined;
      const file = findEventLog(root, sessionId);
      if (!file) throw new Error(`no events.jsonl for session ${sessionId} under ${root}/.deepseek`);
      return vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
    }),
    reg("explainRouting", "Explain Routing", async () => {
      const sessionId = statusBar.status?.session_id ?? undefined;
      // Without a session the server says there is nothing to explain yet.
      const d = await server.command<RoutingExplanation | null>(Commands.explainRouting, sessionId ? { session_id: sessionId } : {});
      if (!d) return void vscode.window.showInformationMessage("DeepSeek: no routing decision yet.");
      stream.line(`Routing ${d.decision_id}: ${d.text}`);
      for (const [signal, value] of Object.entries(d.contributions)) stream.line(`  ${signal}: ${value.toFixed(3)}`);
      stream.show();
      void vscode.window.showInformationMessage(`DeepSeek routing: ${d.text}`);
      return d;
    }),
    // The raw stream, on demand: plans and steps no longer open it (the agent panel shows the conversation).
    reg("showStreamOutput", "Show Stream Output", async () => stream.show()),
    reg("mcpServers", "MCP Servers", async () => {
      const status = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "DeepSeek: starting MCP servers…" },
        () => server.command<McpStatus>(Commands.mcpStatus, { start: true }),
      );
      for (const warning of status.warnings) stream.line(`MCP: ${warning}`);
      const items = mcpItems(status);
      if (!items.length) return void vscode.window.showInformationMessage("DeepSeek: no MCP servers configured ([mcp.servers.NAME] or .mcp.json).");
      const picked = await vscode.window.showQuickPick(items, { placeHolder: "DeepSeek MCP servers", matchOnDescription: true, matchOnDetail: true });
      return picked?.approve ? server.command(Commands.mcpApprove, {}) : status;
    }),
    reg("approveMcpServers", "Approve MCP Servers", async () => {
      // The server asks (window/showMessageRequest) with exactly what each server would run.
      const result = await server.command<{ approved: string[]; message: string }>(Commands.mcpApprove, {});
      void vscode.window.showInformationMessage(`DeepSeek: ${result.message}.`);
      return result;
    }),
    reg("trustWorkspace", "Trust Workspace", async () => {
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "this workspace";
      const answer = await vscode.window.showWarningMessage(
        `Trust ${root}? Its .deepseek/config.toml and your editor settings then apply in full (approval modes, ` +
          "allowlisted commands, the LLM endpoint…) and yolo mode may run. Trust it only if you wrote them.",
        { modal: true },
        "Trust",
      );
      if (answer !== "Trust") return undefined;
      const result = await server.command<{ workspace: string }>(Commands.trustWorkspace, {});
      void vscode.window.showInformationMessage(`DeepSeek: ${result.workspace} is trusted.`);
      return result;
    }),
    reg("untrustWorkspace", "Untrust Workspace", async () => {
      const result = await server.command<{ workspace: string; was_trusted: boolean }>(Commands.untrustWorkspace, {});
      void vscode.window.showInformationMessage(
        `DeepSeek: ${result.workspace} ${result.was_trusted ? "is no longer trusted" : "was not trusted"}.`,
      );
      return result;
    }),
    reg("toggleTeammateMode", "Toggle Teammate Mode", async () => {
      // The server says the new state (window/showMessage) and pushes deepseek/status.
      return server.command<{ teammate_mode: boolean }>(Commands.toggleTeammateMode, {});
    }),
    reg("setApiKey", "Set API Key", async () => {
      const value = await vscode.window.showInputBox({ prompt: "DeepSeek API key (kept in VS Code's secret storage)", password: true, ignoreFocusOut: true });
      if (!value) return undefined;
      await context.secrets.store(SECRET_KEY, value.trim());
      return server.restart();
    }),
    reg("restartServer", "Restart Server", async () => {
      inlineDiff.clear();
      const ok = await server.restart();
      if (ok) void vscode.window.showInformationMessage("DeepSeek: language server restarted.");
      return ok;
    }),
  ];
}

/** After start: when the server holds settings back because the workspace is not trusted, say so
 * once with a way to trust it (the server's own warning names them too). */
export async function offerTrust(server: ServerManager): Promise<void> {
  const status = await server.command<TrustStatus>(Commands.trustStatus, {});
  const hint = trustHint(status);
  if (!hint) return;
  const picked = await vscode.window.showWarningMessage(hint, "Trust Workspace…", "Not now");
  if (picked === "Trust Workspace…") await vscode.commands.executeCommand("deepseek-ls.trustWorkspace");
}

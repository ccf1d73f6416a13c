/**
 * Entry point: wires the server, the status bar, the stream panel, the inline
 * diff and the palette commands together. Each lives in its own module.
 */
import * as vscode from "vscode";
import { onAttention, type AttentionUI } from "./attention";
import { offerTrust, registerCommands } from "./commands";
import { InlineDiff } from "./inlineDiff";
import { AgentPanel, PANEL_VIEW_ID } from "./panel/agentPanel";
import { registerPanelCommands } from "./panel/panelCommands";
import { Notifications, Requests, type Attention, type Question, type Status, type StreamParams } from "./protocol";
import { answerQuestion, type QuestionUI } from "./questions";
import { ServerManager, currentSettings } from "./server";
import { SECTION, needsRestart } from "./settings";
import { StatusBar } from "./statusBar";
import { ResearchTree } from "./research";
import { StreamPanel } from "./streamPanel";

let server: ServerManager | undefined;

const questionUI: QuestionUI = {
  input: async (prompt, title) => vscode.window.showInputBox({ prompt, title, ignoreFocusOut: true }),
  pick: async (choices, placeholder) => vscode.window.showQuickPick(choices, { placeHolder: placeholder, ignoreFocusOut: true }),
  error: (message) => void vscode.window.showErrorMessage(message),
};

function forcedProfile(): string {
  const mode = currentSettings().routerMode;
  return mode === "auto" ? "" : mode;
}

export interface ExtensionApi {
  server: ServerManager;
}

export async function activate(context: vscode.ExtensionContext): Promise<ExtensionApi> {
  const output = vscode.window.createOutputChannel("DeepSeek");
  const trace = vscode.window.createOutputChannel("DeepSeek (LSP trace)");
  const streamChannel = vscode.window.createOutputChannel("DeepSeek Stream");
  const item = vscode.window.createStatusBarItem("deepseek.status", vscode.StatusBarAlignment.Left, 50);
  item.name = "DeepSeek";
  const statusBar = new StatusBar(item, new vscode.ThemeColor("statusBarItem.warningBackground"), "deepseek-ls.explainRouting");

  server = new ServerManager(context.secrets, output, trace);
  const inlineDiff = new InlineDiff(server, (line) => output.appendLine(line));
  const research = new ResearchTree(server, (line) => output.appendLine(line));
  const panel = new AgentPanel(context.extensionUri, server, inlineDiff);
  const stream = new StreamPanel(streamChannel, () => panel.visible);
  const attentionUI: AttentionUI = {
    focused: () => vscode.window.state.focused,
    panelVisible: () => panel.visible,
    setBadge: (count) => panel.setBadge(count),
    show: (message, action) => vscode.window.showInformationMessage(message, action),
    openPanel: () => void vscode.commands.executeCommand("deepseek-ls.openPanel"),
  };

  context.subscriptions.push(
    output,
    trace,
    streamChannel,
    item,
    inlineDiff,
    research,
    vscode.window.registerTreeDataProvider("deepseek.research", research),
    server,
    panel,
    vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, panel),
    server.onStateChanged((state) => {
      statusBar.setServerState(state);
      panel.setServerState(state);
      if (state !== "running" && state !== "starting") inlineDiff.clear(); // hunks belong to the server that staged them
    }),
    server.onStarted((client) => {
      client.onNotification(Notifications.stream, (p: StreamParams) => {
        stream.onStream(p);
        panel.onStream(p);
      });
      client.onNotification(Notifications.status, (s: Status) => {
        statusBar.setStatus(s);
        void research.refresh(s.session_id);
        panel.onStatus(s);
      });
      client.onNotification(Notifications.hunksChanged, (p: { uris: string[] }) => {
        inlineDiff.refreshMany(p.uris);
        panel.onHunksChanged();
      });
      client.onNotification(Notifications.question, (q: Question) => {
        if (server) void answerQuestion(server, questionUI, q);
      });
      client.onNotification(Notifications.attention, (a: Attention) => void onAttention(attentionUI, a));
      client
        .sendRequest<Status>(Requests.status, {})
        .then((s) => {
          if (!s) return;
          statusBar.setStatus(s);
          panel.onStatus(s);
        })
        .catch((error) => output.appendLine(`DeepSeek: deepseek/status failed: ${String(error)}`));
      inlineDiff.refreshVisible();
      if (server) void offerTrust(server).catch((error) => output.appendLine(`DeepSeek: trust status failed: ${String(error)}`));
    }),
    // Trusting the workspace may make its .venv's server the one to run (and
    // restricted settings apply): start again unless a server is running.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (server && !server.running) void server.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      const applied = needsRestart((key) => e.affectsConfiguration(key)) ? server?.restart() : server?.pushSettings();
      // The status bar shows the new router mode once the server has been told.
      void Promise.resolve(applied).finally(() => {
        statusBar.setForcedProfile(forcedProfile());
        panel.onSettingsChanged();
      });
    }),
    ...registerCommands({ context, server, inlineDiff, statusBar, stream }),
    ...registerPanelCommands(panel, server),
  );

  statusBar.setForcedProfile(forcedProfile());
  await server.start();
  return { server };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}

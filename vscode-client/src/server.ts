/**
 * Starting, stopping and restarting the `deepseek-ls` language server
 * (vscode-languageclient over stdio). Finding the command is in
 * `serverCommand.ts`; the API key and process environment in `secrets.ts`.
 */
import * as fs from "fs";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LSPErrorCodes,
  LanguageClient,
  ResponseError,
  State,
  Trace,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { encodingProblem } from "./positions";
import type { ServerApi } from "./protocol";
import { declareAttention } from "./attention";
import { declareQuestions } from "./questions";
import { findApiKey, serverEnvironment, type SecretStore } from "./secrets";
import { missingCommandMessage, notFoundMessage, resolveServerCommand, startFailedMessage, type ServerCommand } from "./serverCommand";
import { SECTION, initializationOptions, readSettings, type Settings } from "./settings";
import type { ServerState } from "./statusBar";

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, process.platform === "win32" ? fs.constants.F_OK : fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function traceLevel(settings: Settings): Trace {
  return settings.trace === "verbose" ? Trace.Verbose : settings.trace === "messages" ? Trace.Messages : Trace.Off;
}

export function currentSettings(): Settings {
  return readSettings(vscode.workspace.getConfiguration(SECTION));
}

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/** The server's RequestFailed code: it has already shown the message (`window/showMessage`). */
const REQUEST_FAILED = -32803;

/** A command that was cancelled (deepseek.cancel, $/cancelRequest): the person asked for it. */
export class CommandCancelled extends Error {}

/** A request the person (or the server, for them) cancelled, however the client reports it. */
function isCancellation(error: unknown): boolean {
  if (error instanceof vscode.CancellationError) return true;
  return error instanceof ResponseError
    && (error.code === LSPErrorCodes.RequestCancelled || error.code === LSPErrorCodes.ServerCancelled);
}

/** A command the server refused or failed, and already told the person about. */
export class CommandFailed extends Error {}

/** Owns the LanguageClient; `onStarted` listeners (re)attach their notification handlers. */
export class ServerManager implements ServerApi, vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly started = new vscode.EventEmitter<LanguageClient>();
  private readonly stateChanged = new vscode.EventEmitter<ServerState>();
  readonly onStarted = this.started.event;
  readonly onStateChanged = this.stateChanged.event;
  lastCommand: ServerCommand | undefined;

  constructor(
    private readonly secrets: SecretStore,
    private readonly output: vscode.OutputChannel,
    private readonly trace: vscode.OutputChannel,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<boolean> {
    const settings = currentSettings();
    const lookup = { isExecutable, env: process.env, platform: process.platform };
    const trusted = vscode.workspace.isTrusted;
    const cmd = resolveServerCommand(settings, workspaceFolders(), lookup, trusted);
    if (!cmd) {
      this.fail(notFoundMessage(trusted));
      return false;
    }
    const missing = missingCommandMessage(cmd, lookup);
    if (missing) {
      this.fail(missing);
      return false;
    }
    this.lastCommand = cmd;
    const key = await findApiKey(process.env, this.secrets);
    const { env, warnings } = serverEnvironment(process.env, settings.serverEnv, key, settings.baseUrl);
    for (const w of warnings) void vscode.window.showWarningMessage(w);
    if (!key) {
      this.output.appendLine(
        "DeepSeek: no API key (set DEEPSEEK_API_KEY or run `DeepSeek: Set API Key`); model calls will fail until one is set.",
      );
    }
    const cwd = workspaceFolders()[0];
    const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env, cwd } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      initializationOptions: initializationOptions(settings),
      outputChannel: this.output,
      traceOutputChannel: this.trace,
      middleware: {
        // A server command run from a code lens or the palette that the person cancelled answers
        // RequestCancelled; vscode-languageclient turns that into a CancellationError, which VS Code
        // shows as a bare "Canceled" error toast beside the server's own "DeepSeek: cancelled.".
        // A cancel is not a failure: logged, not shown.
        executeCommand: async (command, args, next) => {
          try {
            return await next(command, args);
          } catch (error) {
            if (!isCancellation(error)) throw error;
            this.output.appendLine(`DeepSeek: ${command} cancelled`);
            return undefined;
          }
        },
      },
    };
    this.output.appendLine(`DeepSeek: starting ${[cmd.command, ...cmd.args].join(" ")} (from ${cmd.source})`);
    this.stateChanged.fire("starting");
    const client = new LanguageClient("deepseek-ls", "DeepSeek", serverOptions, clientOptions);
    // Inline completion (LSP 3.18) is a proposed feature in vscode-languageclient 9: ghost text from
    // the server's fill-in-the-middle suggestions (docs/inline-completion.md). VS Code's own
    // `editor.inlineSuggest.enabled` switches it, the server's `inline_completion.enabled` too.
    client.registerProposedFeatures();
    // extension.ts answers deepseek/question with an input box: say so in the capabilities.
    client.registerFeature({
      fillClientCapabilities: (capabilities) => {
        declareQuestions(capabilities);
        declareAttention(capabilities);
      },
      initialize: () => undefined,
      getState: () => ({ kind: "static" }),
      clear: () => undefined,
    });
    this.client = client;
    try {
      await client.start();
      await client.setTrace(traceLevel(settings));
    } catch (error) {
      this.client = undefined;
      try {
        await client.dispose();
      } catch {
        // the process is already gone; nothing left to release
      }
      this.fail(startFailedMessage(cmd, error));
      return false;
    }
    const encodingError = encodingProblem(client.initializeResult?.capabilities.positionEncoding);
    if (encodingError) {
      this.client = undefined;
      await client.stop().catch(() => undefined);
      this.fail(encodingError);
      return false;
    }
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) this.stateChanged.fire("stopped");
      if (e.newState === State.Running && this.client === client) this.stateChanged.fire("running");
    });
    this.stateChanged.fire("running");
    this.started.fire(client);
    return true;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`DeepSeek: stopping the server: ${String(error)}`);
      }
      this.stateChanged.fire("stopped");
    }
  }

  async restart(): Promise<boolean> {
    await this.stop();
    return this.start();
  }

  /** Push the current settings to a running server (`workspace/didChangeConfiguration`). */
  async pushSettings(): Promise<void> {
    if (!this.client || !this.running) return;
    const settings = currentSettings();
    await this.client.setTrace(traceLevel(settings));
    const overrides = initializationOptions(settings);
    this.output.appendLine(`DeepSeek: settings changed; sending ${JSON.stringify(overrides)}`);
    await this.client.sendNotification("workspace/didChangeConfiguration", { settings: { [SECTION]: overrides } });
  }

  private fail(message: string): void {
    this.output.appendLine(message);
    this.stateChanged.fire("failed");
    void vscode.window.showErrorMessage(message, "Open Settings", "Show Log").then((choice) => {
      if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "deepseek.server");
      if (choice === "Show Log") this.output.show();
    });
  }

  private requireClient(): LanguageClient {
    if (!this.client || !this.running) {
      throw new Error("the DeepSeek language server is not running; run `DeepSeek: Restart Server`");
    }
    return this.client;
  }

  async command<T = unknown>(name: string, arg: object): Promise<T> {
    const client = this.requireClient();
    try {
      return (await client.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: [arg] })) as T;
    } catch (error) {
      if (error instanceof ResponseError && error.code === REQUEST_FAILED) throw new CommandFailed(error.message);
      if (isCancellation(error)) throw new CommandCancelled(error instanceof Error ? error.message : String(error));
      throw error;
    }
  }

  /** A line in the "DeepSeek" output channel. */
  log(line: string): void {
    this.output.appendLine(line);
  }

  async request<T = unknown>(method: string, params: object): Promise<T> {
    return this.requireClient().sendRequest<T>(method, params);
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.started.dispose();
    this.stateChanged.dispose();
  }
}

/**
 * Staged hunks in the editor: the lines a pending hunk replaces are shown as
 * removed and its new text as ghost text (all of it in the hover), refreshed
 * on `deepseek/hunksChanged`, on edits and when editors change. The server's
 * code lenses carry Accept / Reject. `showFileDiff` opens the native diff
 * editor with every pending hunk of the file applied.
 */
import * as vscode from "vscode";
import { decorationPlan, applyHunks } from "./hunks";
import { Requests, type Hunk, type HunksResult, type ServerApi } from "./protocol";

export const PATCHED_SCHEME = "deepseek-patched";
const REFRESH_DELAY_MS = 250;

export class InlineDiff implements vscode.Disposable {
  private readonly removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.removedLineBackground"),
    textDecoration: "line-through",
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly added = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly addedText: vscode.ThemableDecorationAttachmentRenderOptions = {
    color: new vscode.ThemeColor("gitDecoration.addedResourceForeground"),
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
    fontStyle: "italic",
  };
  private readonly cache = new Map<string, Hunk[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly patched = new vscode.EventEmitter<vscode.Uri>();

  constructor(private readonly api: ServerApi & { running: boolean }, private readonly log: (line: string) => void) {
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.refreshVisible()),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document.uri.toString())),
      vscode.workspace.registerTextDocumentContentProvider(PATCHED_SCHEME, {
        onDidChange: this.patched.event,
        provideTextDocumentContent: (uri) => this.patchedText(uri),
      }),
    );
  }

  /** Hunks of `uri` from the last refresh (pending and decided). */
  hunks(uri: string): Hunk[] {
    return this.cache.get(uri) ?? [];
  }

  /** Ask the server for the hunks of `uri` now and redraw its editors. */
  async refresh(uri: string): Promise<Hunk[]> {
    if (!this.api.running) return [];
    let hunks: Hunk[] = [];
    try {
      const result = await this.api.request<HunksResult | null>(Requests.hunks, { uri });
      hunks = result?.hunks ?? [];
    } catch (error) {
      this.log(`DeepSeek: could not read the staged hunks of ${uri}: ${String(error)}`);
    }
    this.cache.set(uri, hunks);
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.toString() === uri) this.render(editor, hunks);
    }
    this.patched.fire(vscode.Uri.parse(uri).with({ scheme: PATCHED_SCHEME }));
    this.updateContext();
    return hunks;
  }

  refreshVisible(): void {
    // Only files have staged hunks (not output channels, diff sides or untitled buffers).
    const uris = new Set(
      vscode.window.visibleTextEditors.filter((e) => e.document.uri.scheme === "file").map((e) => e.document.uri.toString()),
    );
    for (const uri of uris) void this.refresh(uri);
  }

  refreshMany(uris: string[]): void {
    for (const uri of uris) void this.refresh(uri);
  }

  /** `deepseek.hunksPending`: the active file has pending hunks (editor title and context menus). */
  private updateContext(): void {
    const uri = vscode.window.activeTextEditor?.document.uri.toString();
    const pendingHere = uri !== undefined && this.hunks(uri).some((h) => h.status === "pending");
    void vscode.commands.executeCommand("setContext", "deepseek.hunksPending", pendingHere);
  }

  clear(): void {
    this.cache.clear();
    this.updateContext();
    for (const editor of vscode.window.visibleTextEditors) this.render(editor, []);
  }

  /** Open the native diff editor: the file as it is vs with every pending hunk accepted. */
  async showFileDiff(uri: vscode.Uri): Promise<void> {
    const hunks = await this.refresh(uri.toString());
    if (!hunks.some((h) => h.status === "pending")) {
      void vscode.window.showInformationMessage(`DeepSeek: no pending hunks in ${vscode.workspace.asRelativePath(uri)}.`);
      return;
    }
    const title = `${vscode.workspace.asRelativePath(uri)} ↔ DeepSeek patch`;
    await vscode.commands.executeCommand("vscode.diff", uri, uri.with({ scheme: PATCHED_SCHEME }), title);
  }

  private async patchedText(uri: vscode.Uri): Promise<string> {
    const fileUri = uri.with({ scheme: "file" });
    const doc = await vscode.workspace.openTextDocument(fileUri);
    return applyHunks(doc.getText(), this.hunks(fileUri.toString()));
  }

  private schedule(uri: string): void {
    if (!this.cache.has(uri)) return;
    clearTimeout(this.timers.get(uri));
    this.timers.set(uri, setTimeout(() => void this.refresh(uri), REFRESH_DELAY_MS));
  }

  private render(editor: vscode.TextEditor, hunks: Hunk[]): void {
    const plan = decorationPlan(hunks);
    const lineCount = editor.document.lineCount;
    const inDoc = (line: number) => Math.max(0, Math.min(line, lineCount - 1));
    editor.setDecorations(
      this.removed,
      plan.removed.map((m) => ({ range: editor.document.lineAt(inDoc(m.line)).range, hoverMessage: "DeepSeek: removed by the staged hunk" })),
    );
    editor.setDecorations(
      this.added,
      plan.added.map((m) => {
        const hover = new vscode.MarkdownString();
        hover.appendMarkdown("**DeepSeek: added by the staged hunk**\n");
        hover.appendCodeblock(m.added.join("\n"), editor.document.languageId);
        const range = editor.document.lineAt(inDoc(m.line)).range;
        return {
          range,
          hoverMessage: hover,
          renderOptions: { [m.position]: { ...this.addedText, contentText: m.text } },
        };
      }),
    );
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
    this.removed.dispose();
    this.added.dispose();
    this.patched.dispose();
  }
}

/**
 * The current file's diagnostics as the editor context of Ask / Plan / Run: the server puts them in
 * the prompt (`deepseek.ask` / `deepseek.plan` `diagnostics`, docs/protocol.md). Bounded here (count
 * and message size) so a file with thousands of warnings does not make a huge request; our own
 * diagnostics (pending hunks, review findings) are left out. No `vscode` import: unit-tested.
 */

export const MAX_DIAGNOSTICS = 20;
export const MAX_MESSAGE = 500;
const OURS = new Set(["deepseek", "deepseek-review"]);

interface Position {
  line: number;
  character: number;
}

/** What this needs of a `vscode.Diagnostic` (its severity is 0 = Error .. 3 = Hint). */
export interface EditorDiagnostic {
  range: { start: Position; end: Position };
  message: string;
  severity: number;
  source?: string;
  code?: string | number | { value: string | number };
}

/** An LSP `Diagnostic` (severity 1 = Error .. 4 = Hint), as the server reads it. */
export interface LspDiagnostic {
  range: { start: Position; end: Position };
  message: string;
  severity: number;
  source?: string;
  code?: string | number;
}

function cut(text: string): string {
  return text.length <= MAX_MESSAGE ? text : `${text.slice(0, MAX_MESSAGE - 1)}…`;
}

/** The most severe first (then by line), at most MAX_DIAGNOSTICS, messages cut to MAX_MESSAGE. */
export function diagnosticsContext(diagnostics: readonly EditorDiagnostic[]): LspDiagnostic[] {
  return diagnostics
    .filter((d) => !OURS.has(d.source ?? ""))
    .slice()
    .sort((a, b) => a.severity - b.severity || a.range.start.line - b.range.start.line)
    .slice(0, MAX_DIAGNOSTICS)
    .map((d) => {
      const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
      return {
        range: { start: { line: d.range.start.line, character: d.range.start.character }, end: { line: d.range.end.line, character: d.range.end.character } },
        message: cut(d.message),
        severity: d.severity + 1,
        ...(d.source ? { source: d.source } : {}),
        ...(code !== undefined && code !== "" ? { code } : {}),
      };
    });
}

/**
 * LSP positions in this extension. VS Code (and vscode-languageclient, which
 * converts every position the server sends) counts columns in UTF-16 code
 * units, like JavaScript strings, and offers no other position encoding, so
 * the server must answer `positionEncoding: "utf-16"` (or nothing, meaning
 * utf-16). Any position math of ours goes through `offsetAt`.
 */
import type { LspPosition } from "./protocol";

export const CLIENT_ENCODING = "utf-16";

/** What to tell the person when the server chose another encoding (else undefined). */
export function encodingProblem(negotiated: string | undefined): string | undefined {
  if (negotiated === undefined || negotiated === CLIENT_ENCODING) return undefined;
  return (
    `DeepSeek: the server chose the position encoding "${negotiated}", but VS Code only speaks ${CLIENT_ENCODING}; ` +
    "edits would land in the wrong columns, so the server was stopped. Update deepseek-ls."
  );
}

/** Offset of an LSP position (UTF-16 code units, like JS strings) in `text`; a column past the end of its line is the line's end. */
export function offsetAt(text: string, pos: LspPosition): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const nl = text.indexOf("\n", offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  const end = lineEnd < 0 ? text.length : lineEnd;
  return Math.min(offset + pos.character, end);
}

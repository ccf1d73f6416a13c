import assert from "node:assert/strict";
import { test } from "node:test";
import { diagnosticsContext, MAX_DIAGNOSTICS, MAX_MESSAGE, type EditorDiagnostic } from "../src/diagnosticsContext";

function at(line: number, message: string, severity: number, extra: Partial<EditorDiagnostic> = {}): EditorDiagnostic {
  return { range: { start: { line, character: 2 }, end: { line, character: 7 } }, message, severity, ...extra };
}

test("the file's diagnostics go as LSP diagnostics: severity 1-4, the code's value, the source", () => {
  const sent = diagnosticsContext([
    at(9, "unused import", 1, { source: "Pylance", code: { value: "reportUnusedImport" } }),
    at(5, "Operator \"-\" not supported", 0, { source: "Pyright", code: 42 }),
  ]);
  assert.deepEqual(sent, [
    { range: { start: { line: 5, character: 2 }, end: { line: 5, character: 7 } }, message: "Operator \"-\" not supported", severity: 1, source: "Pyright", code: 42 },
    { range: { start: { line: 9, character: 2 }, end: { line: 9, character: 7 } }, message: "unused import", severity: 2, source: "Pylance", code: "reportUnusedImport" },
  ]);
});

test("bounded: the most severe first, at most MAX_DIAGNOSTICS, long messages cut", () => {
  const many = Array.from({ length: 100 }, (_, i) => at(i, `hint ${i}`, 3));
  many.push(at(99, "x".repeat(5000), 0));
  const sent = diagnosticsContext(many);
  assert.equal(sent.length, MAX_DIAGNOSTICS);
  assert.equal(sent[0].severity, 1);
  assert.equal(sent[0].message.length, MAX_MESSAGE);
  assert.ok(sent[0].message.endsWith("…"));
  assert.deepEqual(sent.slice(1).map((d) => d.message), Array.from({ length: MAX_DIAGNOSTICS - 1 }, (_, i) => `hint ${i}`));
});

test("our own diagnostics (pending hunks, review findings) are not sent back", () => {
  const sent = diagnosticsContext([
    at(1, "DeepSeek proposes a change", 2, { source: "deepseek" }),
    at(2, "add subtracts", 0, { source: "deepseek-review" }),
    at(3, "real", 0, { source: "tsc" }),
  ]);
  assert.deepEqual(sent.map((d) => d.message), ["real"]);
});

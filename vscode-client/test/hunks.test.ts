import assert from "node:assert/strict";
import { test } from "node:test";
import { applyHunks, decorationPlan, hunkAtLine, replacedLines, textLines, undoMessage } from "../src/hunks";
import { offsetAt } from "../src/positions";
import type { Hunk } from "../src/protocol";

function hunk(id: string, start: number, end: number, newText: string, status: Hunk["status"] = "pending", oldText = ""): Hunk {
  return {
    patch_id: "p1",
    hunk_id: id,
    uri: "file:///ws/app.py",
    range: { start: { line: start, character: 0 }, end: { line: end, character: 0 } },
    old_text: oldText,
    new_text: newText,
    added: [],
    removed_at: start,
    status,
  };
}

const FILE = "def a():\n    return 1\n\n\ndef b():\n    return 2\n";

test("replaced lines exclude the line an end-of-line range stops at", () => {
  assert.deepEqual(replacedLines(hunk("h", 1, 2, "")), [1]);
  assert.deepEqual(replacedLines(hunk("h", 3, 3, "x\n")), []);
});

test("textLines drops the trailing newline only", () => {
  assert.deepEqual(textLines("a\nb\n"), ["a", "b"]);
  assert.deepEqual(textLines("a\r\n\n"), ["a", ""]);
  assert.deepEqual(textLines(""), []);
});

test("the hunk under the cursor is chosen, else the nearest pending one", () => {
  const hunks = [hunk("h1", 1, 2, "    return 10\n"), hunk("h2", 5, 6, "    return 20\n"), hunk("h3", 3, 4, "", "accepted")];
  assert.equal(hunkAtLine(hunks, 1)?.hunk_id, "h1");
  assert.equal(hunkAtLine(hunks, 5)?.hunk_id, "h2");
  assert.equal(hunkAtLine(hunks, 0)?.hunk_id, "h1");
  assert.equal(hunkAtLine(hunks, 4)?.hunk_id, "h2", "line 4 is nearer h2 (1) than h1 (3); h3 is not pending");
  assert.equal(hunkAtLine([hunk("h", 1, 2, "", "rejected")], 1), undefined);
});

test("decorations mark only changed lines, context lines stay unmarked", () => {
  const h = hunk("h1", 0, 2, "def add(a, b):\n    return int(a) + int(b)\n    # checked\n", "pending", "def add(a, b):\n    return a + b\n");
  const plan = decorationPlan([h, hunk("h2", 5, 6, "x\n", "accepted", "y\n")]);
  assert.deepEqual(plan.removed, [{ line: 1, hunkId: "h1" }]);
  assert.equal(plan.added.length, 1);
  assert.deepEqual([plan.added[0].line, plan.added[0].position], [1, "after"]);
  assert.equal(plan.added[0].text, "  + return int(a) + int(b)  (+1 more line)");
  assert.deepEqual(plan.added[0].added, ["    return int(a) + int(b)", "    # checked"]);
});

test("separate runs of added lines get their own ghost text", () => {
  const h = hunk("h", 10, 13, "a\nA\nb\nB\nc\n", "pending", "a\nb\nc\n");
  const plan = decorationPlan([h]);
  assert.deepEqual(plan.removed, []);
  assert.deepEqual(plan.added.map((a) => [a.line, a.added]), [[10, ["A"]], [11, ["B"]]]);
});

test("an insertion at the top of the file hangs before line 0", () => {
  const plan = decorationPlan([hunk("h0", 0, 1, "#!/usr/bin/env python\nimport os\n", "pending", "import os\n")]);
  assert.deepEqual(plan.added.map((a) => [a.hunkId, a.line, a.position]), [["h0", 0, "before"]]);
});

test("a pure deletion marks its lines and adds nothing", () => {
  const plan = decorationPlan([hunk("h", 4, 7, "keep\n", "pending", "keep\ndrop 1\ndrop 2\n")]);
  assert.deepEqual(plan.removed.map((r) => r.line), [5, 6]);
  assert.deepEqual(plan.added, []);
});

test("offsets follow LSP positions and clamp to the line end", () => {
  assert.equal(offsetAt(FILE, { line: 1, character: 4 }), 13);
  assert.equal(offsetAt(FILE, { line: 0, character: 99 }), 8);
  assert.equal(offsetAt(FILE, { line: 99, character: 0 }), FILE.length);
});

test("applying every pending hunk gives the patched file", () => {
  const hunks = [hunk("h1", 1, 2, "    return 10\n"), hunk("h2", 5, 6, "    return 20\n"), hunk("h3", 0, 0, "# x\n", "rejected")];
  assert.equal(applyHunks(FILE, hunks), "def a():\n    return 10\n\n\ndef b():\n    return 20\n");
  assert.equal(applyHunks(FILE, []), FILE);
});

test("the undo message names restored files, those whose later edits were kept, and those left unsaved", () => {
  assert.equal(undoMessage({ restored: [] }), "DeepSeek: nothing to undo.");
  assert.equal(undoMessage({ restored: ["notes.txt"], merged: [], unsaved: [] }), "DeepSeek: restored notes.txt.");
  assert.equal(
    undoMessage({ restored: ["app.py", "notes.txt"], merged: ["app.py"], unsaved: ["app.py"] }),
    "DeepSeek: restored app.py, notes.txt; your edits since were kept in app.py; unsaved in the editor: app.py (save to write).",
  );
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { encodingProblem, offsetAt } from "../src/positions";

test("utf-16 (or no answer, which means utf-16) is the encoding VS Code speaks", () => {
  assert.equal(encodingProblem(undefined), undefined);
  assert.equal(encodingProblem("utf-16"), undefined);
});

test("a server that chose another encoding is reported with what to do", () => {
  for (const other of ["utf-8", "utf-32"]) {
    const message = encodingProblem(other);
    assert.ok(message?.includes(`"${other}"`) && message.includes("utf-16"), message);
  }
});

test("columns count UTF-16 code units: an emoji is two, CJK one", () => {
  const text = "a😀b中c\nend 🎉";
  assert.equal(offsetAt(text, { line: 0, character: 3 }), text.indexOf("b"));
  assert.equal(offsetAt(text, { line: 0, character: 5 }), text.indexOf("c"));
  assert.equal(offsetAt(text, { line: 1, character: 6 }), text.length); // end of a last line without newline
  assert.equal(offsetAt(text, { line: 0, character: 99 }), text.indexOf("\n"));
});

import assert from "node:assert/strict";
import { test } from "node:test";
import { editSelection, type EditSelectionUI, type SelectionTarget } from "../src/editSelection";
import type { ServerApi } from "../src/protocol";

const TARGET: SelectionTarget = {
  uri: "file:///w/app.py",
  range: { start: { line: 4, character: 0 }, end: { line: 6, character: 3 } },
};

/** The server: answers `deepseek.edit` with a staged step (or `ran: false`); records each call. */
function fakeServer(ran = true) {
  const calls: [string, object][] = [];
  const api: ServerApi = {
    request: async () => {
      throw new Error("no request expected");
    },
    command: async <T>(name: string, arg: object) => {
      calls.push([name, arg]);
      return { session_id: "s1", ran, ...(ran ? { step: { status: "staged", patch_ids: ["p1"] } } : { answer: "deny" }) } as T;
    },
  };
  return { api, calls };
}

/** The editor: types `typed` into the input box (undefined: Escape). */
function fakeUI(typed: string | undefined) {
  const seen = { inputs: [] as string[], info: [] as string[] };
  const ui: EditSelectionUI = {
    input: async (prompt) => {
      seen.inputs.push(prompt);
      return typed;
    },
    info: (message) => void seen.info.push(message),
  };
  return { ui, seen };
}

test("the typed instruction goes to deepseek.edit with the selection's file and range", async () => {
  const { api, calls } = fakeServer();
  const { ui, seen } = fakeUI("  handle an empty list ");
  const result = await editSelection(api, ui, TARGET);
  assert.equal(result?.ran, true);
  assert.deepEqual(calls, [["deepseek.edit", { ...TARGET, instruction: "handle an empty list" }]]);
  assert.equal(seen.inputs.length, 1);
  assert.ok(seen.info[0].includes("Accept or Reject"));
});

test("Escape, an empty instruction or no file sends nothing; a plan not run adds no message of ours", async () => {
  for (const typed of [undefined, "", "   "]) {
    const { api, calls } = fakeServer();
    assert.equal(await editSelection(api, fakeUI(typed).ui, TARGET), undefined);
    assert.deepEqual(calls, []);
  }
  const none = fakeServer();
  const { ui, seen } = fakeUI("x");
  assert.equal(await editSelection(none.api, ui, undefined), undefined);
  assert.deepEqual(none.calls, []);
  assert.deepEqual(seen.inputs, []);
  assert.ok(seen.info[0].includes("select the code"));
  const refused = fakeServer(false);
  const quiet = fakeUI("x");
  assert.equal((await editSelection(refused.api, quiet.ui, TARGET))?.ran, false);
  assert.deepEqual(quiet.seen.info, []); // the server said why it did not run
});

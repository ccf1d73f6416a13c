import assert from "node:assert/strict";
import { test } from "node:test";
import { declareAttention, onAttention, OPEN_PANEL, panelBadge, type AttentionUI } from "../src/attention";
import { Experimental, type Attention } from "../src/protocol";

function fakeUI(focused: boolean, visible: boolean, choose?: string) {
  const said: string[] = [];
  const badges: number[] = [];
  let opened = 0;
  const ui: AttentionUI = {
    focused: () => focused,
    panelVisible: () => visible,
    setBadge: (n) => void badges.push(n),
    show: async (message, action) => (said.push(`${message} [${action}]`), choose),
    openPanel: () => void opened++,
  };
  return { ui, said, badges, opened: () => opened };
}

const wait: Attention = {
  kind: "waiting", session_id: "s1", title: "deepseek-ls needs your approval",
  message: "waits for your approval: Run `make test`", pending: 1,
};

test("a wait in an unfocused window is a notification whose action opens the panel, and a badge", async () => {
  const f = fakeUI(false, true, OPEN_PANEL);
  await onAttention(f.ui, wait);
  assert.deepEqual(f.said, ["DeepSeek waits for your approval: Run `make test` [Open panel]"]);
  assert.deepEqual(f.badges, [1]);
  assert.equal(f.opened(), 1);
});

test("the badge goes back to nothing once the wait is answered, without a notification", async () => {
  const f = fakeUI(false, false);
  await onAttention(f.ui, wait);
  await onAttention(f.ui, { ...wait, kind: "answered", message: "answered", pending: 0 });
  assert.deepEqual(f.badges, [1, 0]);
  assert.equal(f.said.length, 1);
  assert.equal(f.opened(), 0); // dismissed: nothing opened
});

test("nothing pops up while the person looks at the panel in a focused window", async () => {
  const f = fakeUI(true, true);
  await onAttention(f.ui, { ...wait, kind: "finished", message: "finished (Completed)", pending: 0 });
  assert.deepEqual(f.said, []);
  assert.deepEqual(f.badges, [0]);
});

test("a finish with the panel hidden is said even in a focused window", async () => {
  const f = fakeUI(true, false);
  await onAttention(f.ui, { ...wait, kind: "finished", message: "stopped (Failed): the model refused", pending: 0 });
  assert.deepEqual(f.said, ["DeepSeek stopped (Failed): the model refused [Open panel]"]);
});

test("a malformed count shows no badge", async () => {
  const f = fakeUI(true, true);
  await onAttention(f.ui, { ...wait, pending: -3 });
  await onAttention(f.ui, { ...wait, pending: 1.5 });
  assert.deepEqual(f.badges, [0, 0]);
});

test("the capability is declared beside what is there", () => {
  const caps: { experimental?: unknown } = { experimental: { deepseekQuestions: true } };
  declareAttention(caps);
  assert.deepEqual(caps.experimental, { deepseekQuestions: true, [Experimental.attention]: true });
});

test("the panel's badge counts what waits and the pending changes together, and is cleared by a value of 0", () => {
  assert.deepEqual(panelBadge(1, 0), { value: 1, tooltip: "1 waiting for you" });
  assert.deepEqual(panelBadge(1, 2), { value: 3, tooltip: "1 waiting for you · 2 pending changes to review" });
  assert.deepEqual(panelBadge(0, 1), { value: 1, tooltip: "1 pending change to review" });
  assert.deepEqual(panelBadge(0, 0), { value: 0, tooltip: "" });
  assert.deepEqual(panelBadge(-1, Number.NaN), { value: 0, tooltip: "" });
});

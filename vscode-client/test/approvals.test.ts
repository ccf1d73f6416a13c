import assert from "node:assert/strict";
import { test } from "node:test";
import { approvalItem, approve, deny, type ApprovalUI } from "../src/approvals";
import type { ApprovalRequest, ServerApi } from "../src/protocol";

const bash: ApprovalRequest = { request_id: "r1", kind: "bash.run", title: "verify", detail: "runs the tests", command: "pytest -q", files: [], hunk_ids: [] };
const patch: ApprovalRequest = { request_id: "r2", kind: "patch.apply", title: "edit app.py", detail: "2 hunks", files: ["app.py"], hunk_ids: ["h1", "h2"] };

function fakeServer(approvals: ApprovalRequest[]) {
  const calls: [string, object][] = [];
  const api: ServerApi = {
    request: async <T>() => ({ approvals }) as T,
    command: async <T>(name: string, arg: object) => {
      calls.push([name, arg]);
      return { ok: true } as T;
    },
  };
  return { api, calls };
}

function fakeUI(pickIndex: number | undefined) {
  const infos: string[] = [];
  const ui: ApprovalUI = {
    pick: async (items) => (pickIndex === undefined ? undefined : items[pickIndex]),
    info: (m) => void infos.push(m),
  };
  return { ui, infos };
}

test("quick-pick items say what will happen", () => {
  assert.equal(approvalItem(bash).label, "Run command: verify");
  assert.equal(approvalItem(bash).description, "$ pytest -q");
  assert.equal(approvalItem(patch).description, "app.py");
  assert.equal(approvalItem({ ...patch, kind: "net.fetch" }).label, "net.fetch: edit app.py");
});

test("a single pending request is approved without asking which", async () => {
  const { api, calls } = fakeServer([bash]);
  await approve(api, fakeUI(undefined).ui, true);
  assert.deepEqual(calls, [["deepseek.approve", { request_id: "r1", always: true }]]);
});

test("with several, the picked one is denied", async () => {
  const { api, calls } = fakeServer([bash, patch]);
  await deny(api, fakeUI(1).ui);
  assert.deepEqual(calls, [["deepseek.deny", { request_id: "r2" }]]);
});

test("dismissing the pick sends nothing; an empty queue says so", async () => {
  const many = fakeServer([bash, patch]);
  await approve(many.api, fakeUI(undefined).ui);
  assert.equal(many.calls.length, 0);
  const empty = fakeServer([]);
  const { ui, infos } = fakeUI(0);
  await approve(empty.api, ui);
  assert.equal(empty.calls.length, 0);
  assert.match(infos[0], /nothing is waiting/);
});

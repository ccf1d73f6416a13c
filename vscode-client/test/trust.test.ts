import assert from "node:assert/strict";
import { test } from "node:test";
import { trustHint, type TrustStatus } from "../src/trust";

const untrusted: TrustStatus = {
  workspace: "/w", trusted: false, state: "never", ignored_workspace_config: ["policy.approval_mode"],
  ignored_editor_settings: ["agent_loop.mode"],
};

test("an untrusted workspace with held-back settings names each, editor ones marked", () => {
  const hint = trustHint(untrusted);
  assert.match(hint ?? "", /policy\.approval_mode, agent_loop\.mode \(editor setting\)/);
  assert.match(hint ?? "", /it is not trusted/);
});

test("a config changed since trust says so", () => {
  assert.match(trustHint({ ...untrusted, state: "changed" }) ?? "", /changed since you trusted it/);
});

test("nothing to say when trusted or when nothing is held back", () => {
  assert.equal(trustHint({ ...untrusted, trusted: true, state: "trusted" }), undefined);
  assert.equal(trustHint({ ...untrusted, ignored_workspace_config: [], ignored_editor_settings: [] }), undefined);
});

import assert from "node:assert/strict";
import { test } from "node:test";
import type { RoutingExplanation, Status } from "../src/protocol";
import { StatusBar, describeStatus, routingSummary } from "../src/statusBar";
import { serverStatus } from "./serverStates";

const decision: RoutingExplanation = {
  decision_id: "d1",
  text: "max-think: broad change",
  score: 0.81,
  threshold: 0.72,
  profile: "max_think",
  model: "deepseek-reasoner",
  escalation: false,
  contributions: { repo_breadth: 0.24 },
  reason_codes: ["BREADTH_HIGH", "PLANNING_REQUEST"],
};

test("no session: a hint to start one, not highlighted", () => {
  const v = describeStatus("running", serverStatus("Idle", { max_think_active: false }));
  assert.match(v.tooltip, /Plan…/);
  assert.equal(v.highlighted, false);
});

test("max-think is shown and highlighted", () => {
  const s: Status = serverStatus("Planning", { session_id: "s1", profile: "max_think", max_think_active: true, last_decision: decision });
  const v = describeStatus("running", s);
  assert.match(v.text, /planning · max-think/);
  assert.equal(v.highlighted, true);
  assert.match(v.tooltip, /score 0\.81 vs threshold 0\.72; BREADTH_HIGH, PLANNING_REQUEST/);
});

test("fast profile is shown, not highlighted", () => {
  const v = describeStatus("running", serverStatus("AwaitingApproval", { session_id: "s1", profile: "fast", max_think_active: false }));
  assert.equal(v.text, "$(sparkle) DeepSeek: awaiting approval · fast");
  assert.equal(v.highlighted, false);
});

test("the last profile is shown as people write it, highlighted only while max-think works", () => {
  const v = describeStatus("running", serverStatus("AwaitingApproval", { session_id: "s1", profile: "max_think", max_think_active: false }));
  assert.equal(v.text, "$(sparkle) DeepSeek: awaiting approval · max-think");
  assert.equal(v.highlighted, false);
});

test("a profile forced by the settings is in the tooltip and the label", () => {
  const v = describeStatus("running", serverStatus("Idle", { session_id: "s1", profile: "fast", max_think_active: false }), "max-think");
  assert.equal(v.label, "DeepSeek: idle · fast (router forced: max-think) (server running)");
  assert.match(v.tooltip, /forces the max-think profile/);
  assert.doesNotMatch(describeStatus("running", undefined).tooltip, /forces/);
});

test("a failed server says how to retry", () => {
  assert.match(describeStatus("failed", undefined).tooltip, /Restart Server/);
});

test("routing summaries without reason codes", () => {
  assert.match(routingSummary({ ...decision, profile: "fast", reason_codes: [] }), /^fast \(deepseek-reasoner\): score 0\.81 vs threshold 0\.72$/);
});

test("StatusBar sets the background only while max-think is active", () => {
  const item = { accessibilityInformation: undefined as { label: string } | undefined, text: "", tooltip: undefined as unknown, command: undefined as unknown, backgroundColor: undefined as unknown, shown: 0, show() { this.shown++; } };
  const bar = new StatusBar(item, "WARN", "deepseek-ls.explainRouting");
  assert.equal(item.command, "deepseek-ls.explainRouting");
  assert.equal(item.shown, 1);
  bar.setServerState("running");
  bar.setStatus(serverStatus("Planning", { session_id: "s", max_think_active: true }));
  assert.equal(item.backgroundColor, "WARN");
  bar.setStatus(serverStatus("Completed", { session_id: "s", profile: "fast", max_think_active: false }));
  assert.equal(item.backgroundColor, undefined);
  assert.match(item.text, /completed · fast/);
  assert.equal(item.accessibilityInformation?.label, "DeepSeek: completed · fast (server running)");
});

const spend = (calls: number, text: string, cost: number | null) => ({
  short: "", text, tokens: { cache_hit: 1000, cache_miss: 2000, output: 77, total: 3077 }, cost,
  cost_complete: cost !== null, currency: cost === null ? null : "USD", calls, unpriced_calls: cost === null ? calls : 0,
});

test("the tooltip says what the session and each step cost", () => {
  const s: Status = serverStatus("AwaitingApproval", {
    session_id: "s1", profile: "fast",
    cost: {
      session: spend(2, "3077 in (1000 cached, 2000 missed), 77 out · $0.0048", 0.0048),
      steps: { "0190abcd-step": spend(1, "1500 in (900 cached, 600 missed), 40 out · $0.0016", 0.0016) },
    },
  });
  const v = describeStatus("running", s);
  assert.match(v.tooltip, /Cost \(session, 2 calls\): 3077 in \(1000 cached, 2000 missed\), 77 out · \$0\.0048/);
  assert.match(v.tooltip, /step 1 \(0190abcd\): 1500 in .* · \$0\.0016/);
});

test("unknown prices: tokens and an unknown cost, never $0", () => {
  const s: Status = serverStatus("Paused", {
    session_id: "s1", profile: "fast",
    state_reason: "cost budget reached: raise budget.max_cost",
    cost: { session: spend(1, "3077 in (1000 cached, 2000 missed), 77 out · unknown", null), steps: {} },
  });
  const v = describeStatus("running", s);
  assert.match(v.tooltip, /77 out · unknown/);
  assert.doesNotMatch(v.tooltip, /\$0/);
  assert.match(v.tooltip, /cost budget reached/);
});

test("no calls yet: no cost line", () => {
  const s: Status = serverStatus("Planning", { session_id: "s1", max_think_active: false, cost: { session: spend(0, "", 0), steps: {} } });
  assert.doesNotMatch(describeStatus("running", s).tooltip, /Cost/);
});

test("teammate lanes running or queued show in the item and its tooltip", () => {
  const lanes = { running: 2, queued: 1, lanes: [] };
  const v = describeStatus("running", serverStatus("ExecutingStep", { session_id: "s1", max_think_active: false, teammate_mode: true, lanes }));
  assert.match(v.text, /lanes 2 running, 1 queued/);
  assert.match(v.tooltip, /Teammate mode on: lanes 2 running, 1 queued/);
  const idle = describeStatus("running", serverStatus("Paused", { session_id: "s1", max_think_active: false, lanes: { running: 0, queued: 0, lanes: [] } }));
  assert.doesNotMatch(idle.text, /lanes/);
});

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { AGENT_MODES, PROFILES } from "../src/modes";
import { PanelModel } from "../src/panel/model";
import { describeStatus } from "../src/statusBar";
import { renderHeader } from "../webview/render";
import { BUSY_STATES, STATE_LABELS, STATES, WAITING_STATES, serverStatus } from "./serverStates";

const CLIENT = path.resolve(__dirname, "../../..");

test("the server's vocabulary is read whole: every state labelled, busy and waiting states are states", () => {
  assert.ok(STATES.length >= 9, `states: ${STATES}`);
  assert.deepEqual(Object.keys(STATE_LABELS).sort(), [...STATES].sort());
  for (const s of BUSY_STATES) assert.ok(STATES.includes(s), s);
  for (const s of WAITING_STATES) assert.ok(BUSY_STATES.includes(s), s);
});

test("the status bar and the panel show each state as the server says it", () => {
  for (const state of STATES) {
    const status = serverStatus(state, { session_id: "s1" });
    const v = describeStatus("running", status);
    assert.ok(v.text.includes(`DeepSeek: ${STATE_LABELS[state]}`), `${state}: ${v.text}`);
    assert.equal(v.text.startsWith("$(sync~spin)"), BUSY_STATES.includes(state) && !WAITING_STATES.includes(state), `${state} spins`);
    const m = new PanelModel(AGENT_MODES, PROFILES, "agent", "auto");
    m.setServer("running");
    m.onStatus(status);
    assert.equal(m.snapshot.busy, BUSY_STATES.includes(state), `${state} offers Cancel`);
    assert.equal(renderHeader(m.snapshot).includes('data-action="cancel"'), BUSY_STATES.includes(state), `${state} header`);
    assert.ok(renderHeader(m.snapshot).includes(`<span class="state">${STATE_LABELS[state]}</span>`), `${state} header label`);
  }
});

test("an unknown state is shown as it is, neither spinning nor offering Cancel", () => {
  const v = describeStatus("running", { session_id: "s1", state: "Rebasing", max_think_active: false });
  assert.equal(v.text, "$(sparkle) DeepSeek: Rebasing");
  const m = new PanelModel(AGENT_MODES, PROFILES, "agent", "auto");
  m.onStatus({ session_id: "s1", state: "Rebasing", max_think_active: false });
  assert.equal(m.snapshot.busy, false);
});

test("the client keeps no list of busy states or labels of its own", () => {
  const files = ["src", "src/panel", "webview"].flatMap((d) =>
    fs.readdirSync(path.join(CLIENT, d)).filter((f) => f.endsWith(".ts")).map((f) => path.join(CLIENT, d, f)));
  assert.ok(files.length > 10);
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    for (const state of BUSY_STATES) assert.ok(!text.includes(`"${state}"`), `${path.relative(CLIENT, file)} names the busy state ${state}`);
    for (const state of STATES) assert.ok(!new RegExp(`\\b${state}: "`).test(text), `${path.relative(CLIENT, file)} labels ${state} itself`);
  }
});

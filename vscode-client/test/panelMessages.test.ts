import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { AGENT_MODE_IDS, PROFILE_IDS } from "../src/modes";
import { contentSecurityPolicy, panelHtml } from "../src/panel/html";
import { parseFromWebview, pendingCount, type PanelState } from "../src/panel/messages";
import { PanelModel, nextStep, promptWithContext } from "../src/panel/model";
import type { Hunk, Plan, Transcript, Turn } from "../src/protocol";
import { applyMessage, type ViewState } from "../webview/state";
import { AGENT_MODES, PROFILES } from "../src/modes";
import { serverStatus } from "./serverStates";

const parse = (raw: unknown) => parseFromWebview(raw, AGENT_MODE_IDS, PROFILE_IDS);

// -- what the extension accepts from the webview ---------------------------------------------

const WELL_FORMED: [string, unknown][] = [
  ["ready", { type: "ready" }],
  ["ask", { type: "submit", action: "ask", prompt: "what does add do?", useSelection: true }],
  ["run step", { type: "runStep", session_id: "0190abc", step_id: "s-1" }],
  ["revise the plan", { type: "reviseStep", session_id: "0190abc", step_id: null, feedback: "" }],
  ["accept hunk", { type: "acceptHunk", patch_id: "p1", hunk_id: "h1" }],
  ["reject file", { type: "rejectFile", uri: "file:///ws/app.py" }],
  ["open file", { type: "openFile", uri: "file:///ws/app.py", line: 3 }],
  ["review the working tree", { type: "review", pick: false }],
  ["rewind to here", { type: "rewindTo", session_id: "0190abc" }],
  ["review a picked change", { type: "review", pick: true }],
  ["mode", { type: "setMode", mode: "plan" }],
  ["profile", { type: "setProfile", profile: "max-think" }],
];

for (const [name, msg] of WELL_FORMED) {
  test(`the panel's message is accepted as sent: ${name}`, () => {
    assert.deepEqual(parse(msg), msg);
  });
}

const MALFORMED: [string, unknown][] = [
  ["not an object", "runStep"],
  ["an array", [{ type: "ready" }]],
  ["unknown type", { type: "executeShell", command: "rm -rf /" }],
  ["empty prompt", { type: "submit", action: "ask", prompt: "   " }],
  ["unknown action", { type: "submit", action: "yolo", prompt: "x" }],
  ["id with a path", { type: "runStep", session_id: "../../etc", step_id: "s" }],
  ["hunk id not a string", { type: "acceptHunk", patch_id: "p1", hunk_id: 7 }],
  ["non-file uri", { type: "acceptFile", uri: "javascript:alert(1)" }],
  ["uri with a newline", { type: "openFile", uri: "file:///a\nb", line: 0 }],
  ["negative line", { type: "openFile", uri: "file:///ws/a.py", line: -1 }],
  ["mode not offered", { type: "setMode", mode: "root" }],
  ["profile not offered", { type: "setProfile", profile: "max_think" }],
  ["session id too long", { type: "showEventLog", session_id: "a".repeat(200) }],
  ["rewind to a path", { type: "rewindTo", session_id: "../x" }],
];

for (const [name, msg] of MALFORMED) {
  test(`never acts on a malformed webview message: ${name}`, () => {
    assert.equal(parse(msg), undefined);
  });
}

// -- the webview's own message handling ------------------------------------------------------

function state(over: Partial<PanelState> = {}): PanelState {
  return {
    server: "running", status: null, session_id: "s1", turns: [], live: null, plan: null, changes: [], sessions: [],
    modes: AGENT_MODES, profiles: PROFILES, mode: "agent", profile: "auto", context: [], busy: false, error: null, review: null, ...over,
  };
}

test("webview: a state message replaces what it shows", () => {
  const next = applyMessage({ state: state({ error: "old" }) }, { type: "state", state: state({ session_id: "s2" }) });
  assert.equal(next.state?.session_id, "s2");
  assert.equal(next.state?.error, null);
});

test("webview: streamed pieces build the live answer, reasoning apart from content", () => {
  let view: ViewState = { state: state() };
  view = applyMessage(view, { type: "stream", session_id: "s1", channel: "reasoning", text: "Let me " });
  view = applyMessage(view, { type: "stream", session_id: "s1", channel: "reasoning", text: "think." });
  view = applyMessage(view, { type: "stream", session_id: "s1", channel: "content", text: "**Hi**" });
  view = applyMessage(view, { type: "stream", session_id: "s1", channel: "status", text: " planner: retry \n" });
  assert.deepEqual(view.state?.live, { session_id: "s1", reasoning: "Let me think.", content: "**Hi**", status: ["planner: retry"] });
});

test("webview: a stream of another session waits for the state that switches to it", () => {
  const view = { state: state() };
  assert.equal(applyMessage(view, { type: "stream", session_id: "other", channel: "content", text: "x" }), view);
  assert.equal(applyMessage(view, { type: "nonsense" } as never), view);
  assert.equal(applyMessage(view, null), view);
});

// -- the model of server state -----------------------------------------------------------------

const answer = (id: string, content: string): Turn => ({ turn_id: id, role: "assistant", agent_role: "ask", content, step_id: null });
const transcript = (sid: string, turns: Turn[]): Transcript => ({ session_id: sid, state: "Completed", turns });

function model(): PanelModel {
  return new PanelModel(AGENT_MODES, PROFILES, "agent", "auto");
}

test("model: a status of another session moves the panel to it and asks for its transcript and plan", () => {
  const m = model();
  m.setServer("running");
  const r = m.onStatus(serverStatus("Planning", { session_id: "s1", running: ["plan"] }));
  assert.equal(m.sessionId, "s1");
  assert.ok(r.transcript && r.plan && r.sessions);
  assert.equal(m.snapshot.busy, true);
});

test("model: the live answer stays until the transcript has the answer, then the transcript's turn replaces it", () => {
  const m = model();
  m.showSession("s1");
  m.setTranscript(transcript("s1", [{ turn_id: "t1", role: "user", agent_role: "ask", content: "q", step_id: null }]));
  m.onStream({ session_id: "s1", channel: "content", text: "The ans" });
  m.setTranscript(transcript("s1", [{ turn_id: "t1", role: "user", agent_role: "ask", content: "q", step_id: null }]));
  assert.equal(m.snapshot.live?.content, "The ans"); // not answered yet: still streaming
  m.setTranscript(transcript("s1", [{ turn_id: "t1", role: "user", agent_role: "ask", content: "q", step_id: null }, answer("t2", "The answer")]));
  assert.equal(m.snapshot.live, null);
  assert.equal(m.snapshot.turns.length, 2);
});

test("model: a stream of a new session switches to it (an ask makes its own session)", () => {
  const m = model();
  m.showSession("s1");
  const r = m.onStream({ session_id: "s2", channel: "content", text: "x" });
  assert.equal(m.sessionId, "s2");
  assert.ok(r.transcript);
  m.setTranscript(transcript("s1", [answer("t9", "late answer of s1")]));
  assert.deepEqual(m.snapshot.turns, [], "an answer for a session no longer shown is dropped");
});

test("model: a panel with no session (a new window) shows the newest session", () => {
  const m = model();
  const r = m.setSessions([{ session_id: "new", state: "Paused", created: "2", prompt: "b" }, { session_id: "old", state: "Completed", created: "1", prompt: "a" }]);
  assert.equal(m.sessionId, "new");
  assert.ok(r.transcript && r.plan);
  assert.deepEqual(m.setSessions([]), {}, "a shown session stays");
  assert.equal(m.sessionId, "new");
});

const hunk = (id: string, status: Hunk["status"] = "pending"): Hunk => ({
  patch_id: "p", hunk_id: id, uri: "file:///ws/app.py", range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
  old_text: "a\n", new_text: "b\n", added: [0], removed_at: 0, status,
});

test("model: files without hunks are dropped; the badge counts pending hunks", () => {
  const m = model();
  m.setChanges([{ uri: "file:///ws/app.py", path: "app.py", hunks: [hunk("h1"), hunk("h2")] }, { uri: "file:///ws/b.py", path: "b.py", hunks: [] }]);
  assert.equal(m.snapshot.changes.length, 1);
  assert.equal(pendingCount(m.snapshot.changes), 2);
});

test("the prompt names the @file context once", () => {
  assert.equal(promptWithContext("fix it ", ["a.py", "b.py"]), "fix it\n\nContext files: @a.py @b.py");
  assert.equal(promptWithContext("look at @a.py", ["a.py"]), "look at @a.py");
});

test("the next step is the first pending one", () => {
  const plan: Plan = { plan_id: "p", version: 1, goal: "g", steps: [
    { step_id: "s1", title: "one", status: "done" }, { step_id: "s2", title: "two", status: "pending" }] };
  assert.equal(nextStep(plan)?.step_id, "s2");
  assert.equal(nextStep(null), undefined);
});

// -- one list of modes, a strict policy -----------------------------------------------------------

test("package.json's setting enums list exactly the modes and profiles of modes.ts", () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../../package.json"), "utf8"));
  const props = pkg.contributes.configuration.properties;
  assert.deepEqual(props["deepseek.agent.mode"].enum, AGENT_MODE_IDS);
  assert.deepEqual(props["deepseek.router.mode"].enum, PROFILE_IDS);
});

test("the webview's policy runs only our script, by nonce: no inline script, eval, images or connections", () => {
  const csp = contentSecurityPolicy("https://webview.example", "abc123");
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'nonce-abc123'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.match(csp, /img-src 'none'/);
  assert.match(csp, /connect-src 'none'/);
  const html = panelHtml({ cspSource: "https://webview.example", script: "https://webview.example/main.js", style: "https://webview.example/main.css" }, "abc123");
  const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
  assert.deepEqual(scripts, [' nonce="abc123" src="https://webview.example/main.js"']);
  assert.doesNotMatch(html, / on[a-z]+=/i, "no inline event handlers");
});

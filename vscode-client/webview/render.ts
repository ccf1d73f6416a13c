/**
 * The panel's sections as HTML strings, from `PanelState`. Every piece of text
 * is escaped; answers go through `renderMarkdown` (which keeps raw HTML out).
 * Buttons carry `data-action` and the ids the extension needs; main.ts
 * delegates their clicks. Pure (no DOM): unit-tested in node.
 */
import type { ChangeFile, LiveTurn, PanelState } from "../src/panel/messages";
import { stateLabel, type Hunk, type Plan, type SessionSummary, type Spend, type Turn } from "../src/protocol";
import { escapeHtml as esc, renderMarkdown } from "./markdown";

const STEP_MARKS: Record<string, string> = { pending: "○", running: "◐", staged: "◑", done: "✓", failed: "✗", skipped: "⤼" };
const profileLabel = (p: string | null | undefined) => (p ?? "").replace(/_/g, "-");

function attrs(data: Record<string, string | number | null | undefined>): string {
  return Object.entries(data)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => ` data-${k}="${esc(String(v))}"`)
    .join("");
}

function button(label: string, action: string, data: Record<string, string | number | null | undefined> = {}, title = label, cls = "", disabled = false): string {
  return `<button type="button" class="${cls}" data-action="${action}"${attrs(data)} title="${esc(title)}" aria-label="${esc(title)}"${disabled ? " disabled" : ""}>${esc(label)}</button>`;
}

function spendText(spend: Spend | null | undefined): string {
  return spend && spend.calls ? spend.text : "";
}

// -- conversation --------------------------------------------------------------

function thinking(id: string, text: string, open: boolean, streaming = false): string {
  if (!text) return "";
  return `<details class="thinking" data-turn="${esc(id)}"${open ? " open" : ""}><summary>Thinking${streaming ? "…" : ""}</summary>` +
    `<div class="md">${renderMarkdown(text)}</div></details>`;
}

function turnMeta(t: Turn): string {
  const bits: string[] = [];
  if (t.model) bits.push(`<span class="model">${esc(t.model)}${t.profile ? ` · ${esc(profileLabel(t.profile))}` : ""}</span>`);
  const cost = spendText(t.spend);
  if (cost) bits.push(`<span class="cost">${esc(cost)}</span>`);
  const why = t.routing?.text ? `<div class="why" title="Why this model (the router's explanation)">${esc(t.routing.text)}</div>` : "";
  return bits.length || why ? `<div class="meta">${bits.join(" · ")}${why}</div>` : "";
}

function whoLabel(t: Turn): string {
  const role = t.agent_role ? ` · ${t.agent_role}` : "";
  return t.role === "user" ? `You${role}` : `DeepSeek${role}`;
}

/** `rewindTo`: the session this turn is the prompt of (a checkpoint: "Rewind to here" is offered). */
export function renderTurn(t: Turn, openThinking: ReadonlySet<string>, rewindTo: string | null = null): string {
  if (t.role === "user") {
    const rewind = rewindTo
      ? `<div class="actions">${button("Rewind to here", "rewindTo", { session: rewindTo }, "Go back to before this prompt: code, conversation or both")}</div>`
      : "";
    return `<article class="turn user" data-turn="${esc(t.turn_id)}"><div class="who">${esc(whoLabel(t))}</div>` +
      `<div class="md">${renderMarkdown(t.content)}</div>${rewind}</article>`;
  }
  const tools = t.tool_calls?.length ? `<div class="tools">called ${t.tool_calls.map((n) => `<code>${esc(n)}</code>`).join(", ")}</div>` : "";
  // A planner's answer is the plan (shown in Plan); its raw text stays one click away.
  const body = t.agent_role === "planner" && t.content
    ? `<details class="raw"><summary>The planner's answer</summary><div class="md">${renderMarkdown(t.content)}</div></details>`
    : t.content ? `<div class="md">${renderMarkdown(t.content)}</div>` : "";
  return `<article class="turn assistant" data-turn="${esc(t.turn_id)}"><div class="who">${esc(whoLabel(t))}</div>` +
    turnMeta(t) + thinking(t.turn_id, t.reasoning ?? "", openThinking.has(t.turn_id)) + tools + body + "</article>";
}

export function renderLive(live: LiveTurn | null, openThinking: ReadonlySet<string>): string {
  if (!live) return "";
  const status = live.status.length ? `<div class="meta live-status">${esc(live.status[live.status.length - 1])}</div>` : "";
  return `<article class="turn assistant live" aria-busy="true"><div class="who">DeepSeek <span class="streaming">streaming…</span></div>` +
    status + thinking("live", live.reasoning, openThinking.has("live"), true) +
    (live.content ? `<div class="md">${renderMarkdown(live.content)}</div>` : "") + "</article>";
}

export function renderConversation(s: PanelState, openThinking: ReadonlySet<string>): string {
  if (!s.turns.length && !s.live) {
    return `<p class="empty">No conversation yet. Ask a question or plan a change below.</p>`;
  }
  // The session's prompt is its first user turn: the checkpoint a rewind goes back to before.
  const prompt = s.turns.find((t) => t.role === "user");
  return s.turns.map((t) => renderTurn(t, openThinking, t === prompt ? s.session_id : null)).join("");
}

// -- plan ------------------------------------------------------------------------

export function stepStatus(step: Plan["steps"][number]): string {
  return step.status ?? (step.done ? "done" : "pending");
}

export function renderPlan(s: PanelState): string {
  const plan = s.plan;
  if (!plan || !s.session_id) return `<p class="empty">No plan. Use <b>Plan</b> below to make one.</p>`;
  const sid = s.session_id;
  const steps = plan.steps.map((step, i) => {
    const status = stepStatus(step);
    const runnable = status === "pending" || status === "failed";
    const actions = [
      runnable ? button(status === "failed" ? "Retry" : "Run", "runStep", { session: sid, step: step.step_id }, `Run step ${i + 1}`) : "",
      runnable ? button("Skip", "skipStep", { session: sid, step: step.step_id }, `Skip step ${i + 1}`) : "",
      button("Revise…", "reviseStep", { session: sid, step: step.step_id }, `Revise step ${i + 1}`),
    ].join("");
    const files = step.files?.length ? `<div class="files">${step.files.map((f) => `<code>${esc(f)}</code>`).join(" ")}</div>` : "";
    return `<li class="step status-${esc(status)}" data-step="${esc(step.step_id)}">` +
      `<span class="mark" aria-hidden="true">${STEP_MARKS[status] ?? "•"}</span>` +
      `<span class="title">${esc(`Step ${i + 1}: ${step.title}`)}</span> <span class="step-state">[${esc(status)}]</span>` +
      `<div class="actions">${actions}</div>${files}</li>`;
  }).join("");
  const checks = plan.verification?.length ? `<div class="verify">Verify: ${plan.verification.map((v) => `<code>${esc(v)}</code>`).join(" ")}</div>` : "";
  return `<div class="goal"><b>${esc(plan.goal)}</b> <span class="version">v${plan.version}</span></div>` +
    `<ol class="steps">${steps}</ol>${checks}` +
    `<div class="actions">${button("Revise plan…", "reviseStep", { session: sid }, "Revise the whole plan")}</div>`;
}

// -- changes ---------------------------------------------------------------------

function lines(text: string): string[] {
  if (!text) return [];
  const out = text.split(/\r?\n/);
  if (out[out.length - 1] === "") out.pop();
  return out;
}

function hunkDiff(h: Hunk): string {
  const removed = lines(h.old_text);
  const added = lines(h.new_text);
  // Lines both texts share at the start and end are context.
  let head = 0;
  while (head < removed.length && head < added.length && removed[head] === added[head]) head++;
  let tail = 0;
  while (tail < removed.length - head && tail < added.length - head &&
    removed[removed.length - 1 - tail] === added[added.length - 1 - tail]) tail++;
  const rows = [
    ...removed.slice(0, head).map((l) => ["ctx", " ", l]),
    ...removed.slice(head, removed.length - tail).map((l) => ["del", "-", l]),
    ...added.slice(head, added.length - tail).map((l) => ["add", "+", l]),
    ...removed.slice(removed.length - tail).map((l) => ["ctx", " ", l]),
  ];
  return `<pre class="diff">${rows.map(([cls, sign, l]) => `<span class="${cls}">${sign} ${esc(l)}</span>`).join("\n")}</pre>`;
}

function renderFile(f: ChangeFile): string {
  const hunks = f.hunks.map((h) => {
    const line = h.removed_at + 1;
    return `<li class="hunk" data-hunk="${esc(h.hunk_id)}">` +
      `<div class="hunk-head"><a href="#" data-action="openFile"${attrs({ uri: f.uri, line: h.removed_at })}>line ${line}</a>` +
      (h.stale ? ` <span class="stale" title="The file changed since; accepting rebases (3-way)">stale</span>` : "") +
      `<span class="actions">${button("Accept", "acceptHunk", { patch: h.patch_id, hunk: h.hunk_id }, `Accept the hunk at ${f.path}:${line}`)}` +
      `${button("Reject", "rejectHunk", { patch: h.patch_id, hunk: h.hunk_id }, `Reject the hunk at ${f.path}:${line}`)}</span></div>` +
      hunkDiff(h) + "</li>";
  }).join("");
  return `<section class="file" data-uri="${esc(f.uri)}"><div class="file-head">` +
    `<a href="#" data-action="openFile"${attrs({ uri: f.uri, line: 0 })}><code>${esc(f.path)}</code></a> <span class="count">${f.hunks.length}</span>` +
    `<span class="actions">${button("Accept file", "acceptFile", { uri: f.uri }, `Accept every hunk in ${f.path}`)}` +
    `${button("Reject file", "rejectFile", { uri: f.uri }, `Reject every hunk in ${f.path}`)}</span></div>` +
    `<ul class="hunks">${hunks}</ul></section>`;
}

export function renderChanges(s: PanelState): string {
  if (!s.changes.length) return `<p class="empty">No changes waiting for review.</p>`;
  return `<div class="actions toolbar">${button("Open all changes", "openChanges", {}, "Open every pending change in the multi-diff editor")}` +
    `${button("Accept all", "acceptAll")}${button("Reject all", "rejectAll")}</div>` + s.changes.map(renderFile).join("");
}

// -- review ------------------------------------------------------------------------

/** Review buttons (the palette's Review Changes…) and the last review's outcome, as text. */
export function renderReview(s: PanelState): string {
  const r = s.review;
  const off = s.server !== "running" || r?.state === "running";
  const actions = `<div class="actions toolbar">` +
    button("Review changes", "review", { pick: "false" }, "Review the working tree's changes against HEAD (read-only)", "", off) +
    button("Staged / base…", "review", { pick: "true" }, "Review the staged changes or the branch against a base (read-only)", "", off) + "</div>";
  if (!r) return actions + `<p class="empty">Read-only: the findings appear in the Problems panel.</p>`;
  const text = r.state === "failed" ? `Review failed: ${r.text}` : r.text;
  return actions + `<p class="review-outcome review-${esc(r.state)}"${r.state === "failed" ? ' role="alert"' : ""}>${esc(text)}</p>`;
}

// -- sessions ------------------------------------------------------------------------

function renderSession(row: SessionSummary, current: string | null): string {
  const cost = row.cost && row.cost.calls ? row.cost.short : "";
  const why = row.state === "Failed" ? row.error : row.state === "Paused" ? row.state_reason : null;
  return `<li class="session${row.session_id === current ? " current" : ""}" data-session="${esc(row.session_id)}">` +
    `<div class="session-prompt">${esc(row.prompt || "(no prompt)")}</div>` +
    `<div class="meta"><span class="state">${esc(stateLabel(row))}</span>${row.mode ? ` · ${esc(row.mode)}` : ""}` +
    `${cost ? ` · ${esc(cost)}` : ""} · <time>${esc(row.created)}</time>${why ? `<div class="why">${esc(why)}</div>` : ""}</div>` +
    `<div class="actions">${button("Open", "openSession", { session: row.session_id }, "Show this session in the panel")}` +
    `${button("Resume", "resumeSession", { session: row.session_id }, "Resume this session")}` +
    `${button("Event log", "showEventLog", { session: row.session_id }, "Open this session's events.jsonl")}</div></li>`;
}

export function renderSessions(s: PanelState): string {
  if (!s.sessions.length) return `<p class="empty">No sessions in this workspace yet.</p>`;
  return `<ul class="sessions">${s.sessions.map((row) => renderSession(row, s.session_id)).join("")}</ul>`;
}

// -- header and input ----------------------------------------------------------------

/** What fills the context: "instructions 2.1k · plan 0.4k · tool results 5.5k of 128k". */
export function meterTitle(meter: { parts?: Record<string, number>; window: number; compactions?: number } | null | undefined): string {
  if (!meter) return "";
  const k = (n: number) => (n < 10_000 ? `${(n / 1000).toFixed(1)}k` : `${Math.round(n / 1000)}k`);
  const parts = Object.entries(meter.parts ?? {}).filter(([, n]) => n > 0).map(([name, n]) => `${name.replace("_", " ")} ${k(n)}`);
  const compacted = meter.compactions ? `; compacted ${meter.compactions}×` : "";
  return `Context: ${parts.join(" · ") || "empty"} of ${k(meter.window)}${compacted}. DeepSeek: Compact the Conversation summarizes older turns.`;
}

export function renderHeader(s: PanelState): string {
  if (s.server !== "running") return `<span class="server-${esc(s.server)}">DeepSeek server ${esc(s.server)}</span>`;
  const st = s.status;
  if (!st || !st.session_id) return "DeepSeek: no active session";
  const profile = st.max_think_active ? "max-think" : profileLabel(st.profile);
  const cost = st.cost?.session?.calls ? ` · ${st.cost.session.short}` : "";
  const meter = st.context?.text ? ` · ${st.context.text}` : "";
  const why = st.state === "Failed" ? st.last_error : st.state === "Paused" ? st.state_reason : null;
  return `<span class="state">${esc(stateLabel(st))}</span>${profile ? ` · ${esc(profile)}` : ""}${esc(cost)}` +
    (meter ? `<span class="meter" title="${esc(meterTitle(st.context))}">${esc(meter)}</span>` : "") +
    (why ? `<div class="why">${esc(why)}</div>` : "") +
    (s.busy ? ` ${button("Cancel", "cancel", {}, "Stop what the agent is doing")}` : "");
}

export function renderOptions(choices: readonly { id: string; label: string; detail: string }[], selected: string): string {
  return choices.map((c) => `<option value="${esc(c.id)}" title="${esc(c.detail)}"${c.id === selected ? " selected" : ""}>${esc(c.label)}</option>`).join("");
}

export function renderContext(s: PanelState): string {
  return s.context.map((p) => `<span class="chip">@${esc(p)} ${button("×", "removeContext", { path: p }, `Remove ${p} from the context`)}</span>`).join("");
}

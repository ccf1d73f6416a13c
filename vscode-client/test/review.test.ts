import assert from "node:assert/strict";
import { test } from "node:test";
import { AGENT_MODES, AGENT_MODE_IDS, PROFILES, PROFILE_IDS } from "../src/modes";
import { panelHtml } from "../src/panel/html";
import { parseFromWebview, type PanelState } from "../src/panel/messages";
import { PanelModel, reviewFromPanel } from "../src/panel/model";
import type { ServerApi } from "../src/protocol";
import { reviewChanges, reviewSummary, type ReviewResult, type ReviewUI } from "../src/review";
import { renderReview } from "../webview/render";

const FOUND: ReviewResult = {
  findings: [{ file: "app.py" }, { file: "app.py" }, { file: "lib.py" }], files: ["app.py", "lib.py"],
  counts: { error: 1, warning: 1, note: 1 }, dropped: { count: 0 }, failed: [], note: null,
};
const NOTHING: ReviewResult = {
  findings: [], files: [], counts: { error: 0, warning: 0, note: 0 }, dropped: { count: 0 }, failed: [],
  note: "nothing to review: the working tree's changes against HEAD has no text changes",
};

/** The server: answers deepseek.review with `answer`, or fails with `error`; records each call. */
function fakeServer(answer: ReviewResult, error?: Error) {
  const calls: [string, object][] = [];
  const api: ServerApi = {
    request: async () => {
      throw new Error("no request expected");
    },
    command: async <T>(name: string, arg: object) => {
      calls.push([name, arg]);
      if (error) throw error;
      return answer as T;
    },
  };
  return { api, calls };
}

/** The editor: picks the `pick`-th scope (undefined: Escape), types `base`; records what it was asked. */
function fakeUI(pick: number | undefined, base?: string) {
  const seen = { picks: [] as string[], inputs: [] as string[], progress: 0, findingsShown: 0 };
  const ui: ReviewUI = {
    pick: async (items) => {
      seen.picks.push(...items.map((i) => i.label));
      return pick === undefined ? undefined : items[pick];
    },
    input: async (prompt) => {
      seen.inputs.push(prompt);
      return base;
    },
    progress: async (_title, job) => {
      seen.progress++;
      return job();
    },
    showFindings: () => void seen.findingsShown++,
  };
  return { ui, seen };
}

const model = () => new PanelModel(AGENT_MODES, PROFILES, "agent", "auto");

function state(over: Partial<PanelState> = {}): PanelState {
  return { ...model().snapshot, server: "running", ...over };
}

// -- the palette's path (the panel takes the same one) ------------------------------------------

test("review: the palette asks which change: working tree {}, staged, or a base typed in", async () => {
  for (const [pick, base, args] of [[0, undefined, {}], [1, undefined, { staged: true }], [2, "release", { base: "release" }]] as const) {
    const { api, calls } = fakeServer(FOUND);
    const { ui, seen } = fakeUI(pick, base);
    assert.equal(await reviewChanges(api, ui), FOUND);
    assert.deepEqual(calls, [["deepseek.review", args]]);
    assert.deepEqual(seen.picks, ["Working tree", "Staged", "Branch against a base…"]);
    assert.equal(seen.findingsShown, 1, "findings bring the Problems panel into view");
  }
});

test("review: Escape at the pick or at the base asks the server nothing", async () => {
  for (const [pick, base] of [[undefined, undefined], [2, undefined], [2, ""]] as const) {
    const { api, calls } = fakeServer(FOUND);
    const { ui, seen } = fakeUI(pick, base);
    assert.equal(await reviewChanges(api, ui), undefined);
    assert.deepEqual(calls, []);
    assert.equal(seen.progress, 0);
  }
});

test("review: the outcome in one line: counts and files, nothing to review, dropped and unreviewed parts", () => {
  assert.equal(reviewSummary(FOUND), "3 findings (1 error, 1 warning, 1 note) in 2 files: see the Problems panel");
  assert.equal(reviewSummary(NOTHING), NOTHING.note);
  assert.equal(reviewSummary({ ...NOTHING, note: null, files: ["a.py"] }), "0 findings in 1 file");
  assert.equal(
    reviewSummary({ ...FOUND, dropped: { count: 2 }, failed: [{ files: ["big.py"], error: "the model's answers were never findings" }] }),
    "3 findings (1 error, 1 warning, 1 note) in 2 files: see the Problems panel; 2 dropped (outside the diff); " +
      "not reviewed: big.py: the model's answers were never findings",
  );
});

// -- the panel's Review control -------------------------------------------------------------------

test("panel: Review changes and Staged / base… are rendered, send the review message, and are off while it runs", () => {
  const html = renderReview(state());
  assert.match(html, /<button[^>]*data-action="review" data-pick="false"[^>]*>Review changes<\/button>/);
  assert.match(html, /<button[^>]*data-action="review" data-pick="true"[^>]*>Staged \/ base…<\/button>/);
  assert.doesNotMatch(html, /disabled/);
  assert.equal(renderReview(state({ review: { state: "running", text: "Reviewing…" } })).match(/ disabled>/g)?.length, 2);
  assert.equal(renderReview(state({ server: "stopped" })).match(/ disabled>/g)?.length, 2);
  assert.match(panelHtml({ cspSource: "vscode-resource:", script: "s.js", style: "s.css" }, "n0nce"), /id="review"/);
});

test("panel: the Review message runs the review command: the working tree without asking, or the palette's pick", async () => {
  const parse = (raw: unknown) => parseFromWebview(raw, AGENT_MODE_IDS, PROFILE_IDS);
  assert.deepEqual(parse({ type: "review", pick: "yes" }), { type: "review", pick: false }, "only pick: true asks");

  const m = model();
  const direct = fakeServer(FOUND);
  const directUI = fakeUI(undefined);
  const published: (PanelState["review"])[] = [];
  await reviewFromPanel(m, direct.api, directUI.ui, false, () => void published.push(m.snapshot.review));
  assert.deepEqual(direct.calls, [["deepseek.review", {}]]);
  assert.deepEqual(directUI.seen.picks, [], "the working tree is the default: no question");
  assert.deepEqual(published[0], { state: "running", text: "Reviewing…" });
  assert.deepEqual(m.snapshot.review, { state: "done", text: "3 findings (1 error, 1 warning, 1 note) in 2 files: see the Problems panel" });
  assert.match(renderReview(m.snapshot), /<p class="review-outcome review-done">3 findings \(1 error/);

  const picked = fakeServer(NOTHING);
  await reviewFromPanel(m, picked.api, fakeUI(1).ui, true, () => undefined);
  assert.deepEqual(picked.calls, [["deepseek.review", { staged: true }]]);
  assert.match(renderReview(m.snapshot), /nothing to review: the working tree&#39;s changes against HEAD has no text changes/);
});

test("panel: a failed review (a base that does not exist) is shown as the error, as text", async () => {
  const m = model();
  const { api, calls } = fakeServer(FOUND, new Error("review failed: no such revision: 'no-such-branch' <img src=x onerror=alert(1)>"));
  await reviewFromPanel(m, api, fakeUI(2, "no-such-branch").ui, true, () => undefined);
  assert.deepEqual(calls, [["deepseek.review", { base: "no-such-branch" }]]);
  assert.equal(m.snapshot.review?.state, "failed");
  const html = renderReview(m.snapshot);
  assert.match(html, /role="alert">Review failed: review failed: no such revision: &#39;no-such-branch&#39; &lt;img/);
  assert.doesNotMatch(html, /<img/);
});

test("panel: dismissing the question keeps the last outcome and asks the server nothing", async () => {
  const m = model();
  m.setReview({ state: "done", text: "2 findings" });
  const { api, calls } = fakeServer(FOUND);
  await reviewFromPanel(m, api, fakeUI(undefined).ui, true, () => undefined);
  assert.deepEqual(calls, []);
  assert.deepEqual(m.snapshot.review, { state: "done", text: "2 findings" });
});

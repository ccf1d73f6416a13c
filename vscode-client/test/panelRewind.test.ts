import assert from "node:assert/strict";
import { test } from "node:test";
import type { PickItem } from "../src/approvals";
import type { PanelState } from "../src/panel/messages";
import { REDO, rewindToHere, type RewindResult, type RewindUI, type RewindWhat } from "../src/panel/rewind";
import { Commands } from "../src/protocol";
import { renderConversation } from "../webview/render";
import { AGENT_MODES, PROFILES } from "../src/modes";

/** The server: records the commands sent, answers deepseek.rewind with `rewind` (or throws it). */
function server(rewind: RewindResult | Error) {
  const sent: [string, object][] = [];
  return {
    sent,
    async command<T>(name: string, args: object): Promise<T> {
      sent.push([name, args]);
      if (name === Commands.rewind && rewind instanceof Error) throw rewind;
      return (name === Commands.rewind ? rewind : { redone: true, files: ["app.py"] }) as T;
    },
  };
}

/** The person: picks `what` (undefined: dismisses the pick), answers the result's message with `then`. */
function person(what: RewindWhat | undefined, then?: string) {
  const told: { message: string; actions: string[] }[] = [];
  const offered: string[][] = [];
  const ui: RewindUI = {
    async pick<T>(items: PickItem<T>[]) {
      offered.push(items.map((i) => String(i.value)));
      return what === undefined ? undefined : items.find((i) => i.value === (what as unknown));
    },
    async info(message: string, ...actions: string[]) {
      told.push({ message, actions });
      return then;
    },
  };
  return { ui, told, offered };
}

const DONE: RewindResult = { rewound: true, rewind_id: "r1", files: ["app.py"] };

test("rewind to here: cancelling the pick sends nothing and says nothing", async () => {
  const s = server(DONE);
  const p = person(undefined);
  assert.equal(await rewindToHere(s, p.ui, "0190abc"), "cancelled");
  assert.deepEqual(p.offered, [["both", "code", "conversation"]]);
  assert.deepEqual(s.sent, []);
  assert.deepEqual(p.told, []);
});

test("rewind to here: code is rewound, the result shown with Redo, dismissed: no redo", async () => {
  const s = server(DONE);
  const p = person("code", undefined);
  assert.equal(await rewindToHere(s, p.ui, "0190abc"), "rewound");
  assert.deepEqual(s.sent, [[Commands.rewind, { session_id: "0190abc", what: "code" }]]);
  assert.deepEqual(p.told, [{ message: "DeepSeek: rewound code: app.py", actions: [REDO] }]);
});

test("rewind to here: Redo sends deepseek.redoRewind for that rewind", async () => {
  const s = server({ ...DONE, kept: ["notes.md"] });
  const p = person("both", REDO);
  assert.equal(await rewindToHere(s, p.ui, "0190abc"), "redone");
  assert.deepEqual(s.sent, [
    [Commands.rewind, { session_id: "0190abc", what: "both" }],
    [Commands.redoRewind, { rewind_id: "r1" }],
  ]);
  assert.match(p.told[0].message, /rewound both: app\.py; left as they are: notes\.md/);
});

test("rewind to here: the server's question declined: says nothing changed, offers no redo", async () => {
  const s = server({ rewound: false, message: "not rewound: nothing was changed" });
  const p = person("conversation", REDO);
  assert.equal(await rewindToHere(s, p.ui, "0190abc"), "declined");
  assert.deepEqual(p.told, [{ message: "DeepSeek: not rewound: nothing was changed", actions: [] }]);
  assert.equal(s.sent.length, 1);
});

test("rewind to here: a refusal naming the files reaches the panel as the command's error", async () => {
  const refusal = new Error("rewind refused, nothing was changed: app.py has edits overlapping what would be restored");
  const s = server(refusal);
  const p = person("code", REDO);
  await assert.rejects(rewindToHere(s, p.ui, "0190abc"), /app\.py/);
  assert.deepEqual(p.told, []);
  assert.equal(s.sent.length, 1);
});

test("the panel offers Rewind to here on the session's prompt only", () => {
  const state: PanelState = {
    server: "running", status: null, session_id: "0190abc", live: null, plan: null, changes: [], sessions: [],
    modes: AGENT_MODES, profiles: PROFILES, mode: "agent", profile: "auto", context: [], busy: false, error: null, review: null,
    turns: [
      { turn_id: "t1", role: "user", agent_role: null, content: "fix add", step_id: null },
      { turn_id: "t2", role: "assistant", agent_role: "planner", content: "{}", step_id: null },
      { turn_id: "t3", role: "user", agent_role: null, content: "keep the names", step_id: null },
    ],
  };
  const html = renderConversation(state, new Set());
  assert.equal(html.match(/data-action="rewindTo"/g)?.length, 1);
  assert.match(html, /data-turn="t1"[^]*data-action="rewindTo" data-session="0190abc"[^]*data-turn="t2"/);
});

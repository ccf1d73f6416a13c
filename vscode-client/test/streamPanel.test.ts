import assert from "node:assert/strict";
import { test } from "node:test";
import { StreamFormatter, StreamPanel } from "../src/streamPanel";

test("a header per session and a marker when reasoning turns into the answer", () => {
  const f = new StreamFormatter();
  const out = [
    f.format({ session_id: "s1", channel: "reasoning", text: "think" }),
    f.format({ session_id: "s1", channel: "reasoning", text: "ing" }),
    f.format({ session_id: "s1", channel: "content", text: "Hello" }),
    f.format({ session_id: "s1", channel: "content", text: " world\n" }),
    f.format({ session_id: "s2", channel: "content", text: "next" }),
  ].join("");
  assert.equal(out, "── session s1 ──\n[reasoning]\nthinking\n[answer]\nHello world\n\n── session s2 ──\n[answer]\nnext");
});

test("status lines stand alone", () => {
  const f = new StreamFormatter();
  const out = f.format({ session_id: "s", channel: "content", text: "partial" }) + f.format({ session_id: "s", channel: "status", text: "verifying " });
  assert.ok(out.endsWith("partial\n[verifying]\n"));
});

test("the panel shows itself once and closes open blocks before its own lines", () => {
  const appended: string[] = [];
  let shows = 0;
  const panel = new StreamPanel({ append: (t) => appended.push(t), show: () => shows++ });
  panel.onStream({ session_id: "s", channel: "content", text: "abc" });
  panel.onStream({ session_id: "s", channel: "content", text: "def" });
  panel.line("done");
  assert.equal(shows, 1);
  assert.equal(appended.join(""), "── session s ──\n[answer]\nabcdef\ndone\n");
});

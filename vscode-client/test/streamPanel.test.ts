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

test("a plan's stream fills the channel without opening it, and closes open blocks before its own lines", () => {
  const appended: string[] = [];
  let shows = 0;
  const panel = new StreamPanel({ append: (t) => appended.push(t), show: () => shows++ }, () => false);
  panel.onStream({ session_id: "s", channel: "status", text: "planning" });
  panel.onStream({ session_id: "s", channel: "reasoning", text: "the steps" });
  panel.onStream({ session_id: "s", channel: "content", text: "abc" });
  panel.onStream({ session_id: "s", channel: "content", text: "def" });
  panel.line("done");
  assert.equal(shows, 0); // the agent panel shows the conversation: the raw channel stays closed
  assert.equal(appended.join(""), "── session s ──\n[planning]\n[reasoning]\nthe steps\n[answer]\nabcdef\ndone\n");
  panel.show(); // "DeepSeek: Show Stream Output"
  assert.equal(shows, 1);
});

test("a final answer that did not stream is shown once; a streamed one is not repeated", () => {
  const appended: string[] = [];
  const panel = new StreamPanel({ append: (t) => appended.push(t), show: () => undefined });
  panel.finish("quiet", "the whole answer");
  panel.onStream({ session_id: "loud", channel: "content", text: "streamed" });
  panel.finish("loud", "streamed");
  const text = appended.join("");
  assert.equal(text.split("the whole answer").length, 2);
  assert.equal(text.split("streamed").length, 2);
  assert.ok(text.endsWith("streamed\n"));
});

test("an answer asked for opens the channel once when the agent panel is closed, never over the panel", () => {
  const appended: string[] = [];
  let shows = 0;
  let panelVisible = true;
  const panel = new StreamPanel({ append: (t) => appended.push(t), show: () => shows++ }, () => panelVisible);
  panel.reveal(); // Ask with the panel on screen
  panel.onStream({ session_id: "s", channel: "content", text: "abc" });
  assert.equal(shows, 0);
  assert.ok(appended.join("").includes("abc"));
  panelVisible = false;
  panel.onStream({ session_id: "s", channel: "content", text: "def" });
  assert.equal(shows, 0); // a stream alone never opens it
  panel.reveal(); // Ask with the panel closed: the answer has nowhere else to show
  panel.reveal();
  assert.equal(shows, 1);
  panel.show(); // an explicit show (Explain Routing, Show Stream Output) always opens it
  assert.equal(shows, 2);
});

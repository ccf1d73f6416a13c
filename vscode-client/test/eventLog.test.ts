import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { findEventLog } from "../src/eventLog";

function workspace(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "ds-eventlog-"));
}

test("finds .deepseek/sessions/<id>/events.jsonl", () => {
  const root = workspace();
  const file = path.join(root, ".deepseek", "sessions", "0190-abc", "events.jsonl");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "{}\n");
  assert.equal(findEventLog(root, "0190-abc"), file);
});

test("finds a session directory elsewhere under .deepseek", () => {
  const root = workspace();
  const file = path.join(root, ".deepseek", "state", "0190-def", "events.jsonl");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "{}\n");
  assert.equal(findEventLog(root, "0190-def"), file);
});

test("undefined when there is no such session", () => {
  assert.equal(findEventLog(workspace(), "missing"), undefined);
});

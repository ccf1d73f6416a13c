import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { Commands, Notifications, Requests } from "../src/protocol";

// Compiled to out/unit/test/, so the repository root is four levels up.
const NAMES_PY = path.resolve(__dirname, "../../../../deepseek_ls/lsp/names.py");

function pythonNames(prefix: string): string[] {
  const text = fs.readFileSync(NAMES_PY, "utf8");
  const re = new RegExp(`^${prefix}_[A-Z_]+ = "([^"]+)"`, "gm");
  return [...text.matchAll(re)].map((m) => m[1]).sort();
}

test("command ids match deepseek_ls/lsp/names.py", () => {
  assert.deepEqual(Object.values(Commands).sort(), pythonNames("CMD"));
});

test("request methods match deepseek_ls/lsp/names.py", () => {
  assert.deepEqual(Object.values(Requests).sort(), pythonNames("REQ"));
});

test("notification methods match deepseek_ls/lsp/names.py", () => {
  assert.deepEqual(Object.values(Notifications).sort(), pythonNames("NOTIFY"));
});

test("palette commands never reuse the server's command ids", () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../../package.json"), "utf8"));
  const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
  const server = new Set<string>(Object.values(Commands));
  assert.ok(contributed.length >= 14);
  for (const id of contributed) assert.ok(!server.has(id), `${id} collides with a server command`);
  for (const kb of pkg.contributes.keybindings) assert.ok(contributed.includes(kb.command), kb.command);
});

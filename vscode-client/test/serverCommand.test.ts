import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { missingCommandMessage, notFoundMessage, resolveServerCommand, startFailedMessage, which, type Lookup } from "../src/serverCommand";

function lookup(executables: string[], PATH = "/usr/local/bin:/usr/bin", platform: NodeJS.Platform = "linux"): Lookup {
  const set = new Set(executables);
  return { isExecutable: (f) => set.has(f), env: { PATH }, platform };
}

const none = { serverCommand: [] as string[], serverInterpreter: "" };

test("the command setting wins and gets serve --stdio appended", () => {
  const cmd = resolveServerCommand({ serverCommand: ["/opt/ds/deepseek-ls"], serverInterpreter: "/usr/bin/python3" }, ["/ws"], lookup(["/ws/.venv/bin/deepseek-ls"]), true);
  assert.deepEqual(cmd, { command: "/opt/ds/deepseek-ls", args: ["serve", "--stdio"], source: "setting" });
});

test("a command setting that already says serve is kept as given", () => {
  const cmd = resolveServerCommand({ serverCommand: ["ds", "serve", "--tcp"], serverInterpreter: "" }, [], lookup([]), true);
  assert.deepEqual(cmd?.args, ["serve", "--tcp"]);
});

test("the interpreter setting runs the module", () => {
  const cmd = resolveServerCommand({ serverCommand: [], serverInterpreter: "/usr/bin/python3" }, ["/ws"], lookup([]), true);
  assert.deepEqual(cmd, { command: "/usr/bin/python3", args: ["-m", "deepseek_ls", "serve", "--stdio"], source: "interpreter" });
});

test("the workspace's .venv comes before PATH", () => {
  const cmd = resolveServerCommand(none, ["/ws"], lookup(["/ws/.venv/bin/deepseek-ls", "/usr/bin/deepseek-ls"]), true);
  assert.equal(cmd?.command, "/ws/.venv/bin/deepseek-ls");
  assert.equal(cmd?.source, "workspace-venv");
});

test("a venv named venv in the second folder is found", () => {
  const cmd = resolveServerCommand(none, ["/a", "/b"], lookup(["/b/venv/bin/deepseek-ls"]), true);
  assert.equal(cmd?.command, "/b/venv/bin/deepseek-ls");
});

test("falls back to deepseek-ls on PATH, first match wins", () => {
  const cmd = resolveServerCommand(none, ["/ws"], lookup(["/usr/bin/deepseek-ls", "/usr/local/bin/deepseek-ls"]), true);
  assert.deepEqual(cmd, { command: "/usr/local/bin/deepseek-ls", args: ["serve", "--stdio"], source: "path" });
});

test("windows looks in Scripts and for .exe", () => {
  const exe = path.join("C:\\ws", ".venv", "Scripts", "deepseek-ls.exe");
  const cmd = resolveServerCommand(none, ["C:\\ws"], lookup([exe], "", "win32"), true);
  assert.equal(cmd?.command, exe);
});

test("nothing found gives undefined and a message that says the fix", () => {
  assert.equal(resolveServerCommand(none, ["/ws"], lookup([]), true), undefined);
  assert.equal(which("deepseek-ls", lookup([], "")), undefined);
  const msg = notFoundMessage();
  assert.match(msg, /pip install deepseek-ls/);
  assert.match(msg, /deepseek\.server\.command/);
  assert.match(msg, /Restart Server/);
});

test("a start failure names the command, its source and the error", () => {
  const msg = startFailedMessage({ command: "/x/deepseek-ls", args: ["serve", "--stdio"], source: "setting" }, new Error("spawn EACCES"));
  assert.match(msg, /\/x\/deepseek-ls serve --stdio/);
  assert.match(msg, /from setting/);
  assert.match(msg, /spawn EACCES/);
  assert.match(msg, /`deepseek\.server\.\*` settings/);
});

test("a configured path that does not exist is reported before spawning", () => {
  const cmd = { command: "/nope/deepseek-ls", args: ["serve", "--stdio"], source: "setting" as const };
  const msg = missingCommandMessage(cmd, lookup([]));
  assert.match(msg ?? "", /\/nope\/deepseek-ls \(from the `deepseek\.server\.command` setting\) does not exist/);
  assert.equal(missingCommandMessage(cmd, lookup(["/nope/deepseek-ls"])), undefined);
});

test("a configured bare interpreter name is looked up on PATH", () => {
  const cmd = { command: "python3", args: ["-m", "deepseek_ls", "serve", "--stdio"], source: "interpreter" as const };
  assert.equal(missingCommandMessage(cmd, lookup(["/usr/bin/python3"])), undefined);
  assert.match(missingCommandMessage(cmd, lookup([])) ?? "", /python3 .*is not on PATH/);
  assert.equal(missingCommandMessage({ ...cmd, source: "path" }, lookup([])), undefined);
});

test("no_unapproved_exec: in Restricted Mode a repository's .venv/bin/deepseek-ls is never run", () => {
  const repoBinary = lookup(["/ws/.venv/bin/deepseek-ls", "/ws/venv/bin/deepseek-ls", "/usr/bin/deepseek-ls"]);
  assert.deepEqual(resolveServerCommand(none, ["/ws"], repoBinary, false), { command: "/usr/bin/deepseek-ls", args: ["serve", "--stdio"], source: "path" });
  assert.equal(resolveServerCommand(none, ["/ws"], lookup(["/ws/.venv/bin/deepseek-ls"]), false), undefined);
  assert.match(notFoundMessage(false), /Restricted Mode: trust the workspace/);
  // Trusted, the same workspace's venv is used as before.
  assert.equal(resolveServerCommand(none, ["/ws"], repoBinary, true)?.source, "workspace-venv");
});

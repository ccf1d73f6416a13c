import assert from "node:assert/strict";
import { test } from "node:test";
import { parseSlash, runCustomCommand, type CommandList, type CustomCommandUI } from "../src/customCommands";
import type { ServerApi } from "../src/protocol";

const LIST: CommandList = {
  commands: [
    { name: "explain", description: "Explain a function", argument_hint: "[file] [function]", origin: "workspace" },
    { name: "standup", description: "my standup", argument_hint: "", origin: "user" },
  ],
  problems: [".claude/commands/bad.md: its frontmatter is not valid YAML"],
  notice: null,
};

/** The server: answers listCommands with `list` and runCommand with a session; records each call. */
function fakeServer(list: CommandList) {
  const calls: [string, object][] = [];
  const api: ServerApi = {
    request: async () => {
      throw new Error("no request expected");
    },
    command: async <T>(name: string, arg: object) => {
      calls.push([name, arg]);
      return (name === "deepseek.listCommands" ? list : { session_id: "s1", command: "explain", answer: { content: "It adds." } }) as T;
    },
  };
  return { api, calls };
}

/** The editor: picks the `pick`-th item (undefined: Escape) and types `typed` (undefined: Escape). */
function fakeUI(pick: number | undefined, typed: string | undefined) {
  const seen = { picks: [] as string[], inputs: [] as string[], info: [] as string[] };
  const ui: CustomCommandUI = {
    pick: async (items) => {
      seen.picks.push(...items.map((i) => `${i.label} ${i.description ?? ""}`));
      return pick === undefined ? undefined : items[pick];
    },
    input: async (prompt, placeholder) => {
      seen.inputs.push(`${prompt} ${placeholder}`);
      return typed;
    },
    info: (message) => void seen.info.push(message),
  };
  return { ui, seen };
}

test("a custom command is picked, its arguments asked with its hint, and run with the editor's context", async () => {
  const { api, calls } = fakeServer(LIST);
  const { ui, seen } = fakeUI(0, "app.py add");
  const run = await runCustomCommand(api, ui, { uri: "file:///w/app.py" });
  assert.equal(run?.answer?.content, "It adds.");
  assert.deepEqual(seen.picks, ["/explain [file] [function]  Explain a function", "/standup my standup"]);
  assert.deepEqual(seen.inputs, ["/explain [file] [function]"]);
  assert.ok(seen.info[0].includes("bad.md"));
  assert.deepEqual(calls, [
    ["deepseek.listCommands", {}],
    ["deepseek.runCommand", { name: "explain", arguments: "app.py add", uri: "file:///w/app.py" }],
  ]);
});

test("dismissing the pick or the arguments runs nothing; none at all is said with the server's notice", async () => {
  for (const [pick, typed] of [[undefined, "x"], [0, undefined]] as const) {
    const { api, calls } = fakeServer(LIST);
    assert.equal(await runCustomCommand(api, fakeUI(pick, typed).ui), undefined);
    assert.deepEqual(calls.map((c) => c[0]), ["deepseek.listCommands"]);
  }
  const { api } = fakeServer({ commands: [], problems: [], notice: "this workspace ships custom commands or skills" });
  const { ui, seen } = fakeUI(0, "");
  assert.equal(await runCustomCommand(api, ui), undefined);
  assert.ok(seen.info[0].includes("no custom commands here") && seen.info[0].includes("ships custom commands"));
});

test("a panel prompt starting with a slash is a command; a double slash is a prompt", () => {
  assert.deepEqual(parseSlash("/explain app.py add"), { name: "explain", arguments: "app.py add" });
  assert.deepEqual(parseSlash("  /standup  "), { name: "standup", arguments: "" });
  assert.equal(parseSlash("//explain"), null);
  assert.equal(parseSlash("explain /this"), null);
});

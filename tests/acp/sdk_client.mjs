// An ACP client written against the official TypeScript SDK (@agentclientprotocol/sdk 1.x, its
// ClientSideConnection), for the tests in tests/acp: it starts an agent, runs the steps of a scenario
// and prints one JSON report on stdout. It plays an editor whose person has unsaved typing
// (`buffers`: fs/read_text_file answers them; fs/write_text_file replaces them and saves to disk, as
// Zed does), and who may say no: `refuse.read` / `refuse.write` answer those requests with an error,
// `permission` picks an option id (or "cancel"). Like a real client it exits non-zero when a request
// it made failed.
//
//   node sdk_client.mjs SCENARIO.json        (ACP_CLIENTS: the .tools/acp prefix holding the SDK)
//
// Scenario: {agent: [command, ...args], agentCwd, env, fs: bool, buffers: {path: text},
//            refuse: {read, write}, permission, steps: [{op: "new", cwd} | {op: "prompt", text}
//            | {op: "set_config_option", configId, value} | {op: "set_mode", modeId}
//            | {op: "client", permission?, refuse?}]}
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const prefix = process.env.ACP_CLIENTS;
const sdkPath = createRequire(join(prefix, "package.json")).resolve("@agentclientprotocol/sdk");
const acp = await import(pathToFileURL(sdkPath).href);

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const buffers = { ...(scenario.buffers ?? {}) };
const behaviour = { permission: scenario.permission ?? "allow_once", refuse: scenario.refuse ?? {} };
const report = { steps: [], updates: [], permissions: [], reads: [], writes: [], refused: [] };

class Editor {
  async sessionUpdate({ sessionId, update }) {
    report.updates.push({ sessionId, ...update });
  }

  async requestPermission({ toolCall, options }) {
    report.permissions.push({ toolCall, options: options.map((o) => o.optionId) });
    if (behaviour.permission === "cancel") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: behaviour.permission } };
  }

  async readTextFile({ path }) {
    report.reads.push(path);
    if (behaviour.refuse.read) {
      report.refused.push(["read", path]);
      throw acp.RequestError.internalError({ reason: "the person did not allow reading" }, `read of ${path} refused`);
    }
    return { content: path in buffers ? buffers[path] : readFileSync(path, "utf8") };
  }

  async writeTextFile({ path, content }) {
    if (behaviour.refuse.write) {
      report.refused.push(["write", path]);
      throw acp.RequestError.internalError({ reason: "the person did not allow writing" }, `write of ${path} refused`);
    }
    report.writes.push({ path, content });
    buffers[path] = content;
    writeFileSync(path, content); // the editor saves what it was given, as Zed does
    return {};
  }
}

const child = spawn(scenario.agent[0], scenario.agent.slice(1), {
  cwd: scenario.agentCwd, env: scenario.env, stdio: ["pipe", "pipe", "inherit"],
});
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const conn = new acp.ClientSideConnection(() => new Editor(), stream);

function failure(error) {
  return { code: error?.code ?? null, message: String(error?.message ?? error), data: error?.data ?? null };
}

let failed = false;
let sessionId = null;
async function run(step) {
  switch (step.op) {
    case "new": {
      const res = await conn.newSession({ cwd: step.cwd, mcpServers: [] });
      sessionId = res.sessionId;
      return res;
    }
    case "prompt":
      return conn.prompt({ sessionId, prompt: [{ type: "text", text: step.text }] });
    case "set_config_option":
      return conn.setSessionConfigOption({ sessionId, configId: step.configId, value: step.value });
    case "set_mode":
      return conn.setSessionMode({ sessionId, modeId: step.modeId });
    case "client":
      if (step.permission !== undefined) behaviour.permission = step.permission;
      if (step.refuse !== undefined) behaviour.refuse = step.refuse;
      return {};
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}

try {
  report.initialize = await conn.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: scenario.fs === false ? {} : { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: "deepseek-ls-tests-sdk-client", version: "1" },
  });
  for (const step of scenario.steps) {
    try {
      report.steps.push({ op: step.op, result: (await run(step)) ?? null });
    } catch (error) {
      failed = true;
      report.steps.push({ op: step.op, error: failure(error) });
      if (step.op === "new") break; // nothing to prompt
    }
  }
} catch (error) {
  failed = true;
  report.steps.push({ op: "initialize", error: failure(error) });
} finally {
  report.buffers = buffers;
  child.stdin.end();
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => child.kill("SIGTERM"), 10000);
  report.agentExit = child.exitCode ?? (await exited);
  clearTimeout(timer);
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exitCode = failed ? 1 : 0;
}

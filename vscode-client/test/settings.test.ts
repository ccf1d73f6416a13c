import assert from "node:assert/strict";
import { test } from "node:test";
import { configOverrides, initializationOptions, needsRestart, readSettings, type SettingsSource } from "../src/settings";

function source(values: Record<string, unknown>): SettingsSource {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

test("defaults when nothing is set", () => {
  const s = readSettings(source({}));
  assert.deepEqual(s.serverCommand, []);
  assert.equal(s.routerMode, "auto");
  assert.equal(s.agentMode, "agent");
  assert.equal(s.approval, "suggest");
});

test("a bad value falls back to the default", () => {
  const s = readSettings(source({ "router.mode": "turbo", "agent.mode": 3, "server.command": [1, "deepseek-ls"] }));
  assert.equal(s.routerMode, "auto");
  assert.equal(s.agentMode, "agent");
  assert.deepEqual(s.serverCommand, ["deepseek-ls"]);
});

test("a command given as one string becomes a one-element list", () => {
  assert.deepEqual(readSettings(source({ "server.command": " /opt/ds/bin/deepseek-ls " })).serverCommand, ["/opt/ds/bin/deepseek-ls"]);
});

test("server env keeps scalar values as strings and drops objects", () => {
  const s = readSettings(source({ "server.env": { A: "1", B: 2, C: { nested: true } } }));
  assert.deepEqual(s.serverEnv, { A: "1", B: "2" });
});

test("overrides use the server's Config sections and keys", () => {
  const s = readSettings(source({ "router.mode": "max-think", "agent.mode": "plan", "agent.approval": "never" }));
  assert.deepEqual(configOverrides(s), {
    router: { force_profile: "max_think" },
    agent_loop: { mode: "plan" },
    policy: { approval_mode: "never" },
  });
});

test("switching back to auto clears a forced profile", () => {
  const s = readSettings(source({ "router.mode": "auto" }));
  assert.equal((initializationOptions(s).router as { force_profile: unknown }).force_profile, null);
});

test("server settings need a restart, router settings do not", () => {
  assert.equal(needsRestart((k) => k === "deepseek.server.command"), true);
  assert.equal(needsRestart((k) => k === "deepseek.llm.baseUrl"), true);
  assert.equal(needsRestart((k) => k === "deepseek.router.mode"), false);
});

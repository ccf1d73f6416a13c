import assert from "node:assert/strict";
import { test } from "node:test";
import { mcpItems, type McpStatus } from "../src/mcp";

const ready = {
  name: "time", type: "stdio", source: "/u/config.toml", approved: true, enabled: true, state: "ready", hint: null, error: null,
  offered: [{ name: "mcp_time_get_current_time", read_only: true }, { name: "mcp_time_set", read_only: false }],
};

test("a ready server lists its tools, marking the ones that ask", () => {
  const [item] = mcpItems({ servers: [ready], pending: [], warnings: [] });
  assert.equal(item.label, "$(pass) time");
  assert.match(item.description, /^ready · stdio · \/u\/config.toml$/);
  assert.equal(item.detail, "mcp_time_get_current_time, mcp_time_set (asks)");
});

test("a repository server waiting for approval is shielded and offers Approve…", () => {
  const status: McpStatus = {
    servers: [{ ...ready, name: "repo", approved: false, state: "not started", hint: "not approved", offered: [] }],
    pending: [{ name: "repo", runs: "node srv.js", source: ".mcp.json" }],
    warnings: [],
  };
  const items = mcpItems(status);
  assert.equal(items[0].label, "$(shield) repo");
  assert.match(items[0].description, /^not approved/);
  assert.equal(items[1].approve, true);
  assert.match(items[1].description, /repo: node srv\.js/);
});

test("a failed server shows its error instead of tools", () => {
  const [item] = mcpItems({ servers: [{ ...ready, state: "failed", error: "command not found", offered: [] }], pending: [], warnings: [] });
  assert.equal(item.label, "$(error) time");
  assert.equal(item.detail, "error: command not found");
});

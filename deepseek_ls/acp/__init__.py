"""The Agent Client Protocol adapter (`deepseek-ls acp`): Zed, JetBrains, CodeCompanion, …

- `server`: the ACP methods (initialize, session/new|load|list|prompt|cancel|set_mode);
- `ui`: the core's `UIPort` as `session/update`s and `session/request_permission`;
- `updates`: our plans, patches and event logs as ACP updates (pure);
- `sessions`: which of our sessions each ACP session ran (`.deepseek/acp/`);
- `wiring`: one `Agent` per ACP session, reading and writing files through the client;
- `transport`: the stdio JSON-RPC framing (a malformed line is answered, never the end).

The core never imports this package (docs/architecture.md).
"""

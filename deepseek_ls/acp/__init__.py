"""The Agent Client Protocol adapter (`deepseek-ls acp`): Zed, JetBrains, CodeCompanion, …

- `server`: the ACP methods (initialize, session/new|load|list|prompt|cancel|set_mode|set_config_option);
- `options`: a session's `configOptions` (mode, model profile, approval);
- `errors`: a failed request as the JSON-RPC error it answers (`auth_required` for a missing key);
- `ui`: the core's `UIPort` as `session/update`s and `session/request_permission`;
- `updates`: our plans, patches and event logs as ACP updates (pure);
- `sessions`: which of our sessions each ACP session ran (`.deepseek/acp/`);
- `wiring`: one `Agent` per ACP session, with its workspace's config and the client's files;
- `client_files`, `client_apply`: reading, applying and undoing through the client's files;
- `transport`: the stdio JSON-RPC framing (a malformed line is answered, never the end).

The core never imports this package (docs/architecture.md).
"""

"""Workspace trust over LSP: the editor is told when a repository's config is held back, and
`deepseek.trustWorkspace` / `deepseek.untrustWorkspace` change what applies."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from deepseek_ls.lsp import names

from lsp_harness import start_client, wait_until


async def test_untrusted_workspace_config_is_reported_and_trust_applies_it(
    workspace: Path, client_name: str, server_env: dict[str, str], tmp_path: Path
) -> None:
    (workspace / ".deepseek").mkdir()
    (workspace / ".deepseek" / "config.toml").write_text('[policy]\napproval_mode = "auto"\n')
    client, _, _ = await start_client(workspace, client_name, server_env)
    try:
        warnings = await wait_until(
            lambda: [m for m in client.messages if "ignoring settings that loosen policy" in m.message]
        )
        assert warnings[0].type == types.MessageType.Warning
        assert "policy.approval_mode" in warnings[0].message

        trusted = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=names.CMD_TRUST_WORKSPACE, arguments=[{}])
        )
        assert trusted["trusted"] is True and trusted["warning"] is None
        assert (tmp_path / "xdg-config" / "deepseek-ls" / "trusted-workspaces.json").is_file()

        revoked = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=names.CMD_UNTRUST_WORKSPACE, arguments=[{}])
        )
        assert revoked["trusted"] is False and revoked["was_trusted"] is True
        assert "policy.approval_mode" in revoked["warning"]
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_no_leak_a_secret_buffer_is_not_sent_as_context(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    from pygls.uris import from_fs_path

    from lsp_harness import open_doc, run

    client, _ = agent_editor
    canary = "canaryqwertyzebra"
    (app_workspace / ".env").write_text(f"NOTE={canary}\n")
    uri = from_fs_path(str(app_workspace / ".env"))
    open_doc(client, uri, f"NOTE={canary}\n")
    fake_deepseek.add({"match": {"role": "ask"}, "content": "No."})
    answer = await run(client, names.CMD_ASK, {"prompt": "what is in this file?", "uri": uri})
    assert answer["content"] == "No."
    assert canary not in json.dumps([r.body for r in fake_deepseek.requests])
    shown = await wait_until(lambda: [m for m in client.messages if "secret file" in m.message])
    assert shown[0].type == types.MessageType.Warning

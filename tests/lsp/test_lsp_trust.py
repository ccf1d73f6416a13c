"""Workspace trust over LSP: the editor is told when a repository's config is held back, and
`deepseek.trustWorkspace` / `deepseek.untrustWorkspace` change what applies."""

from __future__ import annotations

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

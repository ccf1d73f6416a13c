"""The server starts, initializes, survives bad input and shuts down cleanly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names

from lsp_harness import file_uri, lenses, open_doc, start_client, wait_until


async def test_initialize_advertises_every_command_and_shuts_down_cleanly(
    workspace: Path, client_name: str, server_env: dict[str, str]
) -> None:
    client, state, result = await start_client(workspace, client_name, server_env)
    caps = result.capabilities
    assert result.server_info is not None and result.server_info.name == "deepseek-ls"
    assert set(caps.execute_command_provider.commands) == set(names.ALL_COMMANDS)
    assert caps.code_lens_provider is not None
    assert caps.hover_provider
    first = await wait_until(lambda: state.notifications.get("deepseek/status"))
    assert first[0].state == "Idle"
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0
    await client.stop()


@pytest.mark.parametrize("command", [["deepseek-ls"], [sys.executable, "-m", "deepseek_ls"]], ids=["script", "module"])
async def test_both_entry_points_serve_stdio(
    command: list[str], workspace: Path, server_env: dict[str, str]
) -> None:
    if command[0] == "deepseek-ls":
        command = [str(Path(sys.executable).with_name("deepseek-ls"))]
        assert shutil.which(command[0]), "the deepseek-ls console script is installed"
    client, _, result = await start_client(
        workspace, "neovim", server_env, command=[*command, "serve", "--stdio"]
    )
    assert result.server_info is not None
    await client.shutdown_session()
    assert client._server.returncode == 0
    await client.stop()


async def test_unknown_method_and_bad_arguments_do_not_kill_the_server(editor) -> None:
    client, _ = editor
    with pytest.raises(JsonRpcException):
        await client.protocol.send_request_async("deepseek/noSuchMethod", {})
    with pytest.raises(JsonRpcException, match="request_id"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=names.CMD_APPROVE, arguments=[{"always": True}])
        )
    # Still serving: a well-formed request answers.
    pending = await client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})
    assert pending.approvals == []


async def test_bad_initialization_option_is_reported_and_defaults_kept(
    workspace: Path, client_name: str, server_env: dict[str, str]
) -> None:
    client, _, _ = await start_client(
        workspace, client_name, server_env, initialization_options={"router": {"threshold_high": "high"}}
    )
    message = await wait_until(lambda: [m for m in client.messages if "threshold_high" in m.message])
    assert message[0].type == types.MessageType.Error
    assert "previous value is kept" in message[0].message
    await client.shutdown_session()
    await client.stop()


async def test_bad_configuration_change_is_reported(editor) -> None:
    client, _ = editor
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"deepseek": {"index": {"max_file_bytes": -1}}})
    )
    shown = await wait_until(lambda: [m for m in client.messages if "max_file_bytes" in m.message])
    assert shown[0].type == types.MessageType.Error


async def test_browsing_files_creates_no_state(editor, workspace: Path) -> None:
    client, _ = editor
    (workspace / "a.py").write_text("x = 1\n")
    uri = file_uri(workspace, "a.py")
    open_doc(client, uri, "x = 1\n")
    assert not await lenses(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))
    )
    assert hover is None
    assert not (workspace / ".deepseek").exists()


def _frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


def _read_message(stream) -> dict:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def test_malformed_messages_do_not_kill_the_server(workspace: Path, server_env: dict[str, str]) -> None:
    """Raw bytes on stdin (a typed client cannot send these): broken JSON, a JSON
    array, then a real initialize that must still be answered."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env,
    )
    try:
        proc.stdin.write(_frame(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {'))
        proc.stdin.write(_frame(b"[1, 2, 3]"))
        init = {"jsonrpc": "2.0", "id": 2, "method": "initialize",
                "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}}
        proc.stdin.write(_frame(json.dumps(init).encode()))
        proc.stdin.flush()
        reply = _read_message(proc.stdout)
        while "id" not in reply:  # notifications (e.g. logs) may come first
            reply = _read_message(proc.stdout)
        assert reply["id"] == 2 and reply["result"]["serverInfo"]["name"] == "deepseek-ls"
        for message in ({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}):
            proc.stdin.write(_frame(json.dumps(message).encode()))
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stdin.close()
        stderr = proc.stderr.read().decode()
        proc.stderr.close()
    assert "rejected a message (-32700)" in stderr and "rejected a message (-32600)" in stderr

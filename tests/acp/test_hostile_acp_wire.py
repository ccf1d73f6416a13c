"""A hostile ACP client on the wire: lines the SDK's client side would never send, written raw to a
real `deepseek-ls acp` process. Every one is answered with the JSON-RPC error it deserves (or, for a
stray answer, dropped), and the agent keeps serving: the `initialize` sent after it is answered.

One process takes every line of the file, one after the other (it must keep serving after each);
a prompt sent before any `initialize` gets a process of its own, as it needs one never initialized."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from pathlib import Path

import pytest
import pytest_asyncio

from acp_kit import CLI

pytestmark = pytest.mark.asyncio(loop_scope="module")
_ids = itertools.count()


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_LS_USER_CONFIG": str(tmp / "user.toml"),
            "DEEPSEEK_LS_INDEX__ENABLED": "false"}


async def _start(workspace: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        CLI, "--workspace", str(workspace), "acp", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=_env(workspace), cwd=str(workspace), limit=1 << 20)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


async def _answers(proc: asyncio.subprocess.Process, line: bytes) -> tuple[list[dict], int | None, str]:
    """Send `line`, then an `initialize` with an id of its own; every message the agent wrote up to
    that answer, its exit code (None: still running) and that id."""
    assert proc.stdin is not None and proc.stdout is not None
    after = f"after-{next(_ids)}"
    init = {"jsonrpc": "2.0", "id": after, "method": "initialize", "params": {"protocolVersion": 1}}
    proc.stdin.write(line + b"\n" + json.dumps(init).encode() + b"\n")
    await proc.stdin.drain()
    seen: list[dict] = []
    while True:  # bounded only as a hang guard: the agent either answers or closes stdout
        raw = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not raw:
            break
        seen.append(json.loads(raw))
        if seen[-1].get("id") == after:
            break
    return seen, proc.returncode, after


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def agent(tmp_path_factory: pytest.TempPathFactory):
    proc = await _start(tmp_path_factory.mktemp("acp-wire"))
    try:
        yield proc
    finally:
        await _stop(proc)


def _check(seen: list[dict], exit_code: int | None, after: str, code: int | None, answered_id) -> None:
    assert exit_code is None and seen and seen[-1].get("id") == after, f"the agent stopped serving: {seen}"
    assert seen[-1]["result"]["protocolVersion"] == 1
    errors = [m for m in seen if "error" in m]
    if code is None:
        assert errors == []
    else:
        assert [(e["id"], e["error"]["code"]) for e in errors] == [(answered_id, code)]


@pytest.mark.parametrize(
    ("line", "code", "answered_id"),
    [
        pytest.param(b"[]", -32600, None, id="empty-batch"),
        pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]', -32600, None,
                     id="batch"),
        pytest.param(b'"session/prompt"', -32600, None, id="bare-string"),
        pytest.param(b"7", -32600, None, id="bare-number"),
        pytest.param(b"null", -32600, None, id="null-is-not-the-end"),
        pytest.param(b'{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":', -32700, 4, id="cut-json"),
        pytest.param(b"\xff\xfe{}", -32700, None, id="not-utf8"),
        pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}', -32600, None,
                     id="bool-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":{"a":1},"method":"session/list","params":{}}', -32600, None,
                     id="object-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":5,"method":"session/list","params":"all"}', -32600, 5, id="string-params"),
        pytest.param(b'{"jsonrpc":"2.0","id":6,"method":7}', -32600, 6, id="number-method"),
        pytest.param(b'{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":1,"prompt":"x"}}',
                     -32602, 6, id="wrong-typed-params"),
        pytest.param(b'{"jsonrpc":"2.0","id":[1],"result":{}}', None, None, id="answer-with-list-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":0,"error":"boom"}', None, None, id="answer-to-nothing"),
        pytest.param(b'{"jsonrpc":"2.0"}', None, None, id="neither-request-nor-answer"),
    ],
)
async def test_always_answers_malformed_lines_and_keeps_serving(agent, line, code, answered_id):
    _check(*await _answers(agent, line), code, answered_id)


async def test_always_answers_a_prompt_before_initialize(tmp_path):
    proc = await _start(tmp_path)
    try:
        seen, exit_code, after = await _answers(
            proc, b'{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"nope","prompt":[]}}')
    finally:
        await _stop(proc)
    _check(seen, exit_code, after, -32602, 6)


async def test_always_answers_a_line_over_the_size_cap(agent):
    """A single line larger than the cap is dropped without being kept whole, and its id answered."""
    from deepseek_ls.acp.transport import MAX_MESSAGE_BYTES

    huge = b'{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"x":"' + b"a" * (MAX_MESSAGE_BYTES + 10) + b'"}}'
    seen, exit_code, after = await _answers(agent, huge)
    assert exit_code is None and seen[-1].get("id") == after
    assert [(m["id"], m["error"]["code"]) for m in seen if "error" in m] == [(9, -32600)]

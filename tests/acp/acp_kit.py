"""The ACP test kit: clients driving a real `deepseek-ls acp` process.

- `RecordingClient` / `acp_agent`: the Python SDK's own client side (`ClientSideConnection`); it
  records every update and answers permissions and file access the way an editor would (files are
  read from and written to disk, as CodeCompanion does);
- `run_sdk_client`: `sdk_client.mjs`, a client written against the official TypeScript SDK, with
  unsaved buffers and a person who may refuse reads, writes and permissions;
- `run_acpx`: acpx, a headless ACP client we did not write, used as it is.

The two Node clients are installed by `scripts/setup-acp.sh` into `.tools/acp`; a missing one is a
failed set-up, never a skipped test."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from collections.abc import Iterator
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio

from acp import PROTOCOL_VERSION, spawn_agent_process  # type: ignore[attr-defined]
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

CLI = str(Path(sys.executable).parent / "deepseek-ls")
ACP_CLIENTS = Path(__file__).resolve().parents[2] / ".tools" / "acp"
SDK_CLIENT = Path(__file__).with_name("sdk_client.mjs")
ACPX = ACP_CLIENTS / "node_modules" / "acpx" / "dist" / "cli.js"
SDK = ACP_CLIENTS / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
CLIENT_TIMEOUT = 180


class RecordingClient:
    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer  # option id to pick; None cancels
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.permission_asked = asyncio.Event()
        self.hold_permission: asyncio.Event | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        self.permissions.append((tool_call, options))
        self.permission_asked.set()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    def kinds(self) -> list[str]:
        return [getattr(u, "session_update", type(u).__name__) for u in self.updates]

    def text(self, kind: str) -> str:
        return "".join(u.content.text for u in self.updates
                       if getattr(u, "session_update", None) == kind and getattr(u.content, "type", "") == "text")


FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))


@contextlib.asynccontextmanager
async def acp_agent(client: RecordingClient, workspace: Path, env: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    async with spawn_agent_process(client, CLI, "--workspace", str(workspace), "acp", env=env, cwd=str(workspace)) as (
        conn, proc,
    ):
        try:
            yield conn, proc
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except asyncio.TimeoutError:
                    proc.kill()


class Switchboard:
    """The client side of one `deepseek-ls acp` process shared by a file's tests: each call goes to
    the client of the test running now (`current`, a fresh `RecordingClient` or subclass per test),
    as if that test had started the process itself."""

    def __init__(self) -> None:
        self.current: RecordingClient | None = None
        self.owners: dict[str, RecordingClient] = {}  # session id -> the client of the test that opened it

    def _client(self, session_id: str) -> RecordingClient:
        client = self.owners.get(session_id, self.current)  # a session not yet opened: the test opening it
        if client is None:
            raise RuntimeError(f"a call for session {session_id} before any test")
        return client

    async def open(self, conn: Any, client: RecordingClient, workspace: Path, mode: str | None = None) -> Any:
        """A new session in `workspace` whose calls go to `client` (this test's); its `session/new` answer."""
        self.current = client
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        self.owners[new.session_id] = client
        if mode:
            await conn.set_session_mode(session_id=new.session_id, mode_id=mode)
        return new

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await self._client(session_id).session_update(session_id, update, **kwargs)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any):
        return await self._client(session_id).request_permission(session_id, tool_call, options, **kwargs)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any):
        return await self._client(session_id).read_text_file(session_id, path, line, limit, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        return await self._client(session_id).write_text_file(session_id, path, content, **kwargs)


@contextlib.asynccontextmanager
async def shared_acp_agent(fake, tmp: Path) -> AsyncIterator[tuple[Switchboard, Any, Any]]:
    """One initialized `deepseek-ls acp` process for a file's tests (module-scoped fixture): start-up
    and imports are paid once, not per test. It runs in a workspace of its own under `tmp`, with
    XDG directories of its own; each test opens its session in a fresh workspace (`session/new`
    with that `cwd`), talks through the `Switchboard`, and `fake.reset()`s the shared fake first.
    Tests about the process itself (a client that leaves, what is left when it exits) start their own."""
    from deepseek_ls.testkit.home_guard import XDG_DIRS

    board = Switchboard()
    home = fix_add_workspace(tmp, "agent-home")
    env = {**agent_env(fake, tmp), **{var: str(tmp / name) for var, (_, name) in XDG_DIRS.items()}}
    async with acp_agent(board, home, env) as (conn, proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        yield board, conn, proc


# The fixtures of a file whose tests share one agent process: import them into the test module
# (`from acp_kit import agent, fake_deepseek, shared_fake`); `fake_deepseek` then is the shared fake,
# emptied for each test.
@pytest.fixture(scope="module")
def shared_fake() -> Iterator[Any]:
    from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

    with FakeDeepSeek() as fake:
        yield fake


@pytest.fixture
def fake_deepseek(shared_fake: Any) -> Any:
    shared_fake.reset()
    return shared_fake


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def agent(shared_fake: Any, tmp_path_factory: pytest.TempPathFactory):
    async with shared_acp_agent(shared_fake, tmp_path_factory.mktemp("acp-agent")) as shared:
        yield shared


@contextlib.asynccontextmanager
async def shared_session(agent: tuple[Switchboard, Any, Any], client: RecordingClient, workspace: Path,
                         mode: str | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """A session of the shared agent in this test's workspace, its calls answered by `client`:
    the connection and the `session/new` answer."""
    board, conn, proc = agent
    yield conn, await board.open(conn, client, workspace, mode)
    assert proc.returncode is None, "the shared ACP agent exited"


def agent_env(fake, tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DEEPSEEK_BASE_URL": fake.base_url,
        "DEEPSEEK_API_KEY": "test-key",
        "DEEPSEEK_LS_USER_CONFIG": str(tmp / "user-config.toml"),
        "DEEPSEEK_LS_INDEX__ENABLED": "false",
        "DEEPSEEK_LS_LLM__MAX_RETRIES": "0",
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # verification's pytest: the venv's plugins cost seconds
    }


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is required for the third-party ACP clients (acpx, the TypeScript SDK)", pytrace=False)
    for path, name in ((ACPX, "acpx"), (SDK, "@agentclientprotocol/sdk")):
        if not path.is_file():
            pytest.fail(f"{name} is not installed in {ACP_CLIENTS}: run scripts/setup-acp.sh "
                        "(scripts/setup.sh --all does)", pytrace=False)
    return node


def run_sdk_client(tmp_path: Path, env: dict[str, str], steps: list[dict[str, Any]], *,
                   agent_args: list[str] | None = None, agent_cwd: Path | None = None,
                   **scenario: Any) -> tuple[dict[str, Any], int]:
    """Run `sdk_client.mjs` (the TypeScript SDK's `ClientSideConnection`) against `deepseek-ls acp`:
    the scenario's `steps`, and `buffers`, `refuse`, `permission`, `fs` as `sdk_client.mjs` says.
    Returns its report and its exit code (non-zero: a request it made failed)."""
    spec = {"agent": [CLI, *(agent_args or []), "acp"], "agentCwd": str(agent_cwd or tmp_path), "env": env,
            "steps": steps, **scenario}
    path = tmp_path / f"sdk-scenario-{len(list(tmp_path.glob('sdk-scenario-*.json')))}.json"
    path.write_text(json.dumps(spec))
    out = subprocess.run([_node(), str(SDK_CLIENT), str(path)], env={**env, "ACP_CLIENTS": str(ACP_CLIENTS)},
                         capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    lines = out.stdout.strip().splitlines()
    if not lines:
        pytest.fail(f"sdk_client.mjs printed no report (exit {out.returncode}): {out.stderr[-3000:]}", pytrace=False)
    return json.loads(lines[-1]), out.returncode


def run_acpx(tmp_path: Path, env: dict[str, str], *flags: str, prompt: str, cwd: Path,
             agent_args: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """`acpx [flags] --agent 'deepseek-ls [agent_args] acp' exec PROMPT` in `cwd`, as a person runs it
    (its state under a home of its own); JSON lines on stdout with `--format json`."""
    agent = shlex.join([CLI, *(agent_args or []), "acp"])
    home = tmp_path / "acpx-home"
    home.mkdir(exist_ok=True)
    return subprocess.run([_node(), str(ACPX), *flags, "--agent", agent, "--cwd", str(cwd), "exec", prompt],
                          cwd=cwd, env={**env, "HOME": str(home)}, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=CLIENT_TIMEOUT)


def updates_of(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The `session/update`s of one kind an SDK client report holds, in order."""
    return [u for u in report["updates"] if u.get("sessionUpdate") == kind]


def said(report: dict[str, Any], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"].get("text", "") for u in updates_of(report, kind))


def fix_add_workspace(tmp_path: Path, name: str = "ws") -> Path:
    """A git workspace `tmp_path/name` whose `add` subtracts (scenario_kit's APP), with its test."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
    from scenario_kit import write_app

    root = write_app(tmp_path / name)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def events_of(workspace: Path) -> list[dict[str, Any]]:
    """Every event of every session in the workspace; each line must parse (nothing torn)."""
    out = []
    for log in sorted((workspace / ".deepseek" / "sessions").glob("*/events.jsonl")):
        out += [json.loads(line) for line in log.read_text().splitlines()]
    return out

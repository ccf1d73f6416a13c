"""The ACP test client: the SDK's own client side (`ClientSideConnection`) driving a real
`deepseek-ls acp` process; it records every update and answers permissions and file access
the way an editor would (files are read from and written to disk, as CodeCompanion does)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from acp import spawn_agent_process  # type: ignore[attr-defined]
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


def agent_env(fake, tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DEEPSEEK_BASE_URL": fake.base_url,
        "DEEPSEEK_API_KEY": "test-key",
        "DEEPSEEK_LS_USER_CONFIG": str(tmp / "user-config.toml"),
        "DEEPSEEK_LS_INDEX__ENABLED": "false",
        "DEEPSEEK_LS_LLM__MAX_RETRIES": "0",
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }

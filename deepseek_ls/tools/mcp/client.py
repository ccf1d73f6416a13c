"""One live MCP server: start it, list its tools, call them, notice when it dies, restart it.

Built on the official `mcp` SDK (`ClientSession` over `stdio_client`,
`streamable_http_client` or `sse_client`). The SDK's transports are async context
managers that must be entered and left by the same task, so each connection has one
runner task holding them open until `stop()`; calls from any task go through its
`ClientSession`. Every wait is bounded: start-up by `startup_timeout_seconds`, each call
by `timeout_seconds`. A server that exits, or a call that times out (a hung server), ends
the connection; the next use restarts it after an exponential backoff, at most
`max_restarts` times in a row before it is reported as failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from deepseek_ls.config_models import McpServerConfig
from deepseek_ls.policy.launch import exec_error
from deepseek_ls.policy.log_gate import RedactedStderr
from deepseek_ls.tools.mcp.servers import McpConfigError, McpServerSpec, expanded

log = logging.getLogger(__name__)

State = Literal["stopped", "starting", "ready", "crashed", "failed"]


class McpUnavailable(RuntimeError):
    """The server could not be started (or restarted); the message says why and what to do."""


class McpCallError(RuntimeError):
    """One call failed: the server answered an error, timed out, or died during the call."""


@dataclass(frozen=True)
class McpToolInfo:
    server: str
    name: str  # as the server names it
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    @property
    def fingerprint(self) -> str:
        """What the model was offered and the person approved: description, schema, read-only hint."""
        body = json.dumps([self.description, self.input_schema, self.read_only], sort_keys=True, default=str)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]


class McpConnection:
    def __init__(
        self,
        spec: McpServerSpec,
        *,
        env: Mapping[str, str],
        cwd: Path,
        log_dir: Path | None,
        max_restarts: int,
        backoff_seconds: float,
    ) -> None:
        self.spec = spec
        self.env = env
        self.cwd = cwd
        self.log_dir = log_dir
        self.max_restarts = max_restarts
        self.backoff_seconds = backoff_seconds
        self.state: State = "stopped"
        self.error: str | None = None
        self.tools: list[McpToolInfo] = []
        self.failures = 0  # consecutive failed starts / crashes
        self.starts = 0
        self._session: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._not_before = 0.0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def config(self) -> McpServerConfig:
        return self.spec.config

    # -- lifecycle ----------------------------------------------------------------

    async def ensure_started(self) -> None:
        """Start (or restart) the server unless it is ready; raise `McpUnavailable` when it cannot be."""
        async with self._lock:
            if self.state == "ready" and self._runner is not None and not self._runner.done():
                return
            if self.state == "failed":
                raise McpUnavailable(self._failed_message())
            wait = self._not_before - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            await self._start()

    async def _start(self) -> None:
        await self._teardown()
        try:
            config = expanded(self.spec, self.env)
        except McpConfigError as exc:
            self.state, self.error = "failed", str(exc)
            raise McpUnavailable(str(exc)) from None
        self.state, self.error = "starting", None
        self.starts += 1
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[McpToolInfo]] = loop.create_future()
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(self._run(config, ready, self._stop), name=f"mcp:{self.name}")
        try:
            self.tools = await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout_seconds)
        except asyncio.TimeoutError:
            await self._teardown(grace=0)
            self._note_failure(f"did not finish starting within {self.config.startup_timeout_seconds:g} s")
            raise McpUnavailable(self._why()) from None
        except Exception as exc:  # noqa: BLE001 - the transport's own error, reported as a sentence
            await self._teardown(grace=0)
            self._note_failure(_describe(exc))
            raise McpUnavailable(self._why()) from None
        self.state = "ready"
        self.failures = 0

    async def _run(self, config: McpServerConfig, ready: asyncio.Future[list[McpToolInfo]], stop: asyncio.Event) -> None:
        from mcp import ClientSession

        errlog = self._open_log()
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport(config, errlog))
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                tools = await self._list_tools(session)
                self._session = session
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - a dying server must not take the agent with it
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            elif not stop.is_set():
                self._crashed(_describe(exc))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._session = None
            if errlog is not None:
                errlog.close()
            if self.state == "ready" and not stop.is_set():
                self._crashed("the server closed the connection")

    def _transport(self, config: McpServerConfig, errlog: Any) -> Any:
        if config.type == "stdio":
            import sys

            from mcp import StdioServerParameters, stdio_client

            cwd = Path(config.cwd) if config.cwd else self.cwd
            if not cwd.is_absolute():
                cwd = self.cwd / cwd
            # "replace": a line of bytes that are not UTF-8 is one bad message (logged, skipped), where
            # "strict" ended the reader and every later answer waited for the call's timeout.
            params = StdioServerParameters(command=config.command or "", args=config.args, env=config.env or None, cwd=cwd,
                                           encoding_error_handler="replace")
            return stdio_client(params, errlog=errlog or sys.stderr)
        if config.type == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url or "", headers=config.headers or None, timeout=config.startup_timeout_seconds)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(
            headers=config.headers or None,
            timeout=httpx2.Timeout(config.startup_timeout_seconds, read=config.timeout_seconds + 5),
        )
        return _owning(client, streamable_http_client(config.url or "", http_client=client))

    async def _list_tools(self, session: Any) -> list[McpToolInfo]:
        tools: list[McpToolInfo] = []
        cursor: str | None = None
        for _ in range(50):  # pages; a server that pages forever is cut off
            if cursor:
                from mcp_types import PaginatedRequestParams

                page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            else:
                page = await session.list_tools()
            for t in page.tools:
                hints = t.annotations
                tools.append(
                    McpToolInfo(
                        server=self.name,
                        name=t.name,
                        description=(t.description or t.title or "")[:1024],
                        input_schema=dict(t.input_schema or {"type": "object"}),
                        read_only=bool(hints is not None and hints.read_only_hint),
                    )
                )
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                break
        return tools

    def _open_log(self) -> Any:
        if self.log_dir is None or self.config.type != "stdio":
            return None
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            # Through redaction: a server prints what it read, an error quoting a key, its env.
            return RedactedStderr(self.log_dir / f"{self.name}.log")
        except OSError:
            return None

    # -- calls --------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """`CallToolResult` of one call; raises `McpUnavailable` / `McpCallError` with a readable reason."""
        await self.ensure_started()
        session = self._session
        if session is None:
            raise McpCallError(f"MCP server {self.name!r} is not connected")
        timeout = self.config.timeout_seconds
        try:
            # The SDK's own read timeout, and ours around it in case the transport itself hangs.
            return await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 5
            )
        except Exception as exc:  # noqa: BLE001
            from mcp import MCPError
            from mcp_types import REQUEST_TIMEOUT

            if isinstance(exc, asyncio.TimeoutError) or getattr(exc, "code", None) == REQUEST_TIMEOUT:
                # A hung server may hang every later call too: end it; the next use restarts it.
                await self._abandon(f"the call to {tool!r} did not answer within {timeout:g} s")
                raise McpCallError(
                    f"MCP server {self.name!r}: {tool} timed out after {timeout:g} s; the server will be restarted"
                ) from None
            if isinstance(exc, MCPError) and not _is_transport_error(exc):
                raise McpCallError(f"MCP server {self.name!r} refused {tool}: {exc.error.message}"[:500]) from None
            reason = _describe(exc)
            await self._abandon(reason)
            raise McpCallError(f"MCP server {self.name!r} failed during {tool}: {reason}"[:500]) from None

    async def _abandon(self, reason: str) -> None:
        self._crashed(reason)
        await self._teardown(grace=0)

    def _crashed(self, reason: str) -> None:
        if self.state in ("stopped", "failed"):
            return
        self._note_failure(reason)
        log.warning("MCP server %s: %s", self.name, reason)

    def _note_failure(self, reason: str) -> None:
        self.failures += 1
        self.error = reason
        if self.failures > self.max_restarts:
            self.state = "failed"
        else:
            self.state = "crashed"
            self._not_before = time.monotonic() + self.backoff_seconds * (2 ** (self.failures - 1))

    def _why(self) -> str:
        if self.state == "failed":
            return self._failed_message()
        return f"MCP server {self.name!r} could not start: {self.error}"

    def _failed_message(self) -> str:
        return (
            f"MCP server {self.name!r} is unavailable ({self.error}); gave up after "
            f"{self.failures} failure(s). Check it with `deepseek-ls mcp test {self.name}`"
        )

    async def stop(self) -> None:
        await self._teardown()
        self.state = "stopped"

    async def _teardown(self, grace: float = 5.0) -> None:
        """End the runner: ask it to leave its transport (closing the server) within `grace` seconds,
        then cancel it (the transport's exit still terminates the server process)."""
        runner, self._runner = self._runner, None
        if self._stop is not None:
            self._stop.set()
        if runner is None:
            return
        try:
            if grace <= 0:
                raise asyncio.TimeoutError
            await asyncio.wait_for(asyncio.shield(runner), grace)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001
            runner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(runner, 5)
        self._session = None


@contextlib.asynccontextmanager
async def _owning(client: Any, transport: Any) -> Any:
    """Enter `transport`, and close the HTTP client it was given when it is left."""
    async with client:
        async with transport as streams:
            yield streams


def _is_transport_error(exc: Exception) -> bool:
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    return getattr(exc, "code", None) in (CONNECTION_CLOSED, REQUEST_TIMEOUT)


# A server command that could not start (missing, not executable, a directory, a bad #! line, exec format).
_EXEC_ERRORS = (errno.ENOENT, errno.EACCES, errno.EPERM, errno.ENOEXEC, errno.ENOTDIR, errno.EISDIR)


def _describe(exc: BaseException) -> str:
    """One readable line for an exception, digging into exception groups (anyio's task groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.errno in _EXEC_ERRORS:
        return str(exec_error(str(exc.filename or "the server's command"), exc))  # could not start: why, what to do
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]

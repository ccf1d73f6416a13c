"""A raw-bytes LSP client for the transport tests: the real `deepseek-ls serve
--stdio` process, bytes written as given (broken frames included), every
message the server sends parsed and recorded. Server→client requests are
answered by `on_request` (its return value is the JSON answer, or `NO_ANSWER`).

Writing goes through one writer thread and reading through one reader thread,
so the test never blocks on a pipe while the server blocks on the other one.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

NO_ANSWER = object()
SERVER = [sys.executable, "-m", "deepseek_ls", "serve", "--stdio"]


def frame(body: bytes, header: bytes | None = None) -> bytes:
    return (header if header is not None else b"Content-Length: %d\r\n\r\n" % len(body)) + body


def encode(message: Any) -> bytes:
    return frame(json.dumps(message).encode())


def capabilities() -> dict[str, Any]:
    return {
        "window": {"workDoneProgress": True, "showMessage": {}},
        "workspace": {
            "applyEdit": True,
            "workspaceEdit": {"documentChanges": True},
            "codeLens": {"refreshSupport": True},
            "didChangeWatchedFiles": {"dynamicRegistration": True},
        },
        "general": {"positionEncodings": ["utf-16"]},
    }


class RawServer:
    def __init__(
        self,
        root: Path,
        env: dict[str, str],
        args: list[str] | None = None,
        on_request: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.root = root
        self.on_request = on_request or (lambda message: None)
        self.proc = subprocess.Popen(
            [*SERVER, *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=root,
        )
        self.answers: dict[Any, list[dict[str, Any]]] = {}
        self.null_id_errors: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.unparseable: list[bytes] = []
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._write, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # Threads -------------------------------------------------------------------------

    def _write(self) -> None:
        while (data := self._out.get()) is not None:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                return

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self._stderr.append(line)

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = stream.read(length or 0)
            try:
                message = json.loads(body)
            except ValueError:
                self.unparseable.append(body)
                continue
            self._received(message)

    def _received(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            answer = self.on_request(message)
            if answer is not NO_ANSWER:
                self.send_raw(answer if isinstance(answer, bytes) else encode({"jsonrpc": "2.0", "id": message["id"], "result": answer}))
            return
        with self._cond:
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.null_id_errors.append(message)
            else:
                self.answers.setdefault(message["id"], []).append(message)
            self._cond.notify_all()

    # Sending ---------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        self._out.put(data)

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(encode(message))

    def new_id(self) -> int:
        return next(self._ids)

    def request(self, method: str, params: Any = None, *, msg_id: Any = None) -> Any:
        msg_id = self.new_id() if msg_id is None else msg_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # Waiting ---------------------------------------------------------------------------

    def wait(self, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not (value := predicate()):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    value = predicate()
                    if value:
                        return value
                    raise AssertionError(f"condition not met within {timeout} s (server exit code {self.proc.poll()})")
                self._cond.wait(min(left, 0.2))
            return value

    def answer(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait(lambda: (self.answers.get(msg_id) or [None])[0], timeout)

    def call(self, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any]:
        return self.answer(self.request(method, params), timeout)

    def initialize(self, caps: dict[str, Any] | None = None, options: Any = None) -> dict[str, Any]:
        params = {
            "processId": None,
            "rootUri": self.root.as_uri(),
            "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
            "capabilities": caps if caps is not None else capabilities(),
            "initializationOptions": options,
        }
        reply = self.call("initialize", params)
        self.notify("initialized", {})
        return reply

    def stderr(self) -> str:
        return b"".join(self._stderr).decode(errors="replace")

    def close(self, timeout: float = 30.0) -> int:
        """shutdown + exit; the exit code (kills the process if it does not exit)."""
        try:
            if self.proc.poll() is None:
                self.call("shutdown", timeout=timeout)
                self.notify("exit")
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._out.put(None)


def serving(tmp: Path, args: list[str] | None = None) -> Iterator[RawServer]:
    """An initialized server on a fresh git workspace under `tmp`, shut down cleanly
    (exit code 0) at the end: a module's shared server for table-driven cases."""
    root = tmp / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    server = RawServer(root, server_env(tmp), args)
    assert "result" in server.initialize()
    yield server
    code = server.close()
    assert code == 0, server.stderr()[-3000:]


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg-config")
    env.setdefault("DEEPSEEK_API_KEY", "test-key")
    # A closed loopback port: nothing in these tests may reach a network.
    env["DEEPSEEK_BASE_URL"] = "http://127.0.0.1:9"
    env["DEEPSEEK_LS_LOG"] = "info"
    env.update(extra)
    return env

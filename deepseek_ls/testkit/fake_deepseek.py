"""A fake DeepSeek API server on loopback, answering from a script.

In-process (pytest, benches)::

    with FakeDeepSeek([{"content": "hello"}]) as fake:
        ...  # point a client at fake.base_url
        assert fake.requests[0].role == "ask"

As a process (editor end-to-end tests)::

    python -m deepseek_ls.testkit.fake_deepseek --port 0 --script replies.json

prints ``http://127.0.0.1:PORT`` as the first line of stdout, then serves until
killed. Endpoints: ``POST /chat/completions`` (stream and not), ``GET /models``,
``POST /beta/completions`` (FIM), each also under ``/v1``; and control endpoints
for tests in another process: ``POST /_fake/replies`` (append one reply or a
list), ``POST /_fake/release`` (answer the replies held under a name),
``GET /_fake/requests`` (``?count=N&timeout=S``: once N have arrived),
``GET /_fake/unused``. The script format is in
``docs/testing.md``.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from deepseek_ls.testkit import responses
from deepseek_ls.testkit.handler import NO_MATCH, FakeHTTPServer, RecordedRequest, make_handler
from deepseek_ls.testkit.script import Reply, Script

__all__ = ["NO_MATCH", "FakeDeepSeek", "RecordedRequest", "main"]


class FakeDeepSeek:
    """The scripted server; runs in a daemon thread. Use as a context manager or start()/stop()."""

    def __init__(
        self,
        script: Script | list[Reply | dict[str, Any]] | None = None,
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.script = script if isinstance(script, Script) else Script(script)
        self.api_key = api_key
        self.cache = responses.PromptCache()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)  # notified on each recorded request
        self._stopping = threading.Event()
        self._counter = 0
        # Completion requests received and not yet answered (no response byte sent), per model,
        # and the most there ever were at once: what a client's concurrency limit must bound.
        self.inflight: dict[str, int] = {}
        self.peak_inflight: dict[str, int] = {}
        self._gates: dict[str, threading.Event] = {}
        self._server = FakeHTTPServer((host, port), make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "FakeDeepSeek":
        # A short poll interval makes stop() prompt (shutdown waits for the next poll).
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-deepseek", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeDeepSeek":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- script and records ----------------------------------------------
    def add(self, reply: Reply | dict[str, Any]) -> Reply:
        return self.script.add(reply)

    def reset(self) -> None:
        """An empty script and no records, on the same port: one fake shared by a file's tests (with
        the process pointed at it) starts each test as a new one would. (In-flight counts and held
        replies' gates stay: a test that uses them has a fake of its own.)"""
        self.script = Script()
        with self._lock:
            self._requests.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Completion/model requests received so far (control endpoints excluded)."""
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """The requests once there are at least `count` (woken by each arrival, not polled)."""
        with self._recorded:
            if not self._recorded.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"fake DeepSeek got {len(self._requests)} requests, expected {count}")
            return list(self._requests)

    def release(self, name: str) -> None:
        """Answer the requests held by replies with `fault.hold == name` (now and from now on)."""
        self._gate(name).set()

    def _gate(self, name: str) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(name, threading.Event())

    def _hold(self, name: str) -> None:
        gate = self._gate(name)
        while not gate.is_set() and not self._stopping.is_set():
            gate.wait(0.05)

    def _arrived(self, model: str) -> None:
        with self._lock:
            self.inflight[model] = self.inflight.get(model, 0) + 1
            self.peak_inflight[model] = max(self.peak_inflight.get(model, 0), self.inflight[model])

    def _answered(self, model: str) -> None:
        with self._lock:
            self.inflight[model] -= 1

    def _record(self, request: RecordedRequest) -> None:
        with self._recorded:
            self._requests.append(request)
            self._recorded.notify_all()

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deepseek_ls.testkit.fake_deepseek", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--script", type=Path, help="JSON list of replies (see docs/testing.md)")
    parser.add_argument("--api-key", default=None, help="accept only this bearer key (default: any)")
    args = parser.parse_args(argv)
    try:
        script = Script.load(args.script) if args.script else Script()
    except (OSError, ValueError) as exc:
        print(f"fake_deepseek: cannot load script {args.script}: {exc}", file=sys.stderr)
        return 2
    fake = FakeDeepSeek(script, api_key=args.api_key, host=args.host, port=args.port)
    print(fake.base_url, flush=True)
    try:
        fake._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

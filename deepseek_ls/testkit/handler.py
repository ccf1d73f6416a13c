"""The HTTP side of the fake DeepSeek server: routing, validation, answers and faults.

`FakeDeepSeek` (fake_deepseek.py) owns the script and the records; this module
turns one HTTP request into one recorded, scripted (or faulty) answer. It sits below
fake_deepseek.py and names what it needs of its owner in `ServedFake`.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from deepseek_ls.testkit import responses
from deepseek_ls.testkit.script import Reply, Script, request_endpoint
from deepseek_ls.testkit.validation import (
    ApiError,
    check_auth,
    check_chat_body,
    check_fim_body,
    check_infill_body,
)

ROLE_HEADER = "x-deepseek-ls-role"
MODELS = ["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-chat", "deepseek-reasoner"]
NO_MATCH = "no scripted reply matched"


@dataclass
class RecordedRequest:
    """One request the fake received, for assertions."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    role: str | None
    endpoint: str
    status: int | None = None
    reply_index: int | None = None
    first_byte_at: float | None = None  # time.perf_counter() when the first response byte was sent
    first_content_at: float | None = None  # perf_counter() just before the first text-bearing chunk was written
    disconnected: bool = False  # the client went away before the answer ended
    received_at: float | None = None  # perf_counter() when its request line arrived
    # seconds from its headers parsed to its body read: the client still sending, not the fake's time
    body_wait: float = 0.0
    answered_at: float | None = None  # perf_counter() when the whole answer was written
    billed: dict[str, Any] | None = None  # the usage of an answer written whole (what the real API bills)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "finished"}


class ServedFake(Protocol):
    """What the handler uses of the fake that serves it (`FakeDeepSeek`): its script, its
    records, and the gates and clock its faults wait on."""

    api_key: str | None
    script: Script
    cache: responses.PromptCache
    _stopping: threading.Event

    @property
    def requests(self) -> list[RecordedRequest]: ...
    def add(self, reply: Reply | dict[str, Any]) -> Reply: ...
    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]: ...
    def release(self, name: str) -> None: ...
    def _gate(self, name: str) -> threading.Event: ...
    def _hold(self, name: str) -> None: ...
    def _arrived(self, model: str) -> None: ...
    def _answered(self, model: str) -> None: ...
    def _record(self, request: RecordedRequest) -> None: ...
    def _next_id(self) -> int: ...
    def _sleep(self, seconds: float) -> None: ...


class _ClientGone(Exception):
    pass


class FakeHTTPServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing its connection (cancellation, tests ending) is normal here.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_handler(fake: ServedFake) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        server_fake = fake

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: ServedFake

    def setup(self) -> None:
        super().setup()
        # Stream chunks go out as written (no Nagle delay), as with real streaming servers.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # stderr noise off; requests are recorded
        return None

    _responded = False
    _arrived_at: float | None = None  # perf_counter() when the request line arrived (the fake's time starts)
    _parsed_at = 0.0  # perf_counter() when its headers were parsed
    _body_wait = 0.0

    def parse_request(self) -> bool:
        self._arrived_at, self._body_wait = time.perf_counter(), 0.0
        parsed = super().parse_request()
        self._parsed_at = time.perf_counter()
        return parsed

    _waiting_model: str | None = None  # the model of the request now waiting for its answer

    def send_response(self, code: int, message: str | None = None) -> None:
        self._responded = True
        self._answering()
        super().send_response(code, message)

    def _answering(self) -> None:
        """The request stops counting as in flight once its answer starts (before the client can
        have it all, so a client's next request is never counted beside it)."""
        if self._waiting_model is not None:
            self.server_fake._answered(self._waiting_model)
            self._waiting_model = None

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def _guarded(self, route: Any) -> None:
        """A bug in the fake (or a script it cannot serve) is a readable 500, not a dropped connection."""
        try:
            route()
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # noqa: BLE001 - reported to the client that caused it
            if self._responded:
                raise
            self._send_json(500, ApiError(500, f"fake DeepSeek internal error: {exc!r}", "fake_error").body(),
                            headers={"x-should-retry": "false"})

    # -- routing ---------------------------------------------------------
    def _get(self) -> None:
        path = self._path()
        if path == "/_fake/requests":
            query = parse_qs(urlsplit(self.path).query)
            if "count" in query:  # a test in another process waits for requests to arrive
                try:
                    count, timeout = int(query["count"][0]), float(query.get("timeout", ["10"])[0])
                    found = self.server_fake.wait_for_requests(count, timeout)
                except ValueError:
                    return self._send_json(422, {"error": {"message": "count must be an integer, timeout seconds"}})
                except TimeoutError as exc:
                    return self._send_json(408, {"error": {"message": str(exc)}})
                return self._send_json(200, [r.to_json() for r in found])
            return self._send_json(200, [r.to_json() for r in self.server_fake.requests])
        if path == "/_fake/unused":
            return self._send_json(200, [r.model_dump() for r in self.server_fake.script.unused()])
        record = self._new_record(None)
        if path != "/models":
            return self._send_error(record, ApiError(404, f"no such endpoint: GET {self.path}", "not_found"))
        if error := check_auth(self.headers.get("authorization"), self.server_fake.api_key):
            return self._send_error(record, error)
        data = [{"id": m, "object": "model", "owned_by": "deepseek"} for m in MODELS]
        self._send_json(200, {"object": "list", "data": data}, record)

    def _post(self) -> None:
        path = self._path()
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        self._body_wait = time.perf_counter() - self._parsed_at
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            body, bad_json = None, str(exc)
        else:
            bad_json = None
        if path == "/_fake/replies":
            replies = body if isinstance(body, list) else [body]
            try:
                added = [self.server_fake.add(r) for r in replies]
            except ValueError as exc:
                return self._send_json(422, {"error": {"message": str(exc)}})
            return self._send_json(200, {"added": len(added), "total": len(self.server_fake.script)})
        if path == "/_fake/release":
            name = body.get("name") if isinstance(body, dict) else None
            if not isinstance(name, str):
                return self._send_json(422, {"error": {"message": 'give {"name": "<hold name>"}'}})
            self.server_fake.release(name)
            return self._send_json(200, {"released": name})
        record = self._new_record(body)
        if path not in ("/chat/completions", "/beta/completions", "/infill"):
            return self._send_error(record, ApiError(404, f"no such endpoint: POST {self.path}", "not_found"))
        self._waiting_model = str(body.get("model")) if isinstance(body, dict) else "?"
        self.server_fake._arrived(self._waiting_model)
        try:
            self._complete(record, body, bad_json)
        finally:
            self._answering()

    def _complete(self, record: RecordedRequest, body: Any, bad_json: str | None) -> None:
        if error := check_auth(self.headers.get("authorization"), self.server_fake.api_key):
            return self._send_error(record, error)
        if bad_json is not None:
            return self._send_error(record, ApiError(400, f"Failed to parse the request body as JSON: {bad_json}"))
        check = {"fim": check_fim_body, "infill": check_infill_body}.get(record.endpoint, check_chat_body)
        if error := check(body):
            return self._send_error(record, error)
        taken = self.server_fake.script.take(role=record.role, body=body, endpoint=record.endpoint)
        if taken is None:
            # Retrying cannot help: say so, so clients fail fast with a readable message.
            return self._send_error(record, _no_match(record), {"x-should-retry": "false"})
        record.reply_index, reply = taken
        self._answer(record, reply)

    def _path(self) -> str:
        path = self.path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1/") else path

    def _new_record(self, body: Any) -> RecordedRequest:
        record = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            role=self.headers.get(ROLE_HEADER),
            endpoint=request_endpoint(self._path()),
            received_at=self._arrived_at or time.perf_counter(),
            body_wait=self._body_wait,
        )
        self.server_fake._record(record)
        return record

    # -- answering -------------------------------------------------------
    def _answer(self, record: RecordedRequest, reply: Reply) -> None:
        fake = self.server_fake
        fault = reply.fault
        try:
            # A completion endpoint (FIM) watches for the client hanging up while it waits, as a
            # real server does: a cancelled suggestion is seen at once, never answered nor billed.
            watch = record.endpoint in ("fim", "infill")
            if fault and fault.hold:
                gate = fake._gate(fault.hold)
                if watch:
                    self._wait_watching(gate.is_set)
                else:
                    fake._hold(fault.hold)
            if fault and fault.delay_before_first_byte:
                if watch:
                    end = time.monotonic() + fault.delay_before_first_byte
                    self._wait_watching(lambda: time.monotonic() >= end)
                else:
                    fake._sleep(fault.delay_before_first_byte)
            if fault and fault.drop_connection:
                record.status = 0
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault and fault.raw_events is not None:  # byte for byte, under any status
                default_type = "text/event-stream; charset=utf-8" if record.body.get("stream") else "application/json"
                return self._raw(record, reply, fault.content_type or default_type, fault.status or 200)
            if fault and fault.status:
                headers = {**_retry_headers(fault), **fault.headers}
                if fault.content_type is not None:  # an HTML error page, a proxy's answer: sent as is
                    return self._send_json(fault.status, str(fault.body or ""), record, headers,
                                           content_type=fault.content_type)
                return self._send_error(record, _fault_error(fault.status, fault.body), headers)
            rejected = next((name for name in (fault.reject_params if fault else []) if name in record.body), None)
            if rejected is not None:  # as vLLM / OpenAI-style servers word it
                return self._send_error(record, ApiError(400, f"Unrecognized request argument supplied: {rejected}"))
            envelope = {"id": uuid.uuid4().hex, "created": int(time.time()), "model": record.body.get("model", "local")}
            usage = fake.cache.usage(record.body, reply)
            id_prefix = f"call_{fake._next_id()}"
            # Build only the shape that is sent: the stream's chunks or the whole body.
            streaming = record.body.get("stream") and not reply.ignore_stream
            if record.endpoint == "infill":
                streaming, answer = False, responses.infill_body(reply, usage=usage)
            elif record.endpoint == "fim":
                make = responses.fim_chunks if streaming else responses.fim_body
                answer = make(reply, envelope=envelope, usage=usage)
            else:
                make = responses.chat_chunks if streaming else responses.chat_body
                answer = make(reply, envelope=envelope, usage=usage, id_prefix=id_prefix)
            if streaming:
                self._stream(record, reply, answer)
            else:
                self._whole(record, reply, answer)
            record.answered_at = time.perf_counter()
            if fault and fault.close_after:
                self.close_connection = True  # no `Connection: close`: the client finds out when it is idle
            record.billed = usage
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            record.disconnected = True
            self.close_connection = True
        finally:
            record.finished.set()

    def _wait_watching(self, done: Any) -> None:
        """Wait until `done()` (a release, a model's latency) while watching the connection: a client
        that hangs up meanwhile (a cancelled request) raises `_ClientGone` at once."""
        fake = self.server_fake
        while not done() and not fake._stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.005)
            if not readable:
                continue
            try:
                closed = self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                closed = True
            if closed:
                raise _ClientGone
            while not done() and not fake._stopping.is_set():  # a pipelined request: no hang-up to see
                fake._sleep(0.005)
            return

    def _whole(self, record: RecordedRequest, reply: Reply, body: dict[str, Any]) -> None:
        """A non-streamed answer; with keep-alives, blank lines come first (as the real API sends)."""
        fault = reply.fault
        if not (fault and (fault.keepalives or fault.keepalive_forever)):
            return self._send_json(200, body, record)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        record.first_byte_at = time.perf_counter()
        record.status = 200
        count = 0
        while fault.keepalive_forever or count < fault.keepalives:
            if self.server_fake._stopping.is_set():
                return
            self._write(b"\n", reply)
            self.server_fake._sleep(fault.keepalive_interval)
            count += 1
        self._write(json.dumps(body, ensure_ascii=False).encode(), reply)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream(self, record: RecordedRequest, reply: Reply, chunks: list[dict[str, Any]]) -> None:
        fault = reply.fault
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in (fault.headers if fault else {}).items():
            self.send_header(name, value)
        self.end_headers()
        record.first_byte_at = time.perf_counter()
        self.wfile.flush()
        record.status = 200
        if fault and fault.keepalive_forever:
            return self._keepalives_forever(reply)
        for _ in range(fault.keepalives if fault else 0):
            self._write(b": keep-alive\n\n", reply)
            self.server_fake._sleep(fault.keepalive_interval)
        if fault and fault.empty_stream:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        for index, chunk in enumerate(chunks):
            if fault and fault.cut_after_chunks is not None and index >= fault.cut_after_chunks:
                return self._cut(reply)
            if fault and fault.malformed_at_chunk == index:
                payload = '{"choices": [{"delta": {"content": "oops"'
            else:
                payload = json.dumps(chunk, ensure_ascii=False)
                if record.first_content_at is None and _carries_text(chunk):
                    record.first_content_at = time.perf_counter()
            self._write(f"data: {payload}\n\n".encode(), reply)
            if reply.chunk_delay:
                self.server_fake._sleep(reply.chunk_delay)
        if not reply.shape.no_done:
            self._write(b"data: [DONE]\n\n", reply)
        if fault and fault.flood is not None:
            return self._flood(reply, fault.flood)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _raw(self, record: RecordedRequest, reply: Reply, content_type: str, status: int) -> None:
        """Hostile or odd answers, written byte for byte (each item one write), then ended as the fault says."""
        fault = reply.fault
        assert fault is not None and fault.raw_events is not None
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        for name, value in fault.headers.items():
            self.send_header(name, value)
        self.end_headers()
        record.first_byte_at = time.perf_counter()
        self.wfile.flush()
        record.status = status
        for index, event in enumerate(fault.raw_events):
            if fault.cut_after_chunks is not None and index >= fault.cut_after_chunks:
                return self._cut(reply)
            self._write(event.encode(), reply)
            if reply.chunk_delay:
                self.server_fake._sleep(reply.chunk_delay)
        if fault.flood is not None:
            return self._flood(reply, fault.flood)
        if fault.cut_after_chunks is not None:
            return self._cut(reply)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self, reply: Reply) -> None:
        fault = reply.fault
        assert fault is not None
        if fault.cut_with == "stall":
            while not self.server_fake._stopping.is_set():
                self.server_fake._sleep(0.05)
            return
        if fault.cut_with == "keepalives":
            return self._keepalives_forever(reply)
        self.close_connection = True  # no terminating chunk: the body is incomplete
        self.connection.shutdown(socket.SHUT_RDWR)

    def _keepalives_forever(self, reply: Reply) -> None:
        assert reply.fault is not None
        while not self.server_fake._stopping.is_set():
            self._write(b": keep-alive\n\n", reply)
            self.server_fake._sleep(reply.fault.keepalive_interval)

    def _flood(self, reply: Reply, piece: str) -> None:
        """A body that never ends (a server ignoring max_tokens, or a hostile one): until the client leaves."""
        data = piece.encode()
        while not self.server_fake._stopping.is_set():
            self._write(data, reply)

    def _write(self, data: bytes, reply: Reply) -> None:
        size = reply.write_bytes or len(data)
        try:
            for start in range(0, len(data), size):
                piece = data[start : start + size]
                self.wfile.write(f"{len(piece):X}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _ClientGone from exc

    def _send_error(self, record: RecordedRequest, error: ApiError, headers: dict[str, str] | None = None) -> None:
        self._send_json(error.status, error.body(), record, headers)

    def _send_json(
        self,
        status: int,
        body: Any,
        record: RecordedRequest | None = None,
        headers: dict[str, str] | None = None,
        *,
        content_type: str = "application/json",
    ) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if record is not None:
            record.first_byte_at = time.perf_counter()
            record.status = status
        self.wfile.write(data)
        self.wfile.flush()
        if record is not None:
            record.finished.set()


def _carries_text(chunk: dict[str, Any]) -> bool:
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or choice.get("text"):
            return True
    return False


def _no_match(record: RecordedRequest) -> ApiError:
    body = record.body if isinstance(record.body, dict) else {}
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    last_user = users[-1].get("content") if users else body.get("prompt")
    summary = {"role": record.role, "model": body.get("model"), "endpoint": record.endpoint,
               "last_user": str(last_user)[:200]}
    return ApiError(500, f"{NO_MATCH}: {json.dumps(summary, ensure_ascii=False)}", "fake_script_error")


_DEFAULT_ERRORS = {
    400: "Invalid request",
    401: "Authentication Fails, Your api key is invalid",
    402: "Insufficient Balance",
    422: "Invalid Parameters",
    429: "Rate limit reached for requests",
    500: "The server had an error while processing your request",
    502: "Bad gateway",
    503: "The server is overloaded due to high traffic",
}


def _fault_error(status: int, body: Any) -> ApiError:
    if body is None:
        return ApiError(status, _DEFAULT_ERRORS.get(status, f"HTTP {status}"), "api_error")
    return ApiError(status, str(body), "api_error", raw=body)


def _retry_headers(fault: Any) -> dict[str, str]:
    headers = {}
    if fault.retry_after is not None:
        headers["retry-after"] = f"{fault.retry_after:g}"
    if fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    return headers

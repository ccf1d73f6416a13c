"""The hardened LSP transport: framing, JSON-RPC validation, lifecycle, and
bounded server→client requests, in front of pygls' protocol (docs/protocol.md,
"Transport").

pygls keeps the protocol types and the dispatch to our handlers. What it does
not do defensively is done here, before a message reaches it:

- `FrameParser` turns the byte stream into message bodies: header names are
  case-insensitive, `Content-Length` must be a positive decimal within the
  limit, a message over the limit is skipped without being stored, and after
  garbage the parser resynchronises on the next `Content-Length` header,
  logging what it skipped.
- `HardenedProtocol.handle_body` decodes and validates each message and
  answers every request exactly once, to its own id whenever the body parsed
  as JSON (too deep, even for the decoder, or holding an unpaired surrogate:
  -32602/-32600 to that id; `_Outline` reads the top level without recursing;
  an oversized body's id is read from its first or last bytes): -32700 for bytes that are not JSON,
  -32600 for what is not a JSON-RPC request, -32602 (with a short reason) for
  params that do not decode, -32002 before `initialize`, -32600 after
  `shutdown`; `exit` ends the process with 0 after `shutdown`, else 1.
- `ask_client` bounds every server→client request with a timeout and turns an
  error or a malformed answer into `ClientRequestFailed`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import re
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, default_converter

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

PARSE_ERROR = types.ErrorCodes.ParseError.value  # -32700
INVALID_REQUEST = types.ErrorCodes.InvalidRequest.value  # -32600
INVALID_PARAMS = types.ErrorCodes.InvalidParams.value  # -32602
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized.value  # -32002

MAX_MESSAGE_BYTES_ENV = "DEEPSEEK_LS_MAX_MESSAGE_BYTES"


@dataclass(frozen=True)
class Limits:
    """What the transport accepts (docs/protocol.md, "Limits")."""

    max_message_bytes: int = 64 * 1024 * 1024
    max_header_bytes: int = 8 * 1024
    max_nesting: int = 64
    max_error_chars: int = 300

    @classmethod
    def from_env(cls, max_message_bytes: int | None = None) -> Limits:
        """The defaults, with the message limit from the argument, else
        `DEEPSEEK_LS_MAX_MESSAGE_BYTES` (a bad value is logged and ignored)."""
        if max_message_bytes is None:
            raw = os.environ.get(MAX_MESSAGE_BYTES_ENV, "").strip()
            if raw:
                if raw.isdigit() and int(raw) > 0:
                    max_message_bytes = int(raw)
                else:
                    log.warning("%s=%r is not a positive number of bytes; using the default", MAX_MESSAGE_BYTES_ENV, raw)
        if max_message_bytes is None:
            return cls()
        if max_message_bytes <= 0:
            raise ValueError("the maximum message size must be a positive number of bytes")
        return cls(max_message_bytes=max_message_bytes)


def cap(text: str, limit: int = Limits.max_error_chars) -> str:
    """`text` cut to `limit` characters (error messages never echo a whole input)."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[: max(limit - 25, 0)] + f"… ({len(text)} chars)"


def _preview(data: bytes, limit: int = 60) -> str:
    return repr(bytes(data[:limit])) + ("…" if len(data) > limit else "")


# -- framing -------------------------------------------------------------------------

# A header line: `Name: value` (RFC 7230 token characters in the name).
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?\n")
# Where to pick the stream up again after garbage: the next Content-Length header.
_RESYNC = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# In a body being skipped, a complete Content-Length header line (a JSON body
# cannot contain one: raw line breaks are not allowed inside JSON strings).
_RESYNC_LINE = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
_BLANK_LINE = re.compile(rb"\r?\n")
# The request id of an oversized message, if it comes before its params.
_PEEK_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,128}")')
_PEEK_BYTES = 1024
# ... or at its end, after its params: `"id": 7}`, or followed only by short string
# members (`"jsonrpc": "2.0"`, `"method": "..."`, in encoders' hash order). One closing
# brace after it: the id is a member of the top-level object, not of its params.
_TAIL_ID = re.compile(
    rb'"id"\s*:\s*(-?\d{1,16}|"(?:[^"\\]|\\.){0,128}")'
    rb'(?:\s*,\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.){0,200}")*\s*}\s*$'
)
_TAIL_BYTES = 512


@dataclass(frozen=True)
class Oversized:
    """A message over the size limit: skipped; `request_id` when it could be seen."""

    length: int
    request_id: int | str | None


class FrameParser:
    """Bytes in, message bodies out. Never stores more than one message of at
    most `max_message_bytes` (plus a header block)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._buf = bytearray()
        self._body_length: int | None = None  # reading a body of this length
        self._discard = 0  # bytes of an oversized body still to skip
        self._discard_length = 0
        self._peek = bytearray()  # the start of an oversized body (for its id)
        self._tail = bytearray()  # and its last bytes
        self._garbage = 0  # bytes skipped since the last message
        self._garbage_sample = b""
        self.skipped_bytes = 0  # in total (tests, logs)

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        self._buf += data
        out: list[bytes | Oversized] = []
        while True:
            if self._discard:
                if not self._skip_oversized(out):
                    break
            elif self._body_length is not None:
                if len(self._buf) < self._body_length:
                    break
                body = bytes(self._buf[: self._body_length])
                del self._buf[: self._body_length]
                self._body_length = None
                out.append(body)
            elif not self._read_headers(out):
                break
        return out

    # Headers --------------------------------------------------------------------

    def _read_headers(self, out: list[bytes | Oversized]) -> bool:
        """Parse one header block at the start of the buffer. True when progress
        was made (a state change or bytes dropped), False when more bytes are needed."""
        buf = self._buf
        if not buf:
            return False
        pos = 0
        headers: list[tuple[bytes, bytes]] = []
        while True:
            blank = _BLANK_LINE.match(buf, pos)
            if blank is not None:
                if not headers:  # a stray line break between messages
                    self._drop_garbage(blank.end())
                    return True
                return self._end_of_headers(headers, blank.end(), out)
            line = _HEADER_LINE.match(buf, pos)
            if line is not None:
                headers.append((line.group(1).lower(), line.group(2)))
                pos = line.end()
                if pos > self.limits.max_header_bytes:
                    self._resync("a header block larger than %d bytes" % self.limits.max_header_bytes)
                    return True
                continue
            # Not a complete header line here: either more bytes are coming, or garbage.
            rest = buf[pos:]
            newline = rest.find(b"\n")
            looks_partial = newline < 0 and (not rest or _could_be_header_start(rest))
            if looks_partial and len(buf) <= self.limits.max_header_bytes:
                return False
            self._resync("bytes that are not a header")
            return True

    def _end_of_headers(self, headers: list[tuple[bytes, bytes]], end: int, out: list[bytes | Oversized]) -> bool:
        values = {value for name, value in headers if name == b"content-length"}
        block = bytes(self._buf[:end])
        problem = None
        length = 0
        if not values:
            glued = _RESYNC.search(self._buf, 1, end)
            if glued is not None:  # garbage glued to the front of a header: `xyzContent-Length: 5`
                self._drop_garbage(glued.start())
                self._flush_garbage("bytes glued to a header")
                return True
            problem = "a header block without Content-Length"
        elif len(values) > 1:
            problem = "conflicting Content-Length headers"
        else:
            raw = next(iter(values))
            if not raw.isdigit() or len(raw) > 20:
                problem = f"Content-Length {_preview(raw, 30)} is not a non-negative decimal number"
            else:
                length = int(raw)
                if length == 0:
                    problem = "Content-Length 0 (an empty body is not a JSON-RPC message)"
        if problem is not None:
            del self._buf[:end]
            self._count_garbage(block)
            self._flush_garbage(problem)
            return True
        del self._buf[:end]
        self._flush_garbage("bytes before a header")
        if length > self.limits.max_message_bytes:
            log.warning(
                "transport: skipping a message of %d bytes (over the limit of %d bytes, %s)",
                length, self.limits.max_message_bytes, MAX_MESSAGE_BYTES_ENV,
            )
            self._discard = self._discard_length = length
            self._peek = bytearray()
            self._tail = bytearray()
            return True
        self._body_length = length
        return True

    # Garbage and resynchronisation -----------------------------------------------

    def _resync(self, what: str) -> None:
        """Drop bytes up to the next `Content-Length` header (not the one at the start)."""
        found = _RESYNC.search(self._buf, 1)
        if found is not None:
            self._drop_garbage(found.start())
            self._flush_garbage(what)
            return
        # None yet: keep a tail that may be the start of one.
        keep = len(b"content-length") + 2
        drop = max(len(self._buf) - keep, 1)
        self._drop_garbage(drop)

    def _drop_garbage(self, n: int) -> None:
        self._count_garbage(bytes(self._buf[:n]))
        del self._buf[:n]

    def _count_garbage(self, data: bytes) -> None:
        if not self._garbage:
            self._garbage_sample = data[:60]
        self._garbage += len(data)
        self.skipped_bytes += len(data)

    def _flush_garbage(self, what: str) -> None:
        if self._garbage:
            # Two bare line breaks between messages are not worth a warning.
            level = logging.DEBUG if not self._garbage_sample.strip() else logging.WARNING
            log.log(level, "transport: skipped %d byte(s) (%s): %s", self._garbage, what, _preview(self._garbage_sample))
        self._garbage = 0
        self._garbage_sample = b""

    def _skip_oversized(self, out: list[bytes | Oversized]) -> bool:
        """Drop the body of an oversized message; True when progress was made."""
        buf = self._buf
        if not buf:
            return False
        # A new header inside the skipped bytes: the sender lied about the length.
        found = _RESYNC_LINE.search(buf, 0, min(len(buf), self._discard + 64))
        if found is not None and found.start() < self._discard:
            self._consume_oversized(found.start())
            log.warning(
                "transport: the oversized message ended early; resuming at the next header after %d byte(s)",
                self._discard_length - self._discard,
            )
            self._finish_oversized(out, whole=False)
            return True
        if len(buf) >= self._discard:
            self._consume_oversized(self._discard)
            self._finish_oversized(out, whole=True)
            return True
        # Keep a tail in case a header straddles two reads.
        keep = 64
        drop = len(buf) - keep
        if drop <= 0:
            return False
        self._consume_oversized(drop)
        return True

    def _consume_oversized(self, n: int) -> None:
        if len(self._peek) < _PEEK_BYTES:
            self._peek += self._buf[: min(n, _PEEK_BYTES - len(self._peek))]
        self._tail += self._buf[max(n - _TAIL_BYTES, 0) : n]
        del self._tail[:-_TAIL_BYTES]
        del self._buf[:n]
        self._discard -= n
        self.skipped_bytes += n

    def _finish_oversized(self, out: list[bytes | Oversized], whole: bool) -> None:
        """`whole`: the body was skipped to its declared end, so its tail is its end."""
        msg_id = _peek_id(bytes(self._peek))
        if msg_id is None and whole:
            msg_id = _tail_id(bytes(self._tail))
        out.append(Oversized(self._discard_length, msg_id))
        self._discard = self._discard_length = 0
        self._peek = bytearray()
        self._tail = bytearray()


def _could_be_header_start(rest: bytearray) -> bool:
    """True when `rest` (no line break yet) may still become a header line."""
    if rest == b"\r":
        return True
    colon = rest.find(b":")
    name = rest if colon < 0 else rest[:colon]
    return bool(re.fullmatch(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]*[ \t]*", bytes(name)))


def _peek_id(start: bytes) -> int | str | None:
    """The id of a request from the first bytes of its body (before `"params"`)."""
    params = start.find(b'"params"')
    head = start if params < 0 else start[:params]
    return _id_of(_PEEK_ID.search(head))


def _tail_id(end: bytes) -> int | str | None:
    """The id of a request from the last bytes of its body (after its params)."""
    return _id_of(_TAIL_ID.search(end))


def _id_of(match: re.Match[bytes] | None) -> int | str | None:
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


class FrameWriter:
    """Writes one framed message at a time (header with the byte length)."""

    def __init__(self, write: Callable[[bytes], Any], flush: Callable[[], Any] | None = None) -> None:
        self._write = write
        self._flush = flush
        self._lock = threading.Lock()
        self.closed = False
        self.on_broken: Callable[[], None] | None = None

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        frame = b"Content-Length: %d\r\n\r\n" % len(data) + data
        with self._lock:
            try:
                self._write(frame)
                if self._flush is not None:
                    self._flush()
            except (BrokenPipeError, ConnectionError, ValueError, OSError) as error:
                self.closed = True
                log.warning("transport: the client connection is gone (%s); stopping", error)
                if self.on_broken is not None:
                    self.on_broken()

    def close(self) -> None:
        self.closed = True


# -- strict decoding of params -------------------------------------------------------


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


MAX_URI_CHARS = 4096
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x1f\x7f]*")


def uri_problem(uri: str) -> str | None:
    """Why `uri` is not acceptable as a document URI (None: it is)."""
    if len(uri) > MAX_URI_CHARS:
        return f"a URI of {len(uri)} characters (the limit is {MAX_URI_CHARS})"
    if not _URI.fullmatch(uri):
        return "not a URI (expected scheme:..., e.g. file:///path, without control characters)"
    return None


def _strict_str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {_json_type(value)}")
    return value


def _strict_int(value: Any, _: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {_json_type(value)}")
    return value


def _strict_float(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {_json_type(value)}")
    return float(value)


def _strict_bool(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {_json_type(value)}")
    return value


def strict_converter() -> cattrs.Converter:
    """pygls' converter, but a string field gets a string (not `str(42)`), an
    integer an integer, a boolean a boolean."""
    converter = default_converter()
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    return converter


def decode_problem(error: BaseException, limit: int = 200) -> str:
    """A short reason why params did not decode, naming the field."""
    cause: BaseException = error
    while cause.__cause__ is not None and not isinstance(cause, cattrs.BaseValidationError):
        cause = cause.__cause__
    if isinstance(cause, cattrs.BaseValidationError):

        def fmt(exc: BaseException, _type: Any) -> str:
            if isinstance(exc, KeyError):
                return "required field missing"
            text = str(exc).strip() or type(exc).__name__
            return cap(text, 80)

        try:
            problems = cattrs.transform_error(cause, path="", format_exception=fmt)
        except Exception:  # noqa: BLE001 - the reason is a courtesy
            problems = [str(cause)]
        text = "; ".join(p.replace(" @ $", " at ").replace(" @ ", " at ") for p in problems)
    else:
        text = f"{type(cause).__name__}: {cause}"
    return cap(text, limit)


# -- the protocol --------------------------------------------------------------------


class _Reject(Exception):
    """An invalid message: answer `code` to its id (when there is one)."""

    def __init__(self, code: int, message: str, msg_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.msg_id = msg_id  # set when the id was read before the message could be decoded whole


class _Dropped(Exception):
    """A notification that cannot be used: logged, never answered."""


class ClientAnswerError(JsonRpcException):
    """The client's answer to one of our requests did not decode."""


@functools.lru_cache(maxsize=256)
def is_notification_method(method: str) -> bool:
    """True for an LSP notification method (`exit`, `textDocument/didOpen`, `$/cancelRequest`, ...)."""
    message_type = types.METHOD_TO_TYPES.get(method, (None,))[0]
    return message_type is not None and attrs.has(message_type) and "id" not in attrs.fields_dict(message_type)


def _void_result(response_type: Any) -> bool:
    """True when `response_type` (a response message) has a `null` result (e.g. workDoneProgress/create)."""
    if response_type is None or not attrs.has(response_type):
        return False
    field = attrs.fields_dict(response_type).get("result")
    return field is not None and field.type in (None, type(None), "None")


def _valid_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _too_deep(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return False


def _encodable(value: Any) -> bool:
    """False when a string in `value` holds an unpaired UTF-16 surrogate (no UTF-8 for it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# What the top level of a JSON text is made of, read without recursing: strings
# (which may hold any bracket), brackets and the colons after member names.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]')
_SCALAR_START = re.compile(r'\s*(?=[^\s\[{])')
_RAW_DECODE = json.JSONDecoder().raw_decode


@dataclass(frozen=True)
class _Outline:
    """The top-level object of a JSON text too deep for `json.loads`: its members (the
    value of each, when a scalar such as the id or the method, else `_NO_SCALAR`) and
    the members nesting deeper than the limit."""

    members: dict[str, Any]
    deep_members: frozenset[str]

    @classmethod
    def of(cls, text: str, limit: int) -> _Outline:
        members: dict[str, Any] = {}
        deep: set[str] = set()
        depth, member, name = 0, "", None
        for token in _JSON_TOKEN.finditer(text):
            value = token.group()
            if value == ":":
                if depth == 1 and name is not None:
                    member = name  # a repeated member: the last one counts, as in json.loads
                    members[member] = _scalar_at(text, token.end())
                name = None
            elif value in ("{", "["):
                if depth == 0 and value != "{":
                    return cls({}, frozenset())  # not an object: no id to answer
                depth += 1
                if depth > limit:
                    deep.add(member)
                name = None
            elif value in ("}", "]"):
                depth -= 1
                name = None
            else:
                name = _json_string(value) if depth == 1 else None
        return cls(members, frozenset(deep))


_NO_SCALAR = object()


def _scalar_at(text: str, pos: int) -> Any:
    """The string, number, boolean or null starting at `pos` (after blanks), else `_NO_SCALAR`."""
    start = _SCALAR_START.match(text, pos)
    if start is None:
        return _NO_SCALAR
    try:
        return _RAW_DECODE(text, start.end())[0]
    except ValueError:
        return _NO_SCALAR


def _json_string(token: str) -> str | None:
    try:
        return json.loads(token)
    except ValueError:
        return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _ExpectedErrors(logging.Filter):
    """pygls logs a traceback for every error answer; an expected one (a
    `JsonRpcException`: bad params, a refused command) is already logged by us."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, JsonRpcException)


_PYGLS_FILTER = _ExpectedErrors()


class HardenedProtocol(LanguageServerProtocol):
    """pygls' protocol behind our validation (see the module docstring)."""

    limits = Limits()

    def __init__(self, server: LanguageServer, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        pygls_logger = logging.getLogger("pygls.protocol.json_rpc")
        if _PYGLS_FILTER not in pygls_logger.filters:
            pygls_logger.addFilter(_PYGLS_FILTER)
        self.initialized = False
        self.shutdown_requested = False
        self.exit_code: int | None = None
        self.on_exit: Callable[[int], None] | None = None
        # Told of every notification dropped because its params did not decode (document sync).
        self.on_dropped: Callable[[str, dict[str, Any]], None] | None = None
        self._inflight: set[int | str] = set()  # client requests not yet answered
        # Counters (tests and the log).
        self.stats = {"messages": 0, "rejected": 0, "answered": 0}

    # Incoming --------------------------------------------------------------------

    def handle_frame(self, event: bytes | Oversized) -> None:
        """One event of the `FrameParser`."""
        if isinstance(event, Oversized):
            if event.request_id is not None:
                self._reply_error(
                    event.request_id,
                    INVALID_REQUEST,
                    f"message too large ({event.length} bytes; the limit is {self.limits.max_message_bytes})",
                )
            return
        self.handle_body(event)

    def handle_body(self, body: bytes) -> None:
        """Decode, validate and dispatch one message body; never raises."""
        self.stats["messages"] += 1
        msg_id: Any = None
        try:
            data = self._decode(body)
            if isinstance(data, dict) and _valid_id(data.get("id")):
                msg_id = data["id"]
            self._dispatch(data)
        except _Dropped:
            self.stats["rejected"] += 1
        except _Reject as rejected:
            self.stats["rejected"] += 1
            log.warning("transport: rejected a message (%s): %s", rejected.code, cap(str(rejected), 200))
            self._reply_error(rejected.msg_id if rejected.msg_id is not None else msg_id, rejected.code, str(rejected))
        except Exception as error:  # noqa: BLE001 - one message must not stop the server
            log.exception("transport: could not handle a message")
            internal = types.ErrorCodes.InternalError.value
            if msg_id is not None and msg_id in self._inflight:
                self._send_response(msg_id, error=types.ResponseError(code=internal, message=cap(f"internal error: {error}")))
            elif msg_id is not None:
                self._reply_error(msg_id, internal, f"internal error: {error}")

    def _decode(self, body: bytes) -> Any:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Reject(PARSE_ERROR, f"parse error: the body is not valid UTF-8 (byte {error.start})") from None
        limit = self.limits.max_nesting
        try:
            data = json.loads(text)
        except RecursionError:  # too deep for the decoder itself: read the top level without it
            outline = _Outline.of(text, limit)
            deep = "params" if "params" in outline.deep_members else None
            self._refuse(outline.members, deep, f"nested deeper than {limit} levels")
            raise _Reject(PARSE_ERROR, "parse error: the JSON is nested too deeply") from None
        except ValueError as error:
            raise _Reject(PARSE_ERROR, cap(f"parse error: {error}", 120)) from None
        if isinstance(data, (dict, list)) and _too_deep(data, limit):
            members = data if isinstance(data, dict) else {}
            deep = "params" if _too_deep(members.get("params"), limit - 1) else None
            self._refuse(members, deep, f"nested deeper than {limit} levels")
            raise _Reject(PARSE_ERROR, f"parse error: the JSON is nested deeper than {limit} levels")
        if _SURROGATE_ESCAPE.search(text) and not _encodable(data):
            members = data if isinstance(data, dict) else {}
            surrogate = "params" if not _encodable(members.get("params")) else None
            self._refuse(members, surrogate, "a string holds an unpaired UTF-16 surrogate")
            raise _Reject(PARSE_ERROR, "parse error: a string holds an unpaired UTF-16 surrogate")
        return data

    def _refuse(self, members: dict[str, Any], where: str | None, problem: str) -> None:
        """A message that parsed (or whose top level could be read) but cannot be used:
        a request is answered to its own id (-32602 when the problem is in its params,
        else -32600); a notification is dropped unanswered. Returns (for the caller's
        -32700 to `null`) only when there is neither an id to answer nor a notification."""
        msg_id, method = members.get("id"), members.get("method")
        notification = isinstance(method, str) and bool(method) and ("id" not in members or is_notification_method(method))
        if notification:
            log.warning("transport: dropped the notification %s: %s", cap(method, 80), problem)
            if self.on_dropped is not None and self.initialized:
                self.on_dropped(method, members)  # a document change lost: its buffer is unknown now
        if _valid_id(msg_id):
            code, what = (INVALID_PARAMS, "invalid params") if where == "params" else (INVALID_REQUEST, "invalid request")
            raise _Reject(code, f"{what}: {problem}", msg_id)
        if notification and "id" not in members:
            raise _Dropped

    def _dispatch(self, data: Any) -> None:
        if not isinstance(data, dict):
            what = "a batch (array)" if isinstance(data, list) else _json_type(data)
            raise _Reject(INVALID_REQUEST, f"invalid request: expected a JSON object, got {what}")
        if data.get("jsonrpc") != "2.0":
            raise _Reject(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
        has_id = "id" in data
        if has_id and not _valid_id(data["id"]):
            raise _Reject(INVALID_REQUEST, f'invalid request: "id" must be an integer or a string, got {_json_type(data["id"])}')
        if "method" not in data:
            if has_id and ("result" in data or "error" in data):
                self._handle_client_answer(data)
                return
            raise _Reject(INVALID_REQUEST, 'invalid request: "method" is missing')
        method = data["method"]
        if not isinstance(method, str) or not method:
            raise _Reject(INVALID_REQUEST, '"method" must be a non-empty string')
        if "params" in data and not isinstance(data["params"], (dict, list)) and data["params"] is not None:
            raise _Reject(INVALID_PARAMS, f'invalid params: expected an object or an array, got {_json_type(data["params"])}')
        if "params" not in data:
            data = {**data, "params": None}  # pygls' generic message types require the field
        if has_id and is_notification_method(method):
            self._notification_with_id(data)
        elif has_id:
            self._request(data)
        else:
            self._notification(data)

    def _notification_with_id(self, data: dict[str, Any]) -> None:
        """An LSP notification sent with an id (`didOpen`, `exit`, ...): JSON-RPC makes it
        a request, so it is answered (`null`), and it is handled as the notification the
        editor meant. pygls would run it as a notification and never answer (or, for
        `exit`, end the process from inside its handler)."""
        msg_id, method = data["id"], data["method"]
        if msg_id in self._inflight:
            raise _Reject(INVALID_REQUEST, f"invalid request: id {cap(repr(msg_id), 60)} is already in use by a request in progress")
        if method != types.EXIT:
            if not self.initialized:
                raise _Reject(SERVER_NOT_INITIALIZED, "the server is not initialized: send initialize first")
            if self.shutdown_requested:
                raise _Reject(INVALID_REQUEST, "invalid request: the server is shutting down (shutdown was received)")
        log.warning("transport: the notification %s came with id %s; answered null and handled as a notification",
                    cap(method, 80), cap(repr(msg_id), 60))
        self._inflight.add(msg_id)
        self._send_response(msg_id, None)  # before `exit` ends the process
        self._notification({key: value for key, value in data.items() if key != "id"})

    def _request(self, data: dict[str, Any]) -> None:
        msg_id, method = data["id"], data["method"]
        if msg_id in self._inflight:
            raise _Reject(INVALID_REQUEST, f"invalid request: id {cap(repr(msg_id), 60)} is already in use by a request in progress")
        if msg_id in self._request_futures:
            # pygls keeps both directions' requests in one table: this one would take the place of ours.
            raise _Reject(INVALID_REQUEST, f"invalid request: id {cap(repr(msg_id), 60)} is the id of a request the server sent and still waits for")
        if method == types.INITIALIZE:
            if self.initialized:
                raise _Reject(INVALID_REQUEST, "invalid request: the server is already initialized")
        elif not self.initialized:
            raise _Reject(SERVER_NOT_INITIALIZED, "the server is not initialized: send initialize first")
        if self.shutdown_requested:
            raise _Reject(INVALID_REQUEST, "invalid request: the server is shutting down (shutdown was received)")
        message = self._structure(data)
        if method == types.INITIALIZE:
            self.initialized = True
        elif method == types.SHUTDOWN:
            self.shutdown_requested = True
        self._inflight.add(msg_id)
        super().handle_message(message)

    def _notification(self, data: dict[str, Any]) -> None:
        method = data["method"]
        if method == types.EXIT:
            self.exit_code = 0 if self.shutdown_requested else 1
            log.info("exit received (%s shutdown): exiting with %d", "after" if self.exit_code == 0 else "without", self.exit_code)
            if self.on_exit is not None:
                self.on_exit(self.exit_code)
            return
        if not self.initialized or self.shutdown_requested:
            log.info("transport: dropped the notification %s (%s)", cap(method, 80),
                     "before initialize" if not self.initialized else "after shutdown")
            return
        if method == types.CANCEL_REQUEST:
            params = data.get("params")
            target = params.get("id") if isinstance(params, dict) else None
            if _valid_id(target) and target not in self._inflight:
                # Unknown, already answered, or one of the server's own requests (pygls would cancel ours).
                log.info("transport: $/cancelRequest of %s, which is not a request in progress; ignored", cap(repr(target), 60))
                return
        try:
            message = self._structure(data)
        except _Reject as rejected:
            log.warning("transport: dropped the notification %s: %s", cap(method, 80), rejected)
            if self.on_dropped is not None:
                self.on_dropped(method, data)
            return
        super().handle_message(message)

    def _structure(self, data: dict[str, Any]) -> Any:
        method = cap(data.get("method", ""), 60)
        try:
            message = self.structure_message(data)
        except Exception as error:  # noqa: BLE001 - reported as invalid params
            raise _Reject(INVALID_PARAMS, f"invalid params for {method}: {decode_problem(error)}") from None
        document = getattr(getattr(message, "params", None), "text_document", None)
        uri = getattr(document, "uri", None)
        if isinstance(uri, str) and (problem := uri_problem(uri)) is not None:
            raise _Reject(INVALID_PARAMS, f"invalid params for {method}: textDocument.uri is {problem}")
        return message

    def structure_message(self, data: dict[str, Any]) -> Any:
        # pygls logs a traceback for every message that does not decode; ours is one line.
        pygls_logger = logging.getLogger("pygls.protocol.json_rpc")
        previous = pygls_logger.disabled
        pygls_logger.disabled = True
        try:
            return super().structure_message(data)
        finally:
            pygls_logger.disabled = previous

    def _handle_client_answer(self, data: dict[str, Any]) -> None:
        """The client's answer to one of our requests; a malformed one fails the
        waiting request instead of leaving it waiting forever."""
        msg_id = data["id"]
        if msg_id not in self._request_futures:
            log.warning("transport: an answer to unknown request %s was dropped", cap(repr(msg_id), 60))
            self._result_types.pop(msg_id, None)
            return
        problem = None
        if "result" in data and "error" in data:
            problem = 'it has both "result" and "error"'
        elif "result" in data and data["result"] is not None and _void_result(self._result_types.get(msg_id)):
            problem = f"expected null, got {_json_type(data['result'])}"  # cattrs would take anything for None
        else:
            try:
                message = self.structure_message(data)
            except Exception as error:  # noqa: BLE001
                problem = decode_problem(error)
        if problem is not None:
            self._result_types.pop(msg_id, None)
            future = self._request_futures.pop(msg_id)
            log.warning("transport: malformed answer to request %s: %s", msg_id, problem)
            if not future.done():
                future.set_exception(ClientAnswerError(message=cap(f"malformed answer: {problem}"), code=INVALID_PARAMS))
            return
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():  # timed out meanwhile
            self._request_futures.pop(msg_id, None)
            return
        # Straight to pygls' bookkeeping: its handle_message drops answers after shutdown.
        if "error" in data:
            self._handle_response(msg_id, None, message.error)
        else:
            self._handle_response(msg_id, message.result)

    # Outgoing --------------------------------------------------------------------

    def _reply_error(self, msg_id: Any, code: int, message: str) -> None:
        """An error for a message that never reached a handler."""
        response = types.ResponseErrorMessage(id=msg_id, error=types.ResponseError(code=code, message=cap(message)))
        self._send_data(response)

    def _send_response(self, msg_id: Any, result: Any | None = None, error: types.ResponseError | None = None) -> None:
        if msg_id not in self._inflight:
            log.warning("transport: a second answer to request %s was not sent", cap(repr(msg_id), 60))
            return
        self._inflight.discard(msg_id)
        self.stats["answered"] += 1
        if error is not None:
            error = types.ResponseError(
                code=error.code,
                message=cap(error.message, self.limits.max_error_chars),
                data=error.data if len(json.dumps(error.data, default=str)) <= self.limits.max_error_chars else None,
            )
        super()._send_response(msg_id, result, error)

    def send_request(self, method: str, params: Any | None = None, callback: Any = None, msg_id: Any = None) -> Any:
        msg_id = msg_id if msg_id is not None else str(uuid.uuid4())
        future = super().send_request(method, params, callback, msg_id)
        # A request we stopped waiting for (timeout, cancel) is forgotten, so a late
        # answer is dropped as unknown instead of resolving a dead future.
        future.add_done_callback(lambda f: self._forget(msg_id, f))
        return future

    def send_request_async(self, method: str, params: Any | None = None, msg_id: Any = None) -> Any:
        """Every request to the client is bounded (`ask_client`): awaiting it
        raises `ClientRequestFailed` on a timeout, an error or a malformed answer."""
        return ask_client(method, super().send_request_async(method, params, msg_id))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if not future.cancelled():
            return
        try:  # later: pygls may be iterating over its futures (shutdown cancels them all)
            asyncio.get_running_loop().call_soon(self._drop_request, msg_id, future)
        except RuntimeError:
            self._drop_request(msg_id, future)

    def _drop_request(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            self._request_futures.pop(msg_id, None)
            self._result_types.pop(msg_id, None)


# -- bounded server→client requests ----------------------------------------------------


class ClientRequestFailed(Exception):
    """A request to the client got no usable answer: timeout, error, malformed (`kind`)."""

    def __init__(self, method: str, reason: str, kind: str = "malformed") -> None:
        super().__init__(f"{method}: {reason}")
        self.method = method
        self.reason = reason
        self.kind = kind  # "timeout" | "error" (the client answered that the request failed) | "malformed"

    @property
    def answer_unknown(self) -> bool:
        """The client may have done what was asked (no answer, or one that says nothing):
        unlike an error answer, which says the request failed."""
        return self.kind != "error"


T = TypeVar("T")

# Default waits for the client's answers (seconds); docs/protocol.md, "Timeouts".
TIMEOUTS = {
    types.WORKSPACE_APPLY_EDIT: 60.0,
    types.WINDOW_SHOW_MESSAGE_REQUEST: 600.0,
    types.WINDOW_WORK_DONE_PROGRESS_CREATE: 10.0,
    types.CLIENT_REGISTER_CAPABILITY: 10.0,
    types.WORKSPACE_CODE_LENS_REFRESH: 10.0,
    types.WINDOW_SHOW_DOCUMENT: 30.0,
}
DEFAULT_TIMEOUT = 30.0
TIMEOUT_ENV = "DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE"


def timeout_for(method: str) -> float:
    """How long we wait for the client's answer to `method` (scaled by
    `DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE`, for tests and slow machines)."""
    return scaled(TIMEOUTS.get(method, DEFAULT_TIMEOUT))


def scaled(base: float) -> float:
    """A wait for the editor, `base` seconds times `DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE`."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        scale = float(raw) if raw else 1.0
    except ValueError:
        scale = 1.0
    return base * scale if scale > 0 else base


async def ask_client(method: str, answer: Awaitable[T], timeout: float | None = None) -> T:
    """Await the client's answer to a request we sent, bounded by `timeout`
    (default: `timeout_for(method)`). Raises `ClientRequestFailed` on a
    timeout, an error answer or an answer that did not decode."""
    limit = timeout_for(method) if timeout is None else timeout
    try:
        return await asyncio.wait_for(answer, limit)
    except asyncio.TimeoutError:
        raise ClientRequestFailed(method, f"no answer within {limit:g} s", "timeout") from None
    except ClientAnswerError as error:
        raise ClientRequestFailed(method, cap(error.message or "malformed answer", 200)) from None
    except JsonRpcException as error:
        raise ClientRequestFailed(method, cap(f"the editor answered with an error: {error.message}", 200),
                                  "error") from None
    except (TypeError, ValueError, AttributeError) as error:  # a shape pygls could not use
        raise ClientRequestFailed(method, cap(f"malformed answer: {error}", 200)) from None


# -- serving -------------------------------------------------------------------------


class _StdinSource:
    """Reads stdin in a daemon thread (never keeps the process alive), with
    back-pressure: at most a few chunks wait for the event loop."""

    CHUNK = 64 * 1024

    def __init__(self, stdin: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(maxsize=8)
        self._loop = loop
        self._fd = stdin.fileno()
        threading.Thread(target=self._run, name="deepseek-ls stdin", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, self.CHUNK)
            except OSError:
                chunk = b""
            try:
                asyncio.run_coroutine_threadsafe(self._queue.put(chunk), self._loop).result()
            except Exception:  # noqa: BLE001 - the loop is gone: the server is exiting
                return
            if not chunk:
                return

    async def read(self) -> bytes:
        return await self._queue.get()


async def _serve(protocol: HardenedProtocol, read: Callable[[], Awaitable[bytes]], limits: Limits) -> int:
    parser = FrameParser(limits)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    protocol.on_exit = lambda code: stop.set()
    writer = protocol.writer
    if isinstance(writer, FrameWriter):
        writer.on_broken = lambda: loop.call_soon_threadsafe(stop.set)
    reading = asyncio.ensure_future(_pump(protocol, parser, read, stop))
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    for task in (reading, stopping):
        task.cancel()
    if protocol.exit_code is not None:
        return protocol.exit_code
    # End of input (or a broken pipe) without `exit`.
    log.info("the client closed the connection")
    return 0 if protocol.shutdown_requested else 1


async def _pump(
    protocol: HardenedProtocol, parser: FrameParser, read: Callable[[], Awaitable[bytes]], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        chunk = await read()
        if not chunk:
            return
        for event in parser.feed(chunk):
            protocol.handle_frame(event)
            if protocol.exit_code is not None:
                return


def serve_stdio(server: LanguageServer, limits: Limits, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Serve one client on stdin/stdout until `exit` or end of input; the exit code."""
    protocol = server.protocol
    assert isinstance(protocol, HardenedProtocol), "create the server with protocol_cls=HardenedProtocol"
    protocol.limits = limits
    out = stdout or sys.stdout.buffer
    protocol.set_writer(FrameWriter(out.write, out.flush), include_headers=False)

    async def main() -> int:
        source = _StdinSource(stdin or sys.stdin.buffer, asyncio.get_running_loop())
        return await _serve(protocol, source.read, limits)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 1


def serve_tcp(server: LanguageServer, limits: Limits, host: str, port: int) -> int:
    """Serve one client connection on HOST:PORT (debugging); the exit code."""
    protocol = server.protocol
    assert isinstance(protocol, HardenedProtocol), "create the server with protocol_cls=HardenedProtocol"
    protocol.limits = limits

    async def main() -> int:
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if done.done() or protocol.writer is not None:
                writer.close()
                return
            protocol.set_writer(FrameWriter(writer.write), include_headers=False)
            code = await _serve(protocol, lambda: reader.read(64 * 1024), limits)
            writer.close()
            if not done.done():
                done.set_result(code)

        tcp = await asyncio.start_server(connection, host, port)
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in tcp.sockets))
        async with tcp:
            return await done

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 1

"""`HardenedProtocol`: pygls' protocol behind our validation.

`handle_body` decodes and validates each message and answers every request
exactly once, to its own id whenever the body parsed as JSON (too deep, even
for the decoder, or holding an unpaired surrogate: -32602/-32600 to that id; an
oversized body's id is read by the framing): -32700 for bytes that are not
JSON, -32600 for what is not a JSON-RPC request, -32602 (with a short reason)
for params that do not decode, -32002 before `initialize`, -32600 after
`shutdown`; `exit` ends the process with 0 after `shutdown`, else 1. A
notification that cannot be used is dropped unanswered (and a lost document
change reported through `on_dropped`). Every request we send is bounded
(`client_requests.ask_client`), and a malformed answer fails it.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol

from deepseek_ls.lsp.transport.client_requests import ClientAnswerError, ask_client
from deepseek_ls.lsp.transport.decoding import (
    Outline,
    decode_problem,
    encodable,
    is_notification_method,
    json_type,
    may_hold_surrogate,
    too_deep,
    uri_problem,
    valid_id,
    void_result,
)
from deepseek_ls.lsp.transport.framing import Oversized
from deepseek_ls.lsp.transport.limits import Limits, cap

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

PARSE_ERROR = types.ErrorCodes.ParseError.value  # -32700
INVALID_REQUEST = types.ErrorCodes.InvalidRequest.value  # -32600
INVALID_PARAMS = types.ErrorCodes.InvalidParams.value  # -32602
SERVER_NOT_INITIALIZED = types.ErrorCodes.ServerNotInitialized.value  # -32002


class _Reject(Exception):
    """An invalid message: answer `code` to its id (when there is one)."""

    def __init__(self, code: int, message: str, msg_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.msg_id = msg_id  # set when the id was read before the message could be decoded whole


class _Dropped(Exception):
    """A notification that cannot be used: logged, never answered."""


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
            if isinstance(data, dict) and valid_id(data.get("id")):
                msg_id = data["id"]
            self._dispatch(data)
        except _Dropped:
            self.stats["rejected"] += 1
        except _Reject as rejected:
            self.stats["rejected"] += 1
            log.warning("transport: rejected a message (%s): %s", rejected.code, cap(str(rejected), 200))
            self._reply_error(rejected.msg_id if rejected.msg_id is not None else msg_id, rejected.code, str(rejected))
        except Exception as error:
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
            outline = Outline.of(text, limit)
            deep = "params" if "params" in outline.deep_members else None
            self._refuse(outline.members, deep, f"nested deeper than {limit} levels")
            raise _Reject(PARSE_ERROR, "parse error: the JSON is nested too deeply") from None
        except ValueError as error:
            raise _Reject(PARSE_ERROR, cap(f"parse error: {error}", 120)) from None
        if isinstance(data, (dict, list)) and too_deep(data, limit):
            members = data if isinstance(data, dict) else {}
            deep = "params" if too_deep(members.get("params"), limit - 1) else None
            self._refuse(members, deep, f"nested deeper than {limit} levels")
            raise _Reject(PARSE_ERROR, f"parse error: the JSON is nested deeper than {limit} levels")
        if may_hold_surrogate(text) and not encodable(data):
            members = data if isinstance(data, dict) else {}
            surrogate = "params" if not encodable(members.get("params")) else None
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
        if valid_id(msg_id):
            code, what = (INVALID_PARAMS, "invalid params") if where == "params" else (INVALID_REQUEST, "invalid request")
            raise _Reject(code, f"{what}: {problem}", msg_id)
        if notification and "id" not in members:
            raise _Dropped

    def _dispatch(self, data: Any) -> None:
        if not isinstance(data, dict):
            what = "a batch (array)" if isinstance(data, list) else json_type(data)
            raise _Reject(INVALID_REQUEST, f"invalid request: expected a JSON object, got {what}")
        if data.get("jsonrpc") != "2.0":
            raise _Reject(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
        has_id = "id" in data
        if has_id and not valid_id(data["id"]):
            raise _Reject(INVALID_REQUEST, f'invalid request: "id" must be an integer or a string, got {json_type(data["id"])}')
        if "method" not in data:
            if has_id and ("result" in data or "error" in data):
                self._handle_client_answer(data)
                return
            raise _Reject(INVALID_REQUEST, 'invalid request: "method" is missing')
        method = data["method"]
        if not isinstance(method, str) or not method:
            raise _Reject(INVALID_REQUEST, '"method" must be a non-empty string')
        if "params" in data and not isinstance(data["params"], (dict, list)) and data["params"] is not None:
            raise _Reject(INVALID_PARAMS, f'invalid params: expected an object or an array, got {json_type(data["params"])}')
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
        self._handle_known(message, request=True)

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
            if valid_id(target) and target not in self._inflight:
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
        self._handle_known(message, request=False)

    def _handle_known(self, message: Any, *, request: bool) -> None:
        """pygls' `handle_message` for a message whose kind `_dispatch` already knows: pygls finds it
        out with isinstance checks against `typing.Protocol`s, ~0.15 ms a notification on Python
        3.11 (two a keystroke: `didChange`, `inlineCompletion`). The JSON-RPC version was checked."""
        if self._shutdown and message.method != types.EXIT:
            log.warning("transport: %s after shutdown; not handled", cap(message.method, 80))
            return
        context = contextvars.copy_context()  # each handler in its own context, as pygls runs them
        if request:
            context.run(self._handle_request, message.id, message.method, message.params)
        else:
            context.run(self._handle_notification, message.method, message.params)

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
        elif "result" in data and data["result"] is not None and void_result(self._result_types.get(msg_id)):
            problem = f"expected null, got {json_type(data['result'])}"  # cattrs would take anything for None
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

    def _send_data(self, data: Any) -> None:
        """pygls' send with the message encoded once (pygls' own encodes it again after any check
        of ours). An answer that does not encode becomes an error to the same request: pygls would
        log it and send nothing, and the client would wait forever (never a hang)."""
        if not data:
            return
        try:
            body = json.dumps(data, default=self._serialize_message)
        except Exception as exc:
            if getattr(data, "result", None) is None or hasattr(data, "method"):
                super()._send_data(data)  # not an answer: pygls logs and reports it, as before
                return
            log.exception("transport: the answer to request %s could not be encoded", cap(repr(data.id), 60))
            body = json.dumps(types.ResponseErrorMessage(id=data.id, error=types.ResponseError(
                code=types.ErrorCodes.InternalError.value,
                message=cap(f"deepseek-ls could not encode its answer ({type(exc).__name__}: {exc}); "
                            "this is a bug in deepseek-ls: the server log has the details"))),
                default=self._serialize_message)
        self._write_body(body)

    def _write_body(self, body: str) -> None:
        """One encoded message to the client, framed as pygls frames it."""
        if self.writer is None:
            log.error("transport: no connection to send to")
            return
        payload = body.encode(self.CHARSET)
        if self._include_headers:
            payload = (f"Content-Length: {len(payload)}\r\nContent-Type: {self.CONTENT_TYPE}; "
                       f"charset={self.CHARSET}\r\n\r\n").encode("ascii") + payload
        try:
            res = self.writer.write(payload)
            if inspect.isawaitable(res):
                asyncio.ensure_future(res)
        except BrokenPipeError:
            log.exception("transport: the client's end of the connection is closed")
            raise
        except Exception as error:
            log.exception("transport: a message could not be sent")
            self._server._report_server_error(error, JsonRpcInternalError)

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

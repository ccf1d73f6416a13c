"""Bounded server→client requests: every request we send the editor is awaited with
a timeout (`TIMEOUTS`, scaled by `DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE`), and a timeout,
an error answer or an answer that does not decode becomes `ClientRequestFailed`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp.transport.limits import cap


class ClientAnswerError(JsonRpcException):
    """The client's answer to one of our requests did not decode."""



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

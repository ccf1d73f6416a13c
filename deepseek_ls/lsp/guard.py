"""Registering commands and requests so that a failure is reported, not lost.

A handler raises; the person sees what happened (`window/showMessage`), the
client gets a JSON-RPC error with the same text, the log gets the traceback when
it was unexpected, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Awaitable, Callable

from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled

from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.transport.limits import cap

log = logging.getLogger(__name__)

REQUEST_FAILED = -32803  # LSP ErrorCodes.RequestFailed
INVALID_PARAMS = -32602  # JSON-RPC: arguments that do not match the command's shape

Handler = Callable[[DeepSeekServer, Any], "Any | Awaitable[Any]"]


def user_message(error: BaseException) -> str | None:
    """The message for the person when `error` is an expected failure, else None."""
    message = getattr(error, "user_message", None)
    if message:
        return str(message)
    expected = ("ArgsError", "UnknownApproval", "FeatureUnavailable", "PatchError", "PolicyViolation",
                "SettingsError", "ConfigError", "SessionCancelled", "AgentFailure", "UnsupportedEdit",
                "ClientRequestFailed")  # the editor did not answer one of our requests usably
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])  # str(KeyError) adds quotes
    if any(cls.__name__ in expected for cls in type(error).__mro__) or isinstance(
        error, (ValueError, LookupError, PermissionError, FileNotFoundError)
    ):
        return str(error)
    return None


async def run_guarded(
    ls: DeepSeekServer, what: str, handler: Handler, args: Any, *, show: bool = True
) -> Any:
    try:
        result = handler(ls, args)
        if inspect.isawaitable(result):
            result = await result
        return result
    except asyncio.CancelledError:
        log.info("%s cancelled", what)
        raise
    except JsonRpcException:
        raise
    except Exception as error:  # noqa: BLE001 - reported to the person and the client
        message = user_message(error)
        if message is None:
            log.exception("%s failed", what)
            message = f"{what} failed: {type(error).__name__}: {error} (details in the server log)"
        else:
            log.warning("%s: %s", what, message)
        if not message.startswith("deepseek-ls"):
            message = f"deepseek-ls: {message}"
        message = cap(message)  # never echo a 2 MB argument back
        # Arguments of the wrong shape are the client's bug: -32602 to the client
        # (which reports it), not a pop-up from us as well.
        bad_args = any(cls.__name__ == "ArgsError" for cls in type(error).__mro__)
        if show and not bad_args:
            ls.show_error(message)
        raise JsonRpcException(message=message, code=INVALID_PARAMS if bad_args else REQUEST_FAILED) from None


def _cancel_with_request(ls: DeepSeekServer) -> None:
    """`$/cancelRequest` for an executeCommand cancels pygls' outer future only;
    carry it over to the task running the command so the work really stops."""
    task = asyncio.current_task()
    outer = ls.protocol._request_futures.get(ls.protocol.msg_id)  # pygls 2.x request bookkeeping
    if task is None or outer is None:
        return
    loop = asyncio.get_running_loop()
    outer.add_done_callback(lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None)


def command(server: DeepSeekServer, name: str, handler: Handler) -> None:
    """Register `handler(ls, args_dict)` as `workspace/executeCommand` `name`."""

    from deepseek_ls.lsp.arguments import the_argument

    def one_object(ls: DeepSeekServer, arguments: tuple[Any, ...]) -> Any:
        return handler(ls, the_argument(arguments))

    # `*arguments`: pygls passes them as sent; `the_argument` and `parse_args` say what is wrong.
    async def execute(ls: DeepSeekServer, *arguments: Any) -> Any:
        _cancel_with_request(ls)
        try:
            return await run_guarded(ls, name, one_object, arguments)
        except asyncio.CancelledError:
            # pygls runs commands inside its executeCommand generator, which only
            # answers the client when the handler ends with an Exception.
            raise JsonRpcRequestCancelled(f"deepseek-ls: {name} was cancelled") from None

    execute.__name__ = f"command_{name.replace('.', '_')}"
    server.command(name)(execute)


def request(server: DeepSeekServer, method: str, handler: Handler) -> None:
    """Register `handler(ls, params)` as the custom request `method` (errors go to
    the response and the log only: clients call these on their own)."""

    async def handle(ls: DeepSeekServer, params: Any) -> Any:
        return await run_guarded(ls, method, handler, params, show=False)

    server.feature(method)(handle)

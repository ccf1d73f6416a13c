"""How a failed ACP request answers: a JSON-RPC error the client can act on (and exit non-zero for),
never a normal end of turn with the failure in the chat.

- a missing or refused API key: `-32000` (ACP's `auth_required`), naming the `authMethods` entry we
  advertise: the key is an environment variable the client sets when it starts `deepseek-ls acp`;
- a read the client refused (`fs/read_text_file`): `-32603`, naming the file and the client's answer;
- anything else that stopped the turn (the model unreachable or refusing, yolo in an untrusted
  workspace, a bad config, a bug): `-32603` with what happened and what to do.

`data.sessionId` names our session of the turn when there is one (`deepseek-ls replay ID`).
"""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import AuthEnvVar, EnvVarAuthMethod

AUTH_METHOD_ID = "deepseek-api-key"
INTERNAL_ERROR = -32603


def auth_methods(config: Any) -> list[EnvVarAuthMethod]:
    """What `initialize` advertises: the API key, given in the agent's environment."""
    return [EnvVarAuthMethod(
        type="env_var", id=AUTH_METHOD_ID, name="DeepSeek API key",
        description=(f"Set {config.llm.api_key_env} in the environment deepseek-ls acp starts with "
                     "(the editor's agent settings), then start a new session."),
        vars=[AuthEnvVar(name=config.llm.api_key_env, label="DeepSeek API key", secret=True)],
        link="https://platform.deepseek.com/api_keys",
    )]


def auth_problem(config: Any) -> str | None:
    """Why the session's default model cannot be asked for lack of a key, or None."""
    from deepseek_ls.llm.errors import AuthError
    from deepseek_ls.llm.profiles import resolve_profile

    try:
        resolve_profile(config.llm, "fast")
    except AuthError as exc:
        return exc.user_message
    except Exception:  # noqa: BLE001 - any other problem is the prompt's to report, with its context
        return None
    return None


def auth_required(message: str, session_id: str | None = None) -> RequestError:
    data: dict[str, Any] = {"authRequired": True, "methods": [AUTH_METHOD_ID], "reason": message}
    if session_id:
        data["sessionId"] = session_id
    return RequestError(-32000, f"Authentication required: {message}", data)


def turn_error(exc: BaseException, session_id: str | None) -> RequestError:
    """The JSON-RPC error a prompt answers when `exc` stopped its turn."""
    if isinstance(exc, RequestError):
        return exc
    message = str(getattr(exc, "user_message", None) or f"{type(exc).__name__}: {exc}")[:1000]
    if getattr(exc, "kind", None) == "auth":
        return auth_required(message, session_id)
    data: dict[str, Any] = {"kind": getattr(exc, "kind", None) or type(exc).__name__}
    if getattr(exc, "retryable", None) is not None:
        data["retryable"] = bool(exc.retryable)  # type: ignore[attr-defined]
    if session_id:
        data["sessionId"] = session_id
    return RequestError(INTERNAL_ERROR, message, data)


def refused_reads(refusals: list[Any], session_id: str | None) -> RequestError:
    """The turn's error when the client refused to let us read what it shows: nothing was read from
    the disk instead, and the turn stopped there."""
    first = refusals[0]
    files = sorted({r.relpath for r in refusals})
    data: dict[str, Any] = {"kind": "read_refused", "files": files, "reason": first.reason}
    if session_id:
        data["sessionId"] = session_id
    return RequestError(INTERNAL_ERROR, (
        f"{first}; deepseek-ls never reads the disk behind the editor, so the turn stopped (nothing was "
        "written). Allow the agent to read files (acpx: --approve-reads or --approve-all) and send the prompt again."),
        data)

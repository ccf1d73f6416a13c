"""MCP tools as `Tool`s of the `ToolHost`: `mcp_<server>_<tool>`, same policy path as built-ins.

A tool the server annotates `readOnlyHint` is a read tool: offered while planning and
run without a prompt in `suggest` mode. Every other tool is an exec tool: offered to
the executor only, and run only after an approval (`mcp.call`) — `never` refuses it,
`auto`/`yolo` allow it, "always allow" covers that one tool of that server. A call whose
arguments name a secret file (`policy/foreign_io.py`) is refused before anything else, any
tool. Results are flattened to text (images and audio become a note, resources their text or
a link), credential files and the patch sections of secret files are replaced by a note,
the rest is redacted, and capped at `mcp.max_result_bytes`.
"""

from __future__ import annotations

import json
from typing import Any

from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.foreign_io import hide_secret_text, secret_argument
from deepseek_ls.policy.redact import cut_head, cut_tail, redact_obj
from deepseek_ls.store.ids import new_id
from deepseek_ls.tools.mcp.client import McpToolInfo
from deepseek_ls.tools.mcp.manager import McpManager
from deepseek_ls.tools.mcp.servers import safe_name
from deepseek_ls.tools.registry import Tool, ToolContext
from deepseek_ls.ui_port import ApprovalRequest

MAX_NAME = 64  # OpenAI-compatible function names: ^[a-zA-Z0-9_-]{1,64}$


def tool_name(server: str, tool: str) -> str:
    return f"mcp_{safe_name(server)}_{safe_name(tool)}"[:MAX_NAME]


def mcp_tools(manager: McpManager, infos: list[McpToolInfo]) -> list[tuple[Tool, McpToolInfo]]:
    """One `Tool` per MCP tool; a name clash after shortening keeps the first and drops the rest."""
    out: dict[str, tuple[Tool, McpToolInfo]] = {}
    for info in infos:
        name = tool_name(info.server, info.name)
        if name not in out:
            out[name] = (_tool(manager, info, name), info)
    return list(out.values())


def _tool(manager: McpManager, info: McpToolInfo, name: str) -> Tool:
    cap = manager.config.max_result_bytes

    async def handler(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        # A server restarted since the listing (it crashed, maybe on purpose) lists anew: a tool offered
        # as read-only, or approved, may now act. Only the definition that was offered runs.
        now = await manager.current(info.server, info.name)
        if now is None:
            raise RuntimeError(f"MCP server {info.server!r} no longer offers {info.name!r}; it was not run")
        if now.fingerprint != info.fingerprint:
            raise RuntimeError(
                f"MCP tool {info.server}/{info.name} changed since it was offered (its description, arguments or "
                "read-only hint); it was not run. The next request offers it as it is now"
            )
        # Before any approval: a call naming a secret file is never made, whoever would allow it.
        refusal = secret_argument(args, manager.root, manager.deny_paths)
        if refusal:
            raise PolicyViolation(f"MCP tool {info.server}/{info.name}", "secret_argument",
                                  f"{refusal}; the call was not made")
        if not info.read_only:
            await approve_call(ctx, info.server, info.name, name, args, info.fingerprint)
        result = await manager.call(info.server, info.name, args)
        rendered = render_result(result, cap, manager.deny_paths)
        if rendered["is_error"]:
            raise RuntimeError(f"MCP tool {info.server}/{info.name} reported an error: {rendered['text'][:1000]}")
        return rendered

    description = f"[MCP server {info.server!r}] {info.description}".strip()
    return Tool(
        name,
        description,
        args=None,  # type: ignore[arg-type] - validated against json_schema instead
        handler=handler,
        effect="read" if info.read_only else "exec",
        json_schema=_object_schema(info.input_schema),
    )


async def approve_call(ctx: ToolContext, server: str, tool: str, name: str, args: dict[str, Any],
                       fingerprint: str = "") -> None:
    """Ask before an MCP tool that acts runs (live, and in replay where the recording answers).
    "Always allow" is bound to the tool's definition (`fingerprint`): a server that changes what the
    tool says it does is asked about again. Raises `ToolDenied` when the person or the policy says no,
    `Refused` when the person cancelled or did not answer (the step stops)."""
    shown = json.dumps(redact_obj(args), ensure_ascii=False)
    request = ApprovalRequest(
        request_id=new_id(),
        kind="mcp.call",
        title=f"Run MCP tool {server}/{tool}",
        detail=(shown if len(shown) <= 2000 else shown[:2000] + " …"),
        command=f"mcp {server} {tool}" + (f" @{fingerprint}" if fingerprint else ""),
    )
    await ctx.approve(request, tool=name)


def listing(tool: Tool, info: McpToolInfo) -> dict[str, Any]:
    """How an offered MCP tool is recorded in `McpToolsListed@v1` (enough for replay to offer and ask alike)."""
    return {"name": tool.name, "server": info.server, "tool": info.name, "effect": tool.effect, "schema": tool.schema(),
            "fingerprint": info.fingerprint}


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Function parameters must be an object schema; some servers omit `type` or `properties`."""
    out = dict(schema or {})
    out.setdefault("type", "object")
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def _secret_resource(uri: str, text: str | None, deny_paths: list[str] | tuple[str, ...]) -> str | None:
    """Why an embedded resource is a secret file (its location, or its content), or None: a server that
    reads files hands back `.env` as readily as our own tools would refuse it."""
    from urllib.parse import unquote, urlparse

    from deepseek_ls.policy.paths import secret_location
    from deepseek_ls.policy.secret_files import secret_kind

    where = secret_location(unquote(urlparse(uri).path), deny_paths)
    if where:
        return where
    kind = secret_kind(text) if text else None
    return f"its content looks like {kind}" if kind else None


def render_result(result: Any, cap: int, deny_paths: list[str] | tuple[str, ...] | None = None) -> dict[str, Any]:
    """`CallToolResult` -> {"text", "is_error", "truncated", "structured"?}: what the model is given.
    Embedded resources at a secret location (`deny_paths`, default `policy.deny_paths`' default) or
    with credential content are named, not shown."""
    if deny_paths is None:
        from deepseek_ls.config_models import DEFAULT_DENY_PATHS

        deny_paths = DEFAULT_DENY_PATHS
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(hide_secret_text(block.text, deny_paths)[0])
        elif kind in ("image", "audio"):
            mime = getattr(block, "mime_type", None) or "unknown type"
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind} ({mime}, about {size} bytes) returned by the tool; not shown to the model]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            uri = str(getattr(res, "uri", ""))
            secret = _secret_resource(uri, text, deny_paths)
            if secret:
                parts.append(f"[resource {uri}: {secret}; not shown (secret files never reach the model)]")
            else:
                shown = hide_secret_text(text, deny_paths)[0] if text is not None else None
                parts.append(f"[resource {uri}]\n{shown}" if shown is not None else f"[binary resource {uri}; not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {getattr(block, 'uri', '')} {getattr(block, 'name', '') or ''}]".strip())
        else:
            parts.append(f"[{kind or 'unknown'} content; not shown]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(hide_secret_text(json.dumps(structured, ensure_ascii=False), deny_paths)[0])
    text = "\n".join(parts)
    raw = text.encode("utf-8")
    truncated = len(raw) > cap
    if truncated:
        # Cut first, then redact only what is kept: redacting a 50 MB result whole held the event
        # loop for seconds. Neither side keeps the word the cut split (half a secret is not
        # recognised by redaction).
        half = cap // 2
        head = cut_head(raw[:half].decode("utf-8", "ignore"), half, cut_inside=True)
        tail = cut_tail(raw[-half:].decode("utf-8", "ignore"))
        text = (redact_obj(head) + f"\n... [{len(raw) - 2 * half} bytes cut: the result exceeded {cap} bytes] ...\n"
                + redact_obj(tail))
    else:
        text = redact_obj(text)
    return {"text": text, "is_error": bool(getattr(result, "is_error", False)), "truncated": truncated}

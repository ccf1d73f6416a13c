"""`ToolHost`: the one door through which the agent looks at and changes the workspace.

It offers the tools' JSON Schemas to the model (OpenAI function format),
validates arguments before anything runs, enforces policy (paths, commands,
approvals) and journals every call as `ToolProposed@v1` -> (`ToolApproved@v1`)
-> `ToolResult@v1`. Results are `ToolOutcome{ok, value | error}`; errors are
sentences a model and a person can both act on. Event payloads are redacted.
"""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ValidationError

from deepseek_ls.config_models import Config
from deepseek_ls.patch.model import PatchError
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.approvals import Approvals, Refused
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.paths import PathPolicy
from deepseek_ls.policy.redact import redact_obj
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import EventSink, NullSink
from deepseek_ls.tools import fs, index_tools, patch_tools, search, shell
from deepseek_ls.tools import git as git_tools
from deepseek_ls.tools.registry import Tool, ToolContext, ToolDenied
from deepseek_ls.tools.skill_tools import SKILL_LOAD
from deepseek_ls.ui_port import AutoApproveUI, UIPort

log = logging.getLogger(__name__)

ALL_TOOLS: list[Tool] = [
    *fs.TOOLS,
    *search.TOOLS,
    *git_tools.TOOLS,
    *index_tools.TOOLS,
    *patch_tools.TOOLS,
    *shell.TOOLS,
]


class ToolOutcome(BaseModel):
    ok: bool
    value: Any = None
    error: str | None = None

    def to_content(self) -> str:
        """The tool message content sent back to the model, redacted before it is encoded."""
        if self.ok:
            return json.dumps(redact_obj(self.value), ensure_ascii=False)
        return json.dumps(redact_obj({"error": self.error}), ensure_ascii=False)


class ToolHost:
    def __init__(
        self,
        root: Path,
        config: Config | None = None,
        *,
        sink: EventSink | None = None,
        ui: UIPort | None = None,
        overlay: DocumentOverlay | None = None,
        patches: Any = None,
        index: Any = None,
        session_id: str | None = None,
        read_only: bool = False,
        approvals: Approvals | None = None,
        mcp: Any = None,
        limit: dict[str, Any] | None = None,
        skills: Any = None,
        hooks: Any = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config or Config()
        self.sink = sink if sink is not None else NullSink()
        self.ui = ui if ui is not None else AutoApproveUI("deny")
        self.overlay = overlay if overlay is not None else DocumentOverlay(self.root)
        self.paths = PathPolicy(self.root, self.config.policy.deny_paths)
        self.commands = CommandPolicy(self.config.policy, self.root)
        self.sandbox = Sandbox(self.root, deny_paths=self.config.policy.deny_paths, config=self.config.policy.sandbox)
        self.approvals = approvals or Approvals(self.config.policy, self.ui, sink=self.sink)
        self.patches = patches
        self.index = index
        self.session_id = session_id
        self.read_only = read_only
        self.allowed_files: list[str] | None = None
        self.mcp = mcp
        self.mcp_tools: list[Tool] = []
        # A custom command's allowed-tools narrow what is offered and run (never widening the policy).
        self.allowed: set[str] | None = set(limit["tools"]) if limit is not None else None
        self.bash_prefixes: list[str] = list((limit or {}).get("bash_prefixes") or [])
        # Agent Skills (extensions/skills.SkillSet): skill.load is offered only when there are some.
        self.skills = skills
        # Lifecycle hooks (extensions/hook_runner.Hooks): PreToolUse may block a call, PostToolUse
        # may add to its result; neither widens the policy. None: no hooks (a replay never runs them).
        self.hooks = hooks
        self.builtin = [*ALL_TOOLS, *([SKILL_LOAD] if skills is not None and skills.skills else [])]
        self._tools = {t.name: t for t in self.builtin}
        self._tools.update({t.wire_name: t for t in self.builtin})

    def tools(self, read_only: bool | None = None) -> list[Tool]:
        ro = self.read_only if read_only is None else read_only
        return [t for t in [*self.builtin, *self.mcp_tools]
                if (not ro or t.effect == "read") and (self.allowed is None or t.name in self.allowed)]

    async def load_mcp_tools(self) -> list[dict[str, Any]]:
        """Start the MCP servers (first time only) and offer their tools; returns what was offered
        as `McpToolsListed@v1` records it, so replay offers the same schemas."""
        if self.mcp is None:
            return []
        for notice in self.mcp.take_notices():
            self.ui.stream("status", f"MCP: {notice}\n", session_id=self.session_id)
        if not self.mcp.active:
            return []
        from deepseek_ls.tools.mcp.provider import listing, mcp_tools

        infos, problems = await self.mcp.list_tools()
        offered = mcp_tools(self.mcp, infos)
        self.set_mcp_tools([tool for tool, _ in offered])
        listed = [listing(tool, info) for tool, info in offered]
        self.sink.emit("McpToolsListed@v1", {"tools": listed, "problems": problems})
        for problem in problems:
            self.ui.stream("status", f"MCP: {problem}\n", session_id=self.session_id)
        return listed

    def set_mcp_tools(self, tools: list[Tool]) -> None:
        for old in self.mcp_tools:
            self._tools.pop(old.name, None)
        self.mcp_tools = list(tools)
        self._tools.update({t.name: t for t in self.mcp_tools})

    def schemas(self, read_only: bool = False) -> list[dict[str, Any]]:
        """OpenAI-style function definitions. Names use `_` for `.` (`fs_read`); `call` accepts both."""
        return [t.schema() for t in self.tools(read_only or self.read_only)]

    async def call(
        self, name: str, arguments: dict[str, Any] | str | None = None, *, call_id: str | None = None
    ) -> ToolOutcome:
        """Run one tool call. Never raises for tool-level failures: they become `ok=False`; a person's
        cancel or missing answer at its approval (`Refused`) is recorded and raised: the work stops."""
        call_id = call_id or str(uuid.uuid4())
        tool = self._tools.get(name)
        canonical = tool.name if tool else name
        try:
            args = _parse_arguments(arguments)
            refusal = None
        except ValueError as exc:
            args, refusal = {"_raw": str(arguments)[:2000]}, str(exc)
        self.sink.emit(
            "ToolProposed@v1",
            {"call_id": call_id, "tool": canonical, "arguments": redact_obj(args), "session_id": self.session_id},
        )
        if refusal is None:
            refusal, parsed = self._admit(name, tool, args)
        if refusal is not None or tool is None:
            return self._finish(call_id, canonical, ToolOutcome(ok=False, error=refusal))
        blocked = await self._pre_tool_hooks(tool.name, args, call_id)
        if blocked is not None:
            return self._finish(call_id, tool.name, ToolOutcome(ok=False, error=blocked))
        outcome = await self._run(tool, parsed, call_id)
        return self._finish(call_id, tool.name, await self._post_tool_hooks(tool.name, args, call_id, outcome))

    async def _run(self, tool: Tool, parsed: Any, call_id: str) -> ToolOutcome:
        try:
            outcome = ToolOutcome(ok=True, value=await tool.handler(self._context(call_id), parsed))
        except PolicyViolation as exc:
            self.sink.emit(
                "PolicyDecision@v1",
                {"subject": f"{tool.name}: {exc.subject}", "allowed": False, "rule": exc.rule, "reason": exc.reason},
            )
            outcome = ToolOutcome(ok=False, error=f"policy refused: {exc}")
        except Refused as exc:  # the person cancelled or did not answer: recorded, and the work stops
            self._finish(call_id, tool.name, ToolOutcome(ok=False, error=f"not run: {exc}"))
            raise
        except (ToolDenied, PatchError, FileNotFoundError, LookupError, ValueError, TimeoutError, RuntimeError) as exc:
            outcome = ToolOutcome(ok=False, error=str(exc))
        except Exception as exc:  # a bug in a tool must not take the agent down
            log.exception("tool %s failed", tool.name)
            outcome = ToolOutcome(ok=False, error=f"{tool.name} failed unexpectedly: {type(exc).__name__}: {exc}")
        return outcome

    async def _pre_tool_hooks(self, tool: str, args: dict[str, Any], call_id: str) -> str | None:
        """Why a PreToolUse hook blocked the call, or None. A hook's "allow" is recorded and changes
        nothing: the policy and the person's approvals still decide (docs/hooks.md)."""
        if self.hooks is None or not self.hooks.any("PreToolUse", tool):
            return None
        result = await self.hooks.fire("PreToolUse", {"tool_input": tool_input(tool, args, self.root),
                                                      "tool_use_id": call_id},
                                       emit=self.sink.emit, session_id=self.session_id, tool=tool)
        if result.blocked:
            return f"blocked by a hook, not run: {result.reason}"
        if result.stop:
            return f"not run: a hook stopped the work: {result.stop}"
        return None

    async def _post_tool_hooks(self, tool: str, args: dict[str, Any], call_id: str, outcome: ToolOutcome) -> ToolOutcome:
        """Run the PostToolUse hooks; what they say back (a block's reason, added context) reaches
        the model with the result (the tool has run: nothing is undone)."""
        if self.hooks is None or not self.hooks.any("PostToolUse", tool):
            return outcome
        response = outcome.value if outcome.ok else {"error": outcome.error}
        result = await self.hooks.fire("PostToolUse", {"tool_input": tool_input(tool, args, self.root),
                                                       "tool_response": response, "tool_use_id": call_id},
                                       emit=self.sink.emit, session_id=self.session_id, tool=tool)
        said = "\n\n".join(t for t in (result.reason if result.blocked else "", result.context_text) if t)
        if not said:
            return outcome
        if not outcome.ok:
            return ToolOutcome(ok=False, error=f"{outcome.error}\n\nhooks: {said}")
        value = dict(outcome.value) if isinstance(outcome.value, dict) else {"result": outcome.value}
        return ToolOutcome(ok=True, value={**value, "hooks": said})

    def _admit(self, name: str, tool: Tool | None, args: dict[str, Any]) -> tuple[str | None, Any]:
        """(why the call is refused before running, or None; the validated arguments)."""
        if tool is None:
            return f"unknown tool {name!r}; available: {', '.join(t.name for t in self.tools())}", None
        if self.read_only and tool.effect != "read":
            return f"{tool.name} is not available in read-only (plan) mode", None
        limited = self.limit_refusal(tool.name, str(args.get("cmd") or ""))
        if limited is not None:
            return limited, None
        if tool.args is None:
            problem = _schema_problem(tool.json_schema or {}, args)
            return (f"invalid arguments for {tool.name}: {problem}", None) if problem else (None, args)
        try:
            return None, tool.args.model_validate(args)
        except ValidationError as exc:
            return f"invalid arguments for {tool.name}: {_validation_message(exc)}", None

    def limit_refusal(self, name: str, cmd: str = "") -> str | None:
        """Why the custom command this session runs does not allow tool `name` (for `bash.run`, the
        command line `cmd`: a verification command too), or None."""
        if self.allowed is None:
            return None
        if name not in self.allowed:
            return (f"{name} is not among the tools this custom command allows "
                    f"({', '.join(sorted(self.allowed)) or 'none'})")
        cmd = cmd.strip()
        if name == "bash.run" and self.bash_prefixes and not any(
                cmd == p or cmd.startswith(p + " ") for p in self.bash_prefixes):
            return (f"this custom command allows only the commands starting with: {', '.join(self.bash_prefixes)}; "
                    f"{cmd!r} is not one")
        return None

    def _context(self, call_id: str) -> ToolContext:
        return ToolContext(
            root=self.root,
            config=self.config,
            paths=self.paths,
            commands=self.commands,
            overlay=self.overlay,
            approvals=self.approvals,
            sink=self.sink,
            patches=self.patches,
            index=self.index,
            sandbox=self.sandbox,
            session_id=self.session_id,
            call_id=call_id,
            extras={"allowed_files": self.allowed_files, "skills": self.skills},
        )

    def _finish(self, call_id: str, tool: str, outcome: ToolOutcome) -> ToolOutcome:
        if tool.startswith("mcp_") and any(t.name == tool for t in self.mcp_tools):
            said = "ok" if outcome.ok else f"error: {(outcome.error or '')[:200]}"
            self.ui.stream("status", f"MCP tool {tool}: {said}\n", session_id=self.session_id)
        self.sink.emit(
            "ToolResult@v1",
            {"call_id": call_id, "tool": tool, "ok": outcome.ok, "value": redact_obj(outcome.value), "error": outcome.error},
        )
        return outcome


def _parse_arguments(arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the tool arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(value, dict):
        raise ValueError("the tool arguments must be a JSON object")
    return value


def _schema_problem(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """The first few JSON Schema violations of `args`, or None (a broken schema is not the model's fault).

    The schema is a third party's (an MCP server's): its regular expressions (`pattern`,
    `patternProperties`) are not run here — Python's backtracking `re` on `^(a+)+$` held the event
    loop for minutes — and a schema that refers to itself without end is a broken schema. The
    server checks its own patterns."""
    import jsonschema
    from referencing.exceptions import Unresolvable

    try:
        base = jsonschema.validators.validator_for(schema)
        base.check_schema(schema)
        validator_cls = jsonschema.validators.extend(base, {"pattern": _skip, "patternProperties": _skip})
        errors = sorted(validator_cls(schema).iter_errors(args), key=lambda e: list(e.path))[:3]
    except (jsonschema.SchemaError, RecursionError, Unresolvable):  # a remote $ref is never fetched
        return None
    if not errors:
        return None
    return "; ".join(f"{'.'.join(map(str, e.path)) or '(arguments)'}: {e.message[:200]}" for e in errors)


def _skip(*_: Any) -> Any:
    return iter(())


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def tool_input(tool: str, args: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """A tool call's arguments as a hook sees them (`tool_input`): ours, with the keys Claude Code's
    tools use added (`command`, `file_path`), so a script written for Claude Code finds them where
    it looks. Here, not in extensions/hook_runner.py: the hooks run tools/proc.py, so the tools
    importing the hook runner closed a circle."""
    out = dict(args)
    if tool == "bash.run" and "cmd" in args:
        out["command"] = args["cmd"]
    if "path" in args and isinstance(args["path"], str):
        out["file_path"] = str((Path(root) / args["path"]).resolve())
    return out

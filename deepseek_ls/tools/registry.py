"""The tool vocabulary: `Tool` definitions and the `ToolContext` they run in.

Each tool family lives in its own module (`fs`, `search`, `git`, `shell`,
`patch_tools`, `index_tools`) and exposes `TOOLS: list[Tool]`. A tool's
arguments are a pydantic model: its JSON Schema is what the model is offered,
and validation happens before the handler runs. Handlers return plain
JSON-ready data or raise an exception whose message a model can act on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal

from pydantic import BaseModel

from deepseek_ls.config_models import Config
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.approvals import Approvals, Refused, said
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.policy.paths import PathPolicy
from deepseek_ls.sink import EventSink
from deepseek_ls.ui_port import ApprovalRequest

Effect = Literal["read", "write", "exec"]


class ToolDenied(Exception):
    """The person (or the policy) said no."""


@dataclass
class ToolContext:
    root: Path
    config: Config
    paths: PathPolicy
    commands: CommandPolicy
    overlay: DocumentOverlay
    approvals: Approvals
    sink: EventSink
    patches: Any = None  # PatchStore
    index: Any = None  # CodeIndex, when the index is available
    sandbox: Any = None  # policy.sandbox.Sandbox: confines every command a tool starts
    session_id: str | None = None
    call_id: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    async def approve(
        self, request: ApprovalRequest, *, force_explicit: bool = False, changes_files: bool = False, tool: str
    ) -> None:
        """Ask for approval. Records `ToolApproved@v1`. A deny raises `ToolDenied` (the model is told
        and goes on without the call); a cancel or no answer raises `Refused`: the work stops there."""
        request.session_id = request.session_id or self.session_id
        decision, by = await self.approvals.decide(request, force_explicit=force_explicit, changes_files=changes_files)
        self.sink.emit("ToolApproved@v1", {"call_id": self.call_id, "tool": tool, "answer": decision.answer, "by": by})
        if decision.allowed:
            return
        if decision.answer in ("cancel", "timeout"):
            raise Refused(request.kind, decision.answer, f"{tool} ({request.title})", decision.reason)
        if by == "policy":
            raise ToolDenied(f"{tool} was denied: {decision.reason}")
        why = f" ({decision.reason})" if decision.reason else ""
        raise ToolDenied(f"{tool} was {said(decision.answer)} by the person{why}; it is not asked again in this "
                         "step: go on without it")


Handler = Callable[[ToolContext, Any], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    name: str  # dotted, e.g. "fs.read"
    description: str
    args: type[BaseModel] | None  # None: arguments are checked against `json_schema` (MCP tools)
    handler: Handler
    effect: Effect = "read"
    json_schema: dict[str, Any] | None = None

    @property
    def wire_name(self) -> str:
        """OpenAI-compatible function names allow only [a-zA-Z0-9_-]: "fs.read" -> "fs_read"."""
        return self.name.replace(".", "_")

    def schema(self) -> dict[str, Any]:
        if self.json_schema is not None:
            params = dict(self.json_schema)
        else:
            assert self.args is not None
            params = self.args.model_json_schema()
        params.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.wire_name, "description": self.description, "parameters": params},
        }

"""Everything the agent reads from or does to the workspace, each effect recorded.

The planner, executor and verifier never touch files, the index, the patch
store or processes directly: they call a `World`. Every result is recorded in
the session's log (as `ToolResult@v1`, `PatchStaged@v1`, `VerificationRun@v1`
…) so that `replay.ReplayWorld` can serve the same results without re-running
anything. Blocking work runs in a thread: the agent lives on the server's
event loop.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import posixpath
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

from deepseek_ls.config_models import Config
from deepseek_ls.patch import ApplyResult, PatchError, PatchSet, PatchStore
from deepseek_ls.patch.command_changes import watched
from deepseek_ls.patch.overlay import (
    DocumentOverlay,
    read_disk_text,
    withheld_note,
    withheld_reads,
)
from deepseek_ls.policy import PathPolicy, PolicyViolation
from deepseek_ls.policy.approvals import Refused, command_review
from deepseek_ls.policy.command_secrets import guard_command
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.policy.redact import redact_text
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.policy.secret_files import file_is_secret
from deepseek_ls.sink import EventSink
from deepseek_ls.store.ids import new_id
from deepseek_ls.tools import shell
from deepseek_ls.tools.fs import workspace_files
from deepseek_ls.ui_port import ApprovalRequest

log = logging.getLogger("deepseek_ls.agent")

_INDEX_NOT_BUILT = ("(no code index has been built for this workspace yet, so there are no index hits: "
                    "find related code by searching and reading the files)")

# `applier(patches, patch_id, hunk_ids)`: apply a patch staged in `patches` (its pending hunks, all when
# None) the adapter's way.
Applier = Callable[[PatchStore, str, "list[str] | None"], Awaitable[ApplyResult]]


@dataclass
class CommandResult:
    command: str
    exit_code: int | None
    output: str
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class World:
    # What time budgets are measured with (Hetun research's wall time); the agent may give another.
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def __init__(
        self,
        root: Path,
        config: Config,
        *,
        sink: EventSink,
        overlay: DocumentOverlay,
        patches: PatchStore,
        index: Any = None,
        tools: Any = None,
        applier: Applier | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config
        self.sink = sink
        self.overlay = overlay
        self.patches = patches
        self.index = index
        self.tools = tools
        self.paths = PathPolicy(self.root, config.policy.deny_paths)
        self.commands = CommandPolicy(config.policy, self.root)
        self.sandbox = getattr(tools, "sandbox", None) or Sandbox(
            self.root, deny_paths=config.policy.deny_paths, config=config.policy.sandbox
        )
        # How an adapter with buffers applies a patch (the language server: `workspace/applyEdit`
        # against the open buffer, never over unsaved typing). None: `PatchStore.apply` writes the disk.
        self.applier = applier
        if clock is not None:
            self.clock = clock
        self._index_failure_told = False  # the person hears of a broken index once per session

    # -- recording ---------------------------------------------------------------

    def _record(self, tool: str, ok: bool, value: Any = None, error: str | None = None) -> None:
        self.sink.emit("ToolResult@v1", {"call_id": new_id(), "tool": tool, "ok": ok, "value": value, "error": error})

    # -- reads -------------------------------------------------------------------

    async def read_file(self, rel: str) -> str | None:
        """The text the user sees (open buffer, else disk); None when the file does not exist."""
        text, error = await asyncio.to_thread(self._read, rel)
        self._record("agent.read_file", error is None, {"path": rel, "text": text}, error)
        if error is not None:
            raise PolicyViolation(rel, "read_refused", error)
        return text

    def _read(self, rel: str) -> tuple[str | None, str | None]:
        try:
            path = self.paths.resolve(rel)
            clean = self.paths.normalize(rel)
            if self.overlay.get(clean) is None and not path.is_file():
                return None, None
            text = self.overlay.read_text(clean, root=self.root)
            limit = self.config.agent_loop.max_file_bytes
            if len(text.encode("utf-8", "surrogatepass")) > limit:
                return None, f"{rel} is larger than agent_loop.max_file_bytes ({limit})"
            return text, None
        except PolicyViolation as exc:
            return None, str(exc)
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"{rel}: {exc}"

    async def repo_map(self, query: str | None = None) -> str:
        text = await asyncio.to_thread(self._repo_map, query)
        self._record("agent.repo_map", True, {"text": text})
        return text

    def _repo_map(self, query: str | None) -> str:
        budget = self.config.index.repo_map_tokens
        if self.index is not None:
            try:
                return self.index.repo_map(query=query, token_budget=budget)
            except Exception as exc:  # noqa: BLE001 - the plan can still be made without the map
                log.warning("repo map unavailable (%s); using a file listing", exc)
        # No index: the workspace's files (gitignore honoured), cut to the map's budget.
        return "\n".join(workspace_files(self.root))[: budget * 4]

    async def index_hits(self, query: str, top_k: int = 8) -> tuple[str, int]:
        """Index hits for the request as prompt text, and how many top-level areas they span.

        Empty text means the index was searched and found nothing. An index that is not built, or
        that could not be searched, says so in the text (the model must not read "no hits" as "no
        related code"); a failure is also recorded (`ok=False`) and told to the person once."""
        text, count, failure = await asyncio.to_thread(self._index_hits, query, top_k)
        self._record("agent.index_hits", failure is None, {"text": text, "files": count}, failure)
        if failure is not None and not self._index_failure_told:
            self._index_failure_told = True
            ui = getattr(self.tools, "ui", None)
            if ui is not None:
                ui.stream("status", f"Code index could not be searched ({failure}); the agent is working "
                          "without index hits. Rebuild it with `deepseek-ls index build`.\n",
                          session_id=getattr(self.tools, "session_id", None))
        return text, count

    def _index_hits(self, query: str, top_k: int) -> tuple[str, int, str | None]:
        """(prompt text, areas spanned, why the index could not be searched or None)."""
        if self.index is None:
            # The adapters leave the index out when none has been built (or it is turned off).
            return (_INDEX_NOT_BUILT if self.config.index.enabled else ""), 0, None
        try:
            result = self.index.query(query, top_k=top_k)
        except Exception as exc:  # noqa: BLE001 - reported to the model, the session and the person
            from deepseek_ls.index.code_index import (
                IndexUnavailable,  # loaded already: the index raised
            )

            if isinstance(exc, IndexUnavailable) and exc.status.state == "missing":
                return _INDEX_NOT_BUILT, 0, None
            reason = redact_text(" ".join(str(exc).split()) or type(exc).__name__)
            reason = reason if len(reason) <= 200 else reason[:199] + "…"
            log.warning("index query failed: %s", reason)
            return (f"(the code index could not be searched: {reason}. There are no index hits, which does not "
                    "mean there is no related code: find it by searching and reading the files)"), 0, reason
        lines = []
        # An index built before a file became secret (or with another deny-list) must not
        # hand its lines to the model: hits are checked against the policy again.
        hits = [h for h in result.hits if self.paths.is_allowed(h.path) and not file_is_secret(self.root, h.path)]
        # Hit lines come from the disk: none from a file the editor did not let us read (ACP).
        withheld = withheld_reads(self.overlay, [h.path for h in hits])
        hits = [h for h in hits if h.path not in withheld]
        for hit in hits:
            shown = "; ".join(f"{lh.line}: {lh.text.strip()[:100]}" for lh in hit.lines[:3])
            lines.append(f"- {hit.path} {shown}".rstrip())
        if withheld:
            lines.append(f"({withheld_note({p: 1 for p in withheld}, withheld, 'hits')['note']})")
        stale = "" if result.fresh else "(the index is stale; verify by reading the files)\n"
        # Breadth is how many parts of the tree the hits span (top-level directories), not how
        # many hits there are: top_k hits in one package are not a broad change.
        areas = {hit.path.split("/", 1)[0] if "/" in hit.path else "." for hit in hits}
        return stale + "\n".join(lines), len(areas), None

    async def similar_paths(self, rel: str) -> list[str]:
        """Workspace files whose paths look like `rel` (a plan or diff naming a file that does not exist)."""
        found = await asyncio.to_thread(self._similar_paths, rel)
        self._record("agent.similar_paths", True, {"path": rel, "paths": found})
        return found

    def _similar_paths(self, rel: str, limit: int = 3) -> list[str]:
        files = workspace_files(self.root)
        by_name = [f for f in files if posixpath.basename(f) == posixpath.basename(rel)]
        return (by_name + [f for f in difflib.get_close_matches(rel, files, n=limit, cutoff=0.5) if f not in by_name])[:limit]

    async def clock_over(self, started: float, limit_seconds: float) -> bool:
        """Whether `limit_seconds` passed since `started` (read from `self.clock`): recorded, so a replay
        stops a time-budgeted phase (Hetun research) exactly where the live run stopped."""
        over = self.clock() - started > limit_seconds
        self._record("agent.clock", True, {"over": over, "limit_seconds": limit_seconds})
        return over

    async def checkpoint(self, files: list[str], label: str, meta: dict[str, Any]) -> str:
        """Snapshot `files` before a set of writes (a Hetun mission): one undo restores them all. A file
        open in the editor is snapshotted as its buffer shows it (unsaved edits included), not the disk."""
        buffers = await asyncio.to_thread(self._buffers, files)
        checkpoint_id = await asyncio.to_thread(self.patches.checkpoints.create, files, label=label, meta=meta,
                                                texts=buffers)
        self._record("agent.checkpoint", True, {"checkpoint_id": checkpoint_id, "files": files,
                                                "buffers": sorted(buffers)})
        return checkpoint_id

    def _buffers(self, files: list[str]) -> dict[str, str]:
        """The open buffers' texts of `files` (from a worker thread: an ACP client is asked for them)."""
        return {rel: doc[0] for rel in files if (doc := self.overlay.get(rel)) is not None}

    # -- tools (the ToolHost records its own calls) --------------------------------

    async def prepare_tools(self) -> None:
        """Start the MCP servers if there are any (first time) and add their tools to the offer."""
        if self.tools is not None:
            await self.tools.load_mcp_tools()

    def mcp_action_schemas(self) -> list[dict[str, Any]]:
        """MCP tools that act (not annotated read-only): offered to the executor, each call approved."""
        if self.tools is None or self.tools.read_only:
            return []
        return [t.schema() for t in self.tools.mcp_tools if t.effect != "read"]

    def tool_schemas(self, read_only: bool) -> list[dict[str, Any]]:
        if self.tools is None:
            return []
        return self.tools.schemas(read_only=read_only)

    def allow_files(self, files: list[str]) -> None:
        """Scope of `patch.stage` through the tool host: the current step's declared files."""
        if self.tools is not None:
            self.tools.allowed_files = list(files)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.tools is None:
            return {"ok": False, "value": None, "error": f"tool {name!r} is not available"}
        outcome = await self.tools.call(name, arguments)
        return {"ok": outcome.ok, "value": outcome.value, "error": outcome.error}

    # -- patches -------------------------------------------------------------------

    async def stage(self, diff: str, *, session_id: str, allowed_files: list[str]) -> PatchSet:
        blocked = await self._edit_hook("PreToolUse", "patch.stage", {"diff": diff}, _diff_files(diff))
        if blocked is not None:  # a failed edit the executor tells the model about, recorded as one
            self._record("patch.stage", False, {"problems": [blocked], "missing_paths": [], "failed_hunks": []},
                         blocked)
            raise PatchError(blocked)
        try:
            ps = await asyncio.to_thread(
                self.patches.stage, diff, session_id=session_id, allowed_files=allowed_files
            )
        except PatchError as exc:
            self._record("patch.stage", False, {"problems": exc.problems, "missing_paths": exc.missing_paths,
                                          "failed_hunks": [list(f) for f in exc.failed_hunks]}, str(exc))
            raise
        self._record("patch.stage", True, {"patch_id": ps.patch_id})
        return ps

    async def apply(self, patch_id: str, hunk_ids: list[str] | None = None) -> ApplyResult:
        """Apply approved hunks: through the adapter's `applier` when it has one (an editor), else on disk."""
        if self.applier is not None:
            result = await self.applier(self.patches, patch_id, hunk_ids)
        else:
            result = await asyncio.to_thread(self.patches.apply, patch_id, hunk_ids)
        self._record("patch.apply", result.ok, result.model_dump(mode="json"), None if result.ok else result.message)
        if result.ok:  # a formatter after every edit: the files are written now
            await self._edit_hook("PostToolUse", "patch.apply", {"patch_id": patch_id},
                                  [f.file for f in result.files if f.ok], response=result.model_dump(mode="json"))
        return result

    async def _edit_hook(self, event: str, tool: str, args: dict[str, Any], files: list[str],
                         response: Any = None) -> str | None:
        """Run `event`'s hooks for an edit the executor makes (not a tool call of the model's);
        returns why a PreToolUse hook blocked it, or None. What a PostToolUse hook says is shown."""
        hooks = getattr(self.tools, "hooks", None)
        if hooks is None or not hooks.any(event, tool):
            return None
        data: dict[str, Any] = {"tool_input": {**args, "files": files,
                                               "file_path": str(self.root / files[0]) if files else ""}}
        if response is not None:
            data["tool_response"] = response
        result = await hooks.fire(event, data, emit=self.sink.emit, session_id=getattr(self.tools, "session_id", None),
                                  tool=tool)
        if event == "PreToolUse" and (result.blocked or result.stop):
            return f"blocked by a hook, not staged: {result.reason or result.stop}"
        return None

    async def unsaved(self, files: list[str]) -> list[str]:
        """Of `files`, those whose open buffer differs from the disk. Only an adapter that applies into
        buffers (`applier`) leaves such files behind; verification, which runs on the disk, waits for
        them to be saved. Recorded (when asked), so a replay pauses where the live run paused."""
        if self.applier is None:
            return []
        waiting = await asyncio.to_thread(self._unsaved, files)
        self._record("agent.unsaved", True, {"files": files, "unsaved": waiting})
        return waiting

    def _unsaved(self, files: list[str]) -> list[str]:
        out = []
        for rel in files:
            doc = self.overlay.get(rel)
            if doc is None:
                continue
            try:
                on_disk = read_disk_text(self.root / rel)
            except (OSError, UnicodeDecodeError):
                on_disk = None
            if on_disk != doc[0]:
                out.append(rel)
        return out

    async def reject(self, patch_id: str, hunk_ids: list[str] | None = None, reason: str = "") -> None:
        await asyncio.to_thread(self.patches.reject, patch_id, hunk_ids, reason)

    def patch(self, patch_id: str) -> PatchSet:
        return self.patches.get(patch_id)

    # -- commands ------------------------------------------------------------------

    async def run_command(self, command: str, timeout: float) -> CommandResult:
        """Run a verification command: policy-checked, no shell, inside the OS sandbox, scrubbed
        environment, bounded. A plan-authored command runs unprompted only in a safe shape with a
        working sandbox; otherwise it needs an explicit approval (`PolicyViolation` when the policy
        refuses it, `Refused` when the person does not approve it). Raises `ProgramNotRun` when its
        program cannot run here (missing, not executable, hidden by the sandbox). A custom command's
        allowed-tools that leave out `Bash` (or allow only some commands) refuse it first."""
        limited = self.tools.limit_refusal("bash.run", command) if self.tools is not None else None
        if limited is not None:
            raise PolicyViolation(command, "custom_command_tools", limited)
        checked = self.commands.inspect(command)
        argv = guard_command(checked.argv, cwd=self.root, paths=self.paths)  # secret paths in arguments
        reasons = command_review(checked, await self.sandbox.astatus())
        if reasons or checked.writes:  # a command that rewrites files is asked for as an edit would be
            await self._approve_command(command, reasons, checked.writes, timeout)
        # A program that could not run raises `ProgramNotRun`: no exit status of the code's.
        # What it changes is kept as a checkpoint: a rewind takes it out like an apply.
        result = await watched(self.patches, command, getattr(self.sink, "session_id", None), self.sink,
                               lambda: shell.run_command(
                                   argv, cwd=self.root, timeout=timeout,
                                   max_output_bytes=self.config.policy.max_output_bytes, sandbox=self.sandbox,
                               ))
        output = result.stdout + result.stderr
        if result.timed_out:
            output += f"\n[timed out after {timeout:.0f} s]"
        elif result.killed_by:
            output += f"\n[killed by {result.killed_by}]"
        return CommandResult(command, result.exit_code, output, round(result.duration_ms, 1))

    async def _approve_command(self, command: str, reasons: list[str], writes: tuple[str, ...], timeout: float) -> None:
        approvals = getattr(self.tools, "approvals", None)
        if approvals is None:
            raise PolicyViolation(command, "needs_approval", "it needs an approval and nobody can give one here: "
                                  + "; ".join([*reasons, *writes]))
        detail = f"verification command from the plan (timeout {timeout:g}s)"
        if writes:
            detail += "; it changes your files without a patch to review:" + "".join(f"\n- {w}" for w in writes)
        if reasons:
            detail += "; needs explicit approval:" + "".join(f"\n- {r}" for r in reasons)
        request = ApprovalRequest(
            request_id=new_id(),
            kind="bash.run",
            title=f"Verify: {command}",
            detail=detail,
            command=command,
            session_id=getattr(self.tools, "session_id", None),
        )
        decision, by = await approvals.decide(request, force_explicit=bool(reasons), changes_files=bool(writes))
        if decision.allowed:
            return
        if by == "policy":
            raise PolicyViolation(command, "not_approved", decision.reason or "the verification command was not approved")
        raise Refused("bash.run", decision.answer, command, decision.reason)  # type: ignore[arg-type]


def _diff_files(diff: str) -> list[str]:
    """The files a unified diff writes (its `+++ b/...` lines; a deletion's `--- a/...`)."""
    import re

    out: list[str] = []
    for old, new in re.findall(r"^--- (?:a/)?(\S+).*\n\+\+\+ (?:b/)?(\S+)", diff, re.M):
        name = old if new == "/dev/null" else new
        if name not in out:
            out.append(name)
    return out

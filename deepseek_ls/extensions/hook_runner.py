"""Running lifecycle hooks: in the OS sandbox, bounded, redacted, every run recorded.

`Hooks.fire(event, ...)` runs the hooks configured for an event (`hooks.py` reads them), one after
the other in configuration order, each as `/bin/sh -c COMMAND` with Claude Code's JSON on stdin,
inside the sandbox the agent's commands run in (the workspace writable, the home empty but for the
person's hooks folder (`hooks/` beside the user config) shown read-only, no network), within its timeout and output cap. What a
hook printed is redacted before it is recorded, shown or given to the model. Every run is a
`HookRan@v1` event with its verdict; a hook that failed, timed out or could not start is said on the
status channel (never silently skipped). A replay never calls this: the outcomes hooks had are in
the recorded tool results and requests.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepseek_ls.config_layers import user_config_path
from deepseek_ls.extensions.hooks import CLAUDE_NAME, HookSet, HookSpec, HookVerdict, interpret, load_hooks, shipped
from deepseek_ls.policy.env import scrubbed_env
from deepseek_ls.policy.redact import redact_text
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import proc

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], Any]
Say = Callable[[str, str | None], None]  # (text, session_id): the status channel
_told: set[str] = set()  # untrusted workspaces already told about, per process


class PromptBlocked(Exception):
    """A UserPromptSubmit hook blocked the person's request (or a hook asked to stop): nothing was
    sent to the model. `user_message` is what the person is told."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.user_message = message


@dataclass
class HookResult:
    """What the hooks of one event decided together: the first block wins; contexts add up."""

    blocked: bool = False
    reason: str = ""
    context: list[str] = field(default_factory=list)
    stop: str | None = None
    decision: str | None = None  # the strongest PreToolUse permission decision seen (never widens the policy)

    @property
    def context_text(self) -> str:
        return "\n\n".join(c for c in self.context if c.strip())


class Hooks:
    """The hooks of one workspace, for one agent. `config`: the `[hooks]` section."""

    def __init__(self, root: Path, config: Any, *, policy: Any = None, trusted: bool | None = None,
                 env: Mapping[str, str] | None = None, say: Say | None = None) -> None:
        from deepseek_ls.extensions.places import is_trusted

        self.root = Path(root).resolve()
        self.config = config
        self.env = env
        self.trusted = is_trusted(self.root, env) if trusted is None else trusted
        self.set: HookSet = load_hooks(self.root, trusted=self.trusted, env=env) if config.enabled else HookSet()
        self.say = say or (lambda text, sid: None)
        self._policy = policy
        self._sandbox: Sandbox | None = None
        self.notices = list(self.set.problems)
        if not self.trusted and config.enabled:
            where = shipped(self.root)
            key = str(self.root)
            if where and key not in _told:
                _told.add(key)
                self.notices.append(f"this workspace ships hooks ({', '.join(where)}); none runs until you trust it "
                                    "(`deepseek-ls trust`, or 'DeepSeek: Trust Workspace' / :DeepSeekTrust in the editor)")

    def any(self, event: str, tool: str | None = None) -> bool:
        return bool(self.set.for_event(event, tool))

    def take_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    async def fire(self, event: str, data: dict[str, Any], *, emit: Emit, session_id: str | None,
                   tool: str | None = None) -> HookResult:
        """Run `event`'s hooks (those matching `tool` for tool events) with `data` added to the common
        input; record each run through `emit`; say each failure. Never raises for a hook's own failure."""
        result = HookResult()
        specs = self.set.for_event(event, tool)
        for notice in self.take_notices():
            self.say(notice, session_id)
        if not specs:
            return result
        payload = {"session_id": session_id or "", "transcript_path": "", "cwd": str(self.root),
                   "hook_event_name": event, "permission_mode": "default", **data}
        if tool is not None:
            payload["tool_name"] = CLAUDE_NAME.get(tool, tool)
            payload["deepseek_tool"] = tool
        for spec in specs:
            verdict, run = await self._run(spec, payload)
            emit("HookRan@v1", {**run, "event": event, "tool": tool, "outcome": verdict.outcome,
                                "decision": verdict.decision, "reason": verdict.reason, "context": verdict.context,
                                "stop": verdict.stop})
            label = f"{event} hook `{_short(spec.command)}` ({spec.source})"
            if verdict.outcome in ("error", "timeout", "not_run"):
                self.say(f"{label} {verdict.reason}; carrying on without it", session_id)
            if verdict.message:
                self.say(f"{label}: {verdict.message}", session_id)
            if verdict.context:
                result.context.append(verdict.context)
            if verdict.decision in ("allow", "ask") and result.decision != "ask":
                result.decision = verdict.decision
            if verdict.stop and result.stop is None:
                result.stop = verdict.stop
            if verdict.blocks and not result.blocked:
                result.blocked, result.reason = True, f"{verdict.reason} (a {event} hook: {spec.source})"
                result.decision = verdict.decision
                break  # the first block decides; later hooks are not asked
        return result

    async def _run(self, spec: HookSpec, payload: dict[str, Any]) -> tuple[HookVerdict, dict[str, Any]]:
        timeout = spec.timeout or float(self.config.timeout_seconds)
        record: dict[str, Any] = {"command": redact_text(spec.command), "source": spec.source, "scope": spec.scope,
                                  "matcher": spec.matcher, "exit_code": None, "timed_out": False}
        env = scrubbed_env()
        env.update({"CLAUDE_PROJECT_DIR": str(self.root), "DEEPSEEK_PROJECT_DIR": str(self.root)})
        argv = ["/bin/sh", "-c", spec.command]
        sandbox = self._sandbox_for()
        sandboxed, rewrap = False, None
        started = time.perf_counter()
        try:
            if sandbox is not None:
                status = await sandbox.astatus()
                if not status.available:
                    return HookVerdict("not_run", reason=f"was not run: hooks run only in the OS sandbox, and "
                                       f"{status.describe()}"), record
                env["TMPDIR"] = "/tmp"
                rewrap = functools.partial(sandbox.wrap, argv, cwd=self.root, exec_path=env.get("PATH"))
                argv, sandboxed = rewrap(), True
            out = await proc.run_bounded(argv, cwd=self.root, env=env, timeout=timeout,
                                         max_output_bytes=int(self.config.max_output_bytes), sandboxed=sandboxed,
                                         stdin=json.dumps(payload, ensure_ascii=False).encode(), rewrap=rewrap)
        except (OSError, RuntimeError) as exc:  # ProgramNotRun is a RuntimeError
            return HookVerdict("not_run", reason=f"could not start: {exc}"), record
        record["duration_ms"] = round((time.perf_counter() - started) * 1000)
        stdout = redact_text(out.stdout.decode("utf-8", "replace"))
        stderr = redact_text(out.stderr.decode("utf-8", "replace"))
        record.update(exit_code=out.exit_code, timed_out=out.timed_out, stdout=stdout[-2000:], stderr=stderr[-2000:],
                      truncated=bool(out.stdout_omitted or out.stderr_omitted))
        if out.timed_out:
            return HookVerdict("timeout", reason=f"did not finish within {timeout:g} s and was stopped"), record
        return interpret(spec.event, out.exit_code, stdout, stderr), record

    def _sandbox_for(self) -> Sandbox | None:
        """The sandbox hooks run in (None: the person turned the sandbox off, so hooks run as the
        commands they approve do). The person's hooks directory is shown read-only inside it."""
        if self._sandbox is not None:
            return self._sandbox
        policy = self._policy
        if policy is None:
            from deepseek_ls.config_models import PolicyConfig

            policy = PolicyConfig()
        if policy.sandbox.mode == "off":
            return None
        # Only the scripts' folder, never the config directory itself (trust decisions, keys).
        scripts = user_config_path(self.env).parent / "hooks"
        shown = [str(scripts)] if scripts.is_dir() else []
        config = policy.sandbox.model_copy(update={"readable_paths": [*policy.sandbox.readable_paths, *shown]})
        self._sandbox = Sandbox(self.root, deny_paths=policy.deny_paths, config=config)
        return self._sandbox


def _short(command: str) -> str:
    text = redact_text(" ".join(command.split()))
    return text if len(text) <= 60 else text[:57] + "..."


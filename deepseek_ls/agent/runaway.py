"""The runaway guard: a model that repeats itself pauses the session (docs/agent.md, "Runaway guard").

Three streaks are watched, each folded from the session's own events so a
session restored in a new process, or replayed, counts exactly as it did live:

* the same tool call (name + canonical JSON arguments; the same set of calls when an
  answer makes several) in consecutive answers (`TurnAdded@v1`); an answer without
  tool calls, or with other calls, ends it;
* the same failing edit: the same executor answer failing to stage or apply with
  the same error (`FailureClassified@v1` PatchMismatch); an applied patch ends it;
* the same verification failure: the same command failing with the same output
  fingerprint (`VerificationRun@v1`); that command passing, or failing otherwise, ends it.

When a streak reaches `agent_loop.runaway_repeats` the runtime records
`RunawayDetected@v1` (which resets every streak: a resumed session starts
counting again) and raises `RunawayPaused`, which pauses the session with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

# Ids that differ between two tries of the same edit: uuids and patch ids (`<ms hex>-<6 hex>`).
_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{9,}-[0-9a-f]{6}\b")


class RunawayPaused(Exception):
    """The model repeated the same thing `runaway_repeats` times in a row: the session pauses."""

    exit_code = 1

    @property
    def user_message(self) -> str:
        return str(self)


@dataclass
class Streak:
    """How many times in a row the same `key` was seen; `what` says it to a person."""

    key: str | None = None
    count: int = 0
    what: str = ""

    def see(self, key: str, what: str) -> None:
        if key == self.key:
            self.count += 1
        else:
            self.key, self.count = key, 1
        self.what = what

    def end(self) -> None:
        self.key, self.count, self.what = None, 0, ""


@dataclass
class RunawayWatch:
    """The three streaks of one session, folded from its events."""

    tool: Streak = field(default_factory=Streak)
    edit: Streak = field(default_factory=Streak)
    verify: Streak = field(default_factory=Streak)
    last_edit_answer: str = ""  # digest of the executor's last answer: the edit a PatchMismatch is about

    def fold(self, kind: str, p: Mapping[str, Any]) -> None:
        if kind == "TurnAdded@v1" and p.get("role") == "assistant":
            self._answer(p)
        elif kind == "FailureClassified@v1" and p.get("failure_class") == "PatchMismatch":
            detail = str(p.get("detail") or "")
            # A re-staged patch has a fresh id: the same failure is the same text without ids.
            self.edit.see(f"{self.last_edit_answer}\n{_IDS.sub('<id>', detail)}", f"the same edit failed ({detail[:160]})")
        elif kind == "PatchApplied@v1":
            self.edit.end()
        elif kind == "VerificationRun@v1" and p.get("exit_code") is not None:
            command = str(p.get("command") or "")
            if p.get("ok"):
                if self.verify.key is not None and self.verify.key.startswith(command + "\n"):
                    self.verify.end()
            else:
                self.verify.see(f"{command}\n{p.get('fingerprint') or _digest(str(p.get('output') or ''))}",
                                f"verification `{command}` failed the same way")
        elif kind == "RunawayDetected@v1":
            self.reset()

    def _answer(self, p: Mapping[str, Any]) -> None:
        calls = p.get("tool_calls") or []
        if p.get("agent_role") == "executor":
            self.last_edit_answer = _digest(json.dumps([p.get("content") or "", calls], sort_keys=True, default=str))
        if not calls:
            self.tool.end()
            return
        # One answer is one step of the streak: a batch of calls in one answer is not a loop.
        said = sorted({f"{(c.get('function') or {}).get('name') or ''} "
                       f"{_canonical((c.get('function') or {}).get('arguments'))}" for c in calls})
        self.tool.see("\n".join(said), "the tool call " + "; ".join(s[:160] for s in said[:3])
                      + (f" (and {len(said) - 3} more)" if len(said) > 3 else ""))

    def tripped(self, limit: int) -> tuple[str, Streak] | None:
        """The first streak that reached `limit`, with its name (tool_call, failing_edit, verification_failure)."""
        for name, streak in (("tool_call", self.tool), ("failing_edit", self.edit), ("verification_failure", self.verify)):
            if streak.count >= limit:
                return name, streak
        return None

    def reset(self) -> None:
        self.tool.end()
        self.edit.end()
        self.verify.end()


def reason(streak: Streak, limit: int) -> str:
    """What the person reads: what repeated, how often, and what to do."""
    return (f"paused: {streak.what} {streak.count} times in a row (agent_loop.runaway_repeats = {limit}); "
            "the model is repeating itself: revise the plan or give it a hint, then resume")


def _canonical(arguments: Any) -> str:
    """Tool arguments as canonical JSON (key order and spacing do not make a call different)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            return arguments
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]

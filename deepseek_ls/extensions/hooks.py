"""Lifecycle hooks: where they are configured, which ones match, and what an answer means.

Hooks are written as Claude Code writes them (`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write",
"hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}`) and read from, in order:
the person's `hooks.json` beside the user config, the workspace's `.deepseek/hooks.json`, and
Claude Code's `.claude/settings.json` / `.claude/settings.local.json` (their `hooks` section, as
it is). A workspace's hooks are commands its author wrote, so they are read only when the
workspace is trusted (`shipped` names them for the notice otherwise).

A hook answers as in Claude Code: exit 0 (its stdout is context for UserPromptSubmit and
SessionStart), exit 2 (blocks; stderr is the reason given to the model), any other exit (a
non-blocking error, shown to the person), or JSON on stdout (`continue`, `stopReason`,
`decision`/`reason`, `hookSpecificOutput.permissionDecision` / `additionalContext`,
`suppressOutput`, `systemMessage`). `interpret` turns one run into a `HookVerdict`.
This is a service module: it runs nothing (`hook_runner.py` does) and imports no agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepseek_ls.config_layers import user_config_path

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop", "Notification")
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
# Workspace files that may hold hooks (trusted workspaces only), in the order they run.
WORKSPACE_FILES = (".deepseek/hooks.json", ".claude/settings.json", ".claude/settings.local.json")
USER_FILE = "hooks.json"  # beside the user config: ~/.config/deepseek-ls/hooks.json
MAX_FILE_BYTES = 256 * 1024
MAX_HOOK_SECONDS = 600.0

# Our tool -> the name Claude Code gives the same tool (what a matcher and `tool_name` see).
# Documented in docs/hooks.md; the reverse of extensions/tool_names.CLAUDE_TOOLS.
CLAUDE_NAME = {
    "fs.read": "Read",
    "fs.list": "Glob",
    "fs.search_rg": "Grep",
    "index.query": "Grep",
    "patch.stage": "Edit",
    "patch.apply": "Edit",
    "bash.run": "Bash",
    "skill.load": "Skill",
}
# Names a matcher may also use for the same tool (Claude Code has several edit tools).
CLAUDE_ALIASES = {
    "fs.list": ("Glob", "LS"),
    "patch.stage": ("Edit", "MultiEdit", "Write"),
    "patch.apply": ("Edit", "MultiEdit", "Write"),
}


@dataclass(frozen=True)
class HookSpec:
    """One configured hook command."""

    event: str
    command: str
    matcher: str = ""  # tool events: a tool name or a regular expression; "" or "*": every tool
    timeout: float | None = None  # seconds (None: hooks.timeout_seconds)
    source: str = ""  # where it was configured: ".claude/settings.json", "~/.config/deepseek-ls/hooks.json"
    scope: str = "user"  # "user" or "workspace"

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "command": self.command, "matcher": self.matcher, "source": self.source}


@dataclass
class HookSet:
    hooks: list[HookSpec] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files or entries left out, and why

    def for_event(self, event: str, tool: str | None = None) -> list[HookSpec]:
        return [h for h in self.hooks if h.event == event and (tool is None or matches(h.matcher, tool))]


def tool_names(ours: str) -> tuple[str, ...]:
    """Every name a matcher may give our tool `ours`: Claude Code's, then ours (`fs.read`, `fs_read`)."""
    theirs = CLAUDE_ALIASES.get(ours) or ((CLAUDE_NAME[ours],) if ours in CLAUDE_NAME else ())
    return (*theirs, ours, ours.replace(".", "_"))


def matches(matcher: str, tool: str) -> bool:
    """Claude Code's rule: empty or `*` matches every tool; otherwise the matcher is a name or a
    regular expression (`Edit|Write`, `mcp__.*`) that must match a whole name of the tool."""
    matcher = (matcher or "").strip()
    if matcher in ("", "*"):
        return True
    names = tool_names(tool)
    try:
        pattern = re.compile(matcher)
    except re.error:
        return matcher in names
    return any(pattern.fullmatch(name) for name in names)


def shipped(root: Path) -> list[str]:
    """The workspace files that configure hooks (what an untrusted workspace's notice names)."""
    out = []
    for rel in WORKSPACE_FILES:
        try:
            data = _read_json(Path(root) / rel, Path(root))
        except ValueError:
            out.append(rel)  # unreadable, but it is there: still named
            continue
        if isinstance(data, dict) and _hooks_section(data):
            out.append(rel)
    return out


def load_hooks(root: Path, *, trusted: bool, env: Mapping[str, str] | None = None) -> HookSet:
    """The person's hooks, then (trusted workspaces only) the workspace's, in `WORKSPACE_FILES` order."""
    found = HookSet()
    user_file = user_config_path(env).parent / USER_FILE
    sources: list[tuple[Path, str, str, Path | None]] = [(user_file, _home_label(user_file), "user", None)]
    if trusted:
        sources += [(Path(root) / rel, rel, "workspace", Path(root)) for rel in WORKSPACE_FILES]
    for path, label, scope, inside in sources:
        try:
            data = _read_json(path, inside)
        except ValueError as exc:
            found.problems.append(f"{label}: {exc}; its hooks are not used")
            continue
        if data is None:
            continue
        section = _hooks_section(data) if isinstance(data, dict) else None
        if section is None:
            if label.endswith("hooks.json"):
                found.problems.append(f"{label}: no \"hooks\" object; nothing to run")
            continue
        _add(found, section, label, scope)
    return found


def _hooks_section(data: dict[str, Any]) -> dict[str, Any] | None:
    section = data.get("hooks")
    if isinstance(section, dict):
        return section
    # `.deepseek/hooks.json` may also be the events object itself.
    return data if any(k in EVENTS for k in data) else None


def _add(found: HookSet, section: dict[str, Any], label: str, scope: str) -> None:
    for event, groups in section.items():
        if event not in EVENTS:
            found.problems.append(f"{label}: {event!r} is not an event deepseek-ls has ({', '.join(EVENTS)}); left out")
            continue
        if not isinstance(groups, list):
            found.problems.append(f"{label}: hooks.{event} is not a list; left out")
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                found.problems.append(f"{label}: an entry of hooks.{event} has no \"hooks\" list; left out")
                continue
            matcher = str(group.get("matcher") or "")
            for hook in group["hooks"]:
                if not isinstance(hook, dict) or hook.get("type", "command") != "command" \
                        or not isinstance(hook.get("command"), str) or not hook["command"].strip():
                    kind = hook.get("type") if isinstance(hook, dict) else type(hook).__name__
                    found.problems.append(f"{label}: a {event} hook of type {kind!r} is not run (only \"command\" "
                                          "hooks with a command are)")
                    continue
                timeout = hook.get("timeout")
                seconds = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
                found.hooks.append(HookSpec(event, hook["command"], matcher,
                                            min(seconds, MAX_HOOK_SECONDS) if seconds else None, label, scope))


def _read_json(path: Path, inside: Path | None) -> Any:
    """The JSON in `path`; None when there is no such file. ValueError says what is wrong."""
    if not path.is_file():
        return None
    if inside is not None and not path.resolve().is_relative_to(Path(inside).resolve()):
        raise ValueError("it leaves the workspace through a symlink")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"it is larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"it could not be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"it is not valid JSON (line {exc.lineno}: {exc.msg})") from None


def _home_label(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)


# -- what a hook answered -------------------------------------------------------------------------


@dataclass
class HookVerdict:
    """What one run of a hook means. `outcome`: "ok", "block", "error" (ran and failed: exit other
    than 0/2, or output that is not what it should be), "timeout", "not_run" (could not start)."""

    outcome: str
    decision: str | None = None  # "allow" / "deny" / "ask" (PreToolUse), "block"
    reason: str = ""  # why it blocked (given to the model) or what went wrong (shown to the person)
    context: str = ""  # text added to the model's context
    stop: str | None = None  # `continue: false`: the work stops, with this reason
    message: str = ""  # `systemMessage`: shown to the person

    @property
    def blocks(self) -> bool:
        return self.outcome == "block"


def interpret(event: str, exit_code: int | None, stdout: str, stderr: str) -> HookVerdict:
    """Claude Code's reading of a hook's exit code and output (stdout, stderr already redacted)."""
    if exit_code == 2:
        return HookVerdict("block", "block", stderr.strip() or f"a {event} hook exited 2 without saying why")
    if exit_code != 0:
        return HookVerdict("error", reason=f"exited {exit_code}: {(stderr.strip() or stdout.strip())[:500]}")
    text = stdout.strip()
    data = _json_object(text)
    if data is None:  # plain text: context where Claude Code treats it as such
        return HookVerdict("ok", context=text if event in ("UserPromptSubmit", "SessionStart") else "")
    specific = data.get("hookSpecificOutput") if isinstance(data.get("hookSpecificOutput"), dict) else {}
    verdict = HookVerdict("ok", message=str(data.get("systemMessage") or ""),
                          context=str(specific.get("additionalContext") or ""))
    if data.get("continue") is False:
        verdict.stop = str(data.get("stopReason") or f"a {event} hook asked to stop")
    decision = specific.get("permissionDecision") or data.get("decision")
    reason = str(specific.get("permissionDecisionReason") or data.get("reason") or "")
    decision = {"approve": "allow", "block": "deny" if event == "PreToolUse" else "block"}.get(decision, decision)
    if decision in ("deny", "block"):
        verdict.outcome, verdict.decision = "block", decision
        verdict.reason = reason or f"a {event} hook decided {decision!r} without a reason"
    elif decision in ("allow", "ask"):
        verdict.decision, verdict.reason = decision, reason
    elif decision is not None:
        verdict.outcome, verdict.reason = "error", f"answered an unknown decision {decision!r}"
    return verdict


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None

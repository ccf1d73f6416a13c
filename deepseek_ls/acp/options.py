"""An ACP session's configuration options (`configOptions`, `session/set_config_option`): its mode,
its model profile and its approval mode, each a `select`.

- `mode`: `ask`, `plan`, `agent`, `yolo`, `hetun` (also `session/set_mode`; yolo only in a workspace
  the person trusted, as everywhere);
- `model`: `auto` (the router picks fast or max-think per call), `fast` or `max_think` forced for
  every call of the session's prompts, as the CLI's `--fast` / `--think` (`--profile NAME` given to
  `deepseek-ls acp` chooses what `fast` is);
- `approval`: `suggest` (ask), `never` (changes stay staged, commands are refused), `auto` (apply
  and run allowlisted commands without asking: like yolo, only in a trusted workspace).

The choices are kept in the session's record, so `session/load` restores them; an `auto` approval
kept from a workspace no longer trusted falls back to the configured mode.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import RequestError
from acp.schema import (
    CurrentModeUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from deepseek_ls.trust import workspace_trust, yolo_refusal

MODES = {
    "ask": "Ask: answer a question about the code, no changes",
    "plan": "Plan: read-only, produce a plan",
    "agent": "Agent: plan, then edit with your permission, then verify",
    "yolo": "YOLO: plan, edit and verify without asking (trusted repositories only)",
    "hetun": "Hetun: research with many fast sub-agents, one mission to approve, then straight through",
}
APPROVALS = {
    "suggest": "Ask before each change and command",
    "never": "Never apply or run: changes stay staged (deepseek-ls apply), commands are refused",
    "auto": "Apply changes and run allowlisted commands without asking (trusted workspaces only)",
}
AUTO_PROFILE = "auto"
PROFILES = ("fast", "max_think")  # the router's two; a forced one skips its choice and its escalation


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current,
                            available_modes=[SessionMode(id=m, name=m, description=d) for m, d in MODES.items()])


def config_options(record: Any, config: Any) -> list[SessionConfigOptionSelect]:
    """The session's options with their current values (`record`: its `AcpSessionRecord`)."""
    profiles = {AUTO_PROFILE: "the router picks fast or max-think for each call"}
    profiles.update({name: f"always {config.llm.profiles[name].model}" for name in PROFILES})
    return [
        _select("mode", "Mode", "mode", "What a prompt does", record.mode, MODES),
        _select("model", "Model profile", "model", "Which model profile answers", record.profile or AUTO_PROFILE,
                profiles),
        _select("approval", "Approval", None, "Who says yes to changes and commands",
                record.approval or config.policy.approval_mode, APPROVALS),
    ]


def _select(option_id: str, name: str, category: str | None, description: str, current: str,
            values: dict[str, str]) -> SessionConfigOptionSelect:
    return SessionConfigOptionSelect(
        type="select", id=option_id, name=name, category=category, description=description, current_value=current,
        options=[SessionConfigSelectOption(value=v, name=v, description=d) for v, d in values.items()])


def choose(record: Any, config: Any, root: Path, option_id: str, value: Any) -> None:
    """Set one option on the record and the session's config, or refuse (`-32602`, nothing changed)."""
    if option_id == "mode":
        check_mode(root, value)
        record.mode = value
    elif option_id == "model":
        if value != AUTO_PROFILE and value not in PROFILES:
            raise _bad(option_id, value, [AUTO_PROFILE, *PROFILES])
        record.profile = None if value == AUTO_PROFILE else value
    elif option_id == "approval":
        if value not in APPROVALS:
            raise _bad(option_id, value, list(APPROVALS))
        if value == "auto" and not workspace_trust(root).trusted:
            raise RequestError.invalid_params({"configId": option_id, "value": value, "reason": (
                f"approval 'auto' applies changes and runs commands without asking, so it is only for a workspace "
                f"you trust; {root} is not trusted (run `deepseek-ls trust` in it if you trust this repository)")})
        record.approval = value
        config.policy.approval_mode = value
    else:
        raise RequestError.invalid_params({"configId": str(option_id)[:100],
                                           "reason": "options: mode, model, approval"})


def restore(record: Any, config: Any, root: Path) -> None:
    """Apply a loaded session's kept approval to its config (an `auto` only while still trusted)."""
    if record.approval == "auto" and not workspace_trust(root).trusted:
        record.approval = None
    if record.approval:
        config.policy.approval_mode = record.approval


def check_mode(root: Path, mode: Any) -> None:
    if mode not in MODES:
        raise _bad("mode", mode, list(MODES))
    refusal = yolo_refusal(root) if mode == "yolo" else None
    if refusal:
        raise RequestError.invalid_params({"modeId": mode, "reason": refusal})


def mode_update(mode: str) -> CurrentModeUpdate:
    return CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode)


def _bad(option_id: str, value: Any, allowed: list[str]) -> RequestError:
    return RequestError.invalid_params({"configId": option_id, "value": str(value)[:100],
                                        "reason": f"{option_id}: {', '.join(allowed)}"})

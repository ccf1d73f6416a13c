"""The chat's modes and model profiles: what Tab cycles through, and what `/mode` and `/model` accept.

Modes cycle as DeepSeek-TUI's do: Plan → Agent → YOLO → Hetun → Plan. YOLO
approves edits and commands without asking, so it is offered only in a workspace
the person trusted (`trust.yolo_refusal`, the check `run --mode yolo` and the
agent make); elsewhere Tab skips it and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.trust import yolo_refusal

CYCLE = ("plan", "agent", "yolo", "hetun")
MODE_HELP = {
    "plan": "read-only: a change request gets a plan, nothing is applied",
    "agent": "plan, then edit with your approval, then verify",
    "yolo": "plan, edit and verify without asking (trusted workspaces only)",
    "hetun": "research fan-out, one mission to approve, then straight through",
}
PROFILES = ("auto", "fast", "max_think")  # auto: the router picks fast or max-think per call


@dataclass
class ModeChange:
    """The outcome of a mode change: the mode now, and why one was skipped or refused (or None)."""

    mode: str
    note: str | None = None


def next_mode(current: str, root: Path, *, backwards: bool = False) -> ModeChange:
    """The mode after `current` in the cycle; YOLO is skipped, with the reason, when `root` is untrusted."""
    step = -1 if backwards else 1
    index = CYCLE.index(current) if current in CYCLE else 0
    candidate = CYCLE[(index + step) % len(CYCLE)]
    if candidate == "yolo" and (refusal := yolo_refusal(root)):
        after = CYCLE[(index + 2 * step) % len(CYCLE)]
        return ModeChange(after, f"YOLO skipped: {refusal}")
    return ModeChange(candidate)


def set_mode(wanted: str, root: Path) -> ModeChange:
    """`/mode NAME`: the mode, or a ValueError saying what is accepted or why YOLO is refused."""
    name = wanted.strip().lower()
    if name not in CYCLE:
        raise ValueError(f"unknown mode {wanted!r}; choose one of {', '.join(CYCLE)}")
    if name == "yolo" and (refusal := yolo_refusal(root)):
        raise ValueError(refusal)
    return ModeChange(name)

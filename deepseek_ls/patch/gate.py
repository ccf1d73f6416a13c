"""Safety gate: size limits that force an explicit human approval.

Patches over `max_diff_bytes`, touching more than `max_files_without_approval`
files or changing more than `max_loc_without_approval` lines are staged but
flagged `approval_required`, so the tool host asks a person even in `auto`
approval mode. A diff over `HARD_LIMIT_FACTOR` x `max_diff_bytes` is refused:
nobody can review it, and parsing it would only cost memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepseek_ls.config_models import AgentLoopConfig
from deepseek_ls.patch.model import PatchError

HARD_LIMIT_FACTOR = 10


@dataclass(frozen=True)
class SafetyGate:
    max_diff_bytes: int = 400_000
    max_files_without_approval: int = 8
    max_loc_without_approval: int = 600

    @classmethod
    def from_config(cls, agent_loop: AgentLoopConfig) -> "SafetyGate":
        return cls(
            max_diff_bytes=agent_loop.max_diff_bytes,
            max_files_without_approval=agent_loop.safety_gate.max_files_without_approval,
            max_loc_without_approval=agent_loop.safety_gate.max_loc_without_approval,
        )

    def check_size(self, diff_bytes: int) -> None:
        limit = self.max_diff_bytes * HARD_LIMIT_FACTOR
        if diff_bytes > limit:
            raise PatchError(
                f"the diff is {diff_bytes} bytes, over the hard limit of {limit} "
                f"({HARD_LIMIT_FACTOR} x agent_loop.max_diff_bytes); split the change into smaller patches"
            )

    def approval_reasons(self, files: int, loc: int, diff_bytes: int = 0) -> list[str]:
        reasons = []
        if diff_bytes > self.max_diff_bytes:
            reasons.append(f"the diff is {diff_bytes} bytes (more than {self.max_diff_bytes} need explicit approval)")
        if files > self.max_files_without_approval:
            reasons.append(
                f"touches {files} files (more than {self.max_files_without_approval} need explicit approval)"
            )
        if loc > self.max_loc_without_approval:
            reasons.append(
                f"changes {loc} lines (more than {self.max_loc_without_approval} need explicit approval)"
            )
        return reasons

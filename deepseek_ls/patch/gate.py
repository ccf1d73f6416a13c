"""Safety gate: what forces an explicit human approval of a patch.

Patches over `max_diff_bytes`, touching more than `max_files_without_approval`
files or changing more than `max_loc_without_approval` lines are staged but
flagged `approval_required`, so the tool host asks a person even in `auto`
approval mode. So are patches touching a file that executes or configures
execution (`policy.exec_config_files`: `conftest.py`, `Makefile`,
`package.json`, `.vscode/`, CI workflows, ...): the request then shows those
files' changes, and "always allow" does not cover it. A diff over
`HARD_LIMIT_FACTOR` x `max_diff_bytes` is refused: nobody can review it, and
parsing it would only cost memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import pathspec

from deepseek_ls.globs import gitignore_spec
from deepseek_ls.config_models import EXEC_CONFIG_FILES, AgentLoopConfig, PolicyConfig
from deepseek_ls.patch.model import PatchError

if TYPE_CHECKING:
    from deepseek_ls.patch.model import PatchSet

HARD_LIMIT_FACTOR = 10


@dataclass(frozen=True)
class SafetyGate:
    max_diff_bytes: int = 400_000
    max_files_without_approval: int = 8
    max_loc_without_approval: int = 600
    exec_config_files: tuple[str, ...] = EXEC_CONFIG_FILES

    @classmethod
    def from_config(cls, agent_loop: AgentLoopConfig, policy: PolicyConfig | None = None) -> "SafetyGate":
        return cls(
            max_diff_bytes=agent_loop.max_diff_bytes,
            max_files_without_approval=agent_loop.safety_gate.max_files_without_approval,
            max_loc_without_approval=agent_loop.safety_gate.max_loc_without_approval,
            exec_config_files=tuple(policy.exec_config_files) if policy is not None else EXEC_CONFIG_FILES,
        )

    @cached_property
    def _exec_spec(self) -> pathspec.GitIgnoreSpec:
        return gitignore_spec([p.lower() for p in self.exec_config_files])

    def exec_config_paths(self, paths: list[str]) -> list[str]:
        """The paths among `paths` that execute or configure execution (case-insensitive)."""
        return [p for p in paths if self._exec_spec.match_file(p.lower())]

    def check_size(self, diff_bytes: int) -> None:
        limit = self.max_diff_bytes * HARD_LIMIT_FACTOR
        if diff_bytes > limit:
            raise PatchError(
                f"the diff is {diff_bytes} bytes, over the hard limit of {limit} "
                f"({HARD_LIMIT_FACTOR} x agent_loop.max_diff_bytes); split the change into smaller patches"
            )

    def approval_reasons(self, files: int, loc: int, diff_bytes: int = 0, paths: list[str] | None = None) -> list[str]:
        reasons = []
        exec_paths = self.exec_config_paths(paths or [])
        if exec_paths:
            reasons.append(
                f"changes {', '.join(exec_paths)}, which run(s) code or configure(s) how code runs "
                "(policy.exec_config_files): review the content below"
            )
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


def exec_config_content(ps: "PatchSet", limit: int = 8000) -> str:
    """The changes to `ps.exec_config_files`, as the approval request shows them (hunk bodies)."""
    parts = []
    for path in ps.exec_config_files:
        body = "\n".join(line for h in ps.hunks_of(path) for line in h.lines)
        parts.append(f"--- {path}\n{body}")
    text = "\n".join(parts)
    return text if len(text) <= limit else text[:limit] + f"\n... [{len(text) - limit} more characters in the diff]"

"""Policy: what tools may touch and run, approvals, and secret redaction."""

from __future__ import annotations

from typing import Any

__all__ = ["PathPolicy", "PolicyViolation"]


def __getattr__(name: str) -> Any:
    # Loaded when asked for: importing one light module of the package (the log gate, at every
    # command-line start) does not load the path policy and its glob engine.
    if name == "PathPolicy":
        from deepseek_ls.policy.paths import PathPolicy

        return PathPolicy
    if name == "PolicyViolation":
        from deepseek_ls.policy.errors import PolicyViolation

        return PolicyViolation
    raise AttributeError(f"module 'deepseek_ls.policy' has no attribute {name!r}")

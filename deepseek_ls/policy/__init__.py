"""Policy: what tools may touch and run, approvals, and secret redaction."""

from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.paths import PathPolicy

__all__ = ["PathPolicy", "PolicyViolation"]

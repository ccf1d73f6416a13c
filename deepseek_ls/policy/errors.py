"""Errors raised by the policy layer."""

from __future__ import annotations


class PolicyViolation(ValueError):
    """A path or command the policy refuses.

    `subject` is what was asked for (a path or a command line), `rule` a short
    stable code (``absolute_path``, ``metacharacter``, ...) and `reason` a
    sentence a person and a model can both act on.
    """

    def __init__(self, subject: str, rule: str, reason: str) -> None:
        self.subject = subject
        self.rule = rule
        self.reason = reason
        super().__init__(f"refused {subject!r}: {reason} [{rule}]")

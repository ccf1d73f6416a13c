"""Secret redaction (placeholder until the policy issue lands: returns its input)."""

from typing import Any


def redact_text(text: str) -> str:
    return text


def redact_obj(obj: Any) -> Any:
    return obj

"""Deterministic failure classification (docs/agent.md, "The loop").

* `PatchMismatch` — the diff did not parse or apply, left the declared files, or its base was stale.
* `MechanicalVerifyFailure` — a verification command exited non-zero.
* `RepeatedVerifyFailure` — the same normalised failure fingerprint reached `repeat_threshold`.
* `DesignMismatch` — after a replan the error set is not materially reduced
  (material reduction: ``|E_new| <= |E_old| - 1`` or similarity ``< similarity_threshold``).

Mechanical failures go back to the executor; repeated and design failures go
back to the planner with the router nudged towards max-think.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

from deepseek_ls.config_models import FailureClassifierConfig
from deepseek_ls.sink import EventSink

FailureClass = Literal["PatchMismatch", "MechanicalVerifyFailure", "RepeatedVerifyFailure", "DesignMismatch"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"\d+(?:\.\d+)?")
_TMP = re.compile(r"(/tmp|/var/folders|/private/var)/\S*")
_ERRORISH = re.compile(r"error|fail|assert|exception|traceback|panic|expected|found|undefined|cannot", re.I)


def error_lines(output: str, limit: int = 40) -> list[str]:
    """The normalised error-looking lines of a command's output (numbers, addresses, tmp paths erased)."""
    result: list[str] = []
    for raw in _ANSI.sub("", output).splitlines():
        if not _ERRORISH.search(raw):
            continue
        line = _TMP.sub("<tmp>", raw.strip())
        line = _NUM.sub("N", _HEX.sub("0x", line)).lower()
        # Timing summaries ("1 failed in N.Ns") differ run to run in counts only; keep them normalised.
        if line and line not in result:
            result.append(line)
        if len(result) >= limit:
            break
    return result


def fingerprint(output: str, limit: int = 40) -> str:
    lines = error_lines(output, limit) or [_NUM.sub("N", output.strip().lower())[-200:]]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def similarity(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def materially_reduced(old: set[str], new: set[str], threshold: float) -> bool:
    return len(new) <= len(old) - 1 or similarity(old, new) < threshold


@dataclass
class Failure:
    failure_class: FailureClass
    detail: str
    fingerprint: str | None = None

    @property
    def goes_to_planner(self) -> bool:
        return self.failure_class in ("RepeatedVerifyFailure", "DesignMismatch")


@dataclass
class FailureClassifier:
    """Classifies failures of one session and remembers what it saw (fingerprints, error sets)."""

    config: FailureClassifierConfig
    sink: EventSink
    counts: dict[str, int] = field(default_factory=dict)
    last_errors: set[str] | None = None
    errors_before_replan: set[str] | None = None
    replanned: bool = False

    def patch_mismatch(self, detail: str) -> Failure:
        return self._emit(Failure("PatchMismatch", detail))

    def verify_failed(self, command: str, output: str) -> Failure:
        fp = fingerprint(output, self.config.fingerprint_lines)
        errors = set(error_lines(output, self.config.fingerprint_lines))
        self.counts[fp] = self.counts.get(fp, 0) + 1
        detail = f"`{command}` failed"
        if (
            self.replanned
            and self.errors_before_replan is not None
            and not materially_reduced(self.errors_before_replan, errors, self.config.similarity_threshold)
        ):
            failure = Failure("DesignMismatch", f"{detail}; the error set was not materially reduced by the replan", fp)
        elif self.counts[fp] >= self.config.repeat_threshold:
            failure = Failure("RepeatedVerifyFailure", f"{detail} the same way {self.counts[fp]} times", fp)
        else:
            failure = Failure("MechanicalVerifyFailure", detail, fp)
        self.last_errors = errors
        self.replanned = False
        return self._emit(failure)

    def note_replan(self) -> None:
        """Call when the planner revises the plan after a failure: the next verify is judged against it."""
        self.errors_before_replan = self.last_errors
        self.replanned = True

    def verify_passed(self) -> None:
        self.last_errors = set()

    def restore(self, past_events: list[Mapping[str, Any]]) -> None:
        for ev in past_events:
            if ev["kind"] == "VerificationRun@v1" and not ev["payload"].get("ok") and ev["payload"].get("fingerprint"):
                fp = ev["payload"]["fingerprint"]
                self.counts[fp] = self.counts.get(fp, 0) + 1

    def _emit(self, failure: Failure) -> Failure:
        self.sink.emit(
            "FailureClassified@v1",
            {"failure_class": failure.failure_class, "detail": failure.detail, "fingerprint": failure.fingerprint},
        )
        return failure

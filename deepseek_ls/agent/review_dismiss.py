"""Review findings the person dismissed: by fingerprint, so a dismissed finding stays dismissed for the same code.

A finding's fingerprint (`review.fingerprint`) is its file, the text of its lines
(whitespace-normalised) and its message: while that code is unchanged — wherever it
moves in the file — the same finding is not shown again, by the editor or the CLI;
once the lines change it may be. Kept in `.deepseek/review/dismissed.json`, sealed with
the user's key (`store/seal.py`): a list a repository ships (to hide a finding from
everyone who reviews it) is not the person's and is ignored, with a warning in the log.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from pathlib import Path

from deepseek_ls.store import seal

log = logging.getLogger("deepseek_ls.agent")

FILE = Path("review") / "dismissed.json"


class DismissedFindings:
    def __init__(self, state_dir: Path, root: Path) -> None:
        self.path = Path(state_dir) / FILE
        self.workspace = seal.workspace_id(root)

    def fingerprints(self) -> frozenset[str]:
        return frozenset(entry["fingerprint"] for entry in self._entries())

    def dismiss(self, fingerprint: str, *, file: str = "", message: str = "") -> bool:
        """Record a dismissal; False when it was already dismissed."""
        entries = self._entries()
        if any(e["fingerprint"] == fingerprint for e in entries):
            return False
        entries.append({"fingerprint": fingerprint, "file": file, "message": message[:300],
                        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self._write(entries)
        return True

    def _entries(self) -> list[dict[str, str]]:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.warning("%s is not readable (%s): no finding is taken as dismissed", self.path, exc)
            return []
        why = seal.why_not_ours(record, "kind", "review-dismissed", self.workspace)
        if why is not None:
            log.warning("%s is ignored: %s", self.path, why)
            return []
        entries = record.get("dismissed")
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)] \
            if isinstance(entries, list) else []

    def _write(self, entries: list[dict[str, str]]) -> None:
        record = seal.sealed({"kind": "review-dismissed", "version": 1, "workspace": self.workspace,
                              "dismissed": entries})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".dismissed-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1, ensure_ascii=False)
        os.replace(tmp, self.path)

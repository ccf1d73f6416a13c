"""Sessions as the person's own deepseek-ls writes them, and as older versions did, for the
`test_never_trust_*` corpora of `store/provenance.py`."""

from __future__ import annotations

import json
from pathlib import Path

from deepseek_ls.store import seal
from deepseek_ls.store.ids import new_id
from deepseek_ls.store.sessions import SessionStore

PROMPT = "the person's own task"


def sealed_session(root: Path, prompt: str = PROMPT, turns: int = 3) -> str:
    """A session made by this version in the workspace `root`."""
    with SessionStore(root / ".deepseek", durable=False).create(root, "agent", prompt) as log:
        for n in range(turns):
            log.append("TurnAdded@v1", {"role": "user", "content": f"turn {n}"})
        return log.session_id


def legacy_log(root: Path, prompt: str = PROMPT, turns: int = 3, *, recorded_root: Path | None = None) -> tuple[str, bytes]:
    """A log as versions before the chain wrote it (no mac on any line); no marker."""
    sid = new_id()
    lines = [{"seq_no": 1, "ts": "2026-11-01T10:00:00.000000Z", "session_id": sid, "kind": "SessionCreated@v1",
              "payload": {"workspace_root": str(recorded_root or root), "mode": "agent", "prompt": prompt}}]
    for n in range(turns):
        lines.append({"seq_no": n + 2, "ts": "2026-11-01T10:00:01.000000Z", "session_id": sid, "kind": "TurnAdded@v1",
                      "payload": {"role": "user", "content": f"turn {n}"}})
    data = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    log = root / ".deepseek" / "sessions" / sid / "events.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(data)
    return sid, data


def v1_session(root: Path, prompt: str = PROMPT, **kw) -> str:
    """A session sealed by the version before this one: its marker binds the first line only."""
    sid, data = legacy_log(root, prompt, **kw)
    first = data[:data.index(b"\n") + 1]
    marker = seal.sealed({"kind": "deepseek-ls session", "session_id": sid,
                          "path": f"sessions/{sid}/events.jsonl", "first_event_sha256": seal.digest(first)})
    (root / ".deepseek" / "sessions" / sid / "session.seal").write_text(json.dumps(marker, sort_keys=True))
    return sid


def log_of(root: Path, sid: str) -> Path:
    return root / ".deepseek" / "sessions" / sid / "events.jsonl"


def listed(root: Path) -> list[str]:
    return [s.session_id for s in SessionStore(root / ".deepseek").list(warn=False)]


def reason(root: Path, sid: str) -> str | None:
    return {s.session_id: s.reason for s in SessionStore(root / ".deepseek").ignored()}.get(sid)

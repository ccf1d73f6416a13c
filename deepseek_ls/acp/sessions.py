"""ACP sessions of a workspace: `.deepseek/acp/<id>.json`, each naming our sessions (one per prompt).

An ACP session is a conversation; each of its prompts ran as one of our sessions with
its own event log. This record is what `session/load` and `session/list` read. Each
record is sealed with the per-user key (`store/seal.py`): one a repository ships (or
another user wrote) is neither listed nor loaded, like the session logs it would name; nor
is one sealed in another workspace (a record names its workspace root; one sealed before
records did counts where its `cwd` is).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deepseek_ls.store import seal
from deepseek_ls.store.ids import is_id, new_id
from deepseek_ls.workspace import state_dir


@dataclass
class AcpSessionRecord:
    session_id: str
    cwd: str
    mode: str = "agent"
    profile: str | None = None  # the model profile forced for its prompts (None: the router decides)
    approval: str | None = None  # its approval mode (None: the configured one)
    title: str = ""
    created: str = ""
    updated: str = ""
    ours: list[str] = field(default_factory=list)
    rewound: dict[str, list[str]] = field(default_factory=dict)  # rewind id -> the prompts it took out (/rewind)


class AcpSessionStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def dir(self) -> Path:
        return state_dir(self.root) / "acp"

    def create(self, root: Path, *, mode: str) -> AcpSessionRecord:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        record = AcpSessionRecord(new_id(), str(root), mode=mode, created=now, updated=now)
        self.save(record)
        return record

    def save(self, record: AcpSessionRecord) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"{record.session_id}.json"
        tmp = path.with_suffix(".tmp")
        sealed = seal.sealed({**asdict(record), "workspace": seal.workspace_id(self.root)})
        tmp.write_text(json.dumps(sealed, indent=1), encoding="utf-8")
        os.replace(tmp, path)

    def get(self, session_id: str) -> AcpSessionRecord | None:
        if not isinstance(session_id, str) or not is_id(session_id):
            return None  # never a path built from what the client sent
        try:
            data = json.loads((self.dir / f"{session_id}.json").read_text(encoding="utf-8"))
            workspace = seal.workspace_id(self.root)
            if seal.why_not_ours(data, "session_id", session_id, workspace) is not None:
                return None  # planted, another user's, or another workspace's: not a conversation of ours here
            if seal.is_legacy(data) and not Path(seal.workspace_id(data.get("cwd"))).is_relative_to(workspace):
                return None  # sealed before records named their workspace, and made elsewhere
            data.pop("seal")
            data.pop("workspace", None)
            return AcpSessionRecord(**data)
        except (OSError, ValueError, TypeError):
            return None

    def list(self) -> list[AcpSessionRecord]:
        if not self.dir.is_dir():
            return []
        records = [self.get(p.stem) for p in self.dir.glob("*.json")]
        return sorted((r for r in records if r is not None), key=lambda r: r.updated, reverse=True)

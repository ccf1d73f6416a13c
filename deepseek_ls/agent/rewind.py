"""Rewind: every prompt is a checkpoint; take the workspace, the conversation or both back to before one.

A prompt is one session (the chat, ACP and the editor run each prompt as its own session), so the
checkpoint of a prompt is its session: the files it changed are the applies of its patches and the
changes of the commands it ran (`patch/command_changes.py`), each a `CheckpointStore` checkpoint.
Rewinding to prompt P takes back P and every later prompt of the workspace, newest first:

- **code**: every unrestored checkpoint those sessions own is taken out in one 3-way plan, the one
  `undo` uses (`CheckpointStore.plan_undo`): what the person typed since stays; an overlap refuses
  with nothing changed, naming the files. An editor lands it in its buffers (`Agent.restorer`).
- **conversation**: those prompts leave the conversation (the chat and ACP drop them from what is
  sent with the next prompt; a compaction recorded in a later prompt goes with it, so the position
  before it comes back). The sessions themselves stay in the log.

Each rewind is itself a checkpoint (meta `kind: "rewind"`): what the files held before it and what it
left, so a redo puts the code back 3-way as well (edits made after the rewind stay, or it refuses).
Recorded as `Rewound@v1` / `RewindRedone@v1` in the prompt's session (external events: a replay
re-emits them where they were).
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import asdict, dataclass, field
from typing import Any

from deepseek_ls.store.ids import new_id

WHATS = ("code", "conversation", "both")


class RewindRefused(Exception):
    """A rewind or redo that would lose work, or cannot be made; nothing was changed. `files` names them."""

    def __init__(self, message: str, files: list[str] | None = None) -> None:
        super().__init__(message)
        self.files = files or []

    @property
    def user_message(self) -> str:  # an expected outcome, shown as it is
        return str(self)


@dataclass
class PromptCheckpoint:
    """One prompt (session): what it changed, what of it can still be taken out, whether it is rewound."""

    session_id: str
    prompt: str
    created_at: str | None
    mode: str | None
    files: list[str] = field(default_factory=list)  # every file its applies and commands changed
    checkpoint_ids: list[str] = field(default_factory=list)  # its unrestored ones, oldest first
    rewound: str | None = None  # the rewind that took it back (not redone)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RewindResult:
    rewind_id: str
    to_session: str
    what: str
    sessions: list[str]
    files: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    via: str = "none"
    redone: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Rewinder:
    """The rewinds of one agent's workspace (`Agent.rewinder`)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.patches = agent.patches
        self.store = agent.patches.checkpoints

    # -- what there is -----------------------------------------------------------------------

    def _owners(self) -> dict[str, str]:
        """checkpoint id -> the session that made it (its patch's, or the command's); marks and
        rewinds belong to nobody."""
        owners: dict[str, str] = {}
        patch_owner: dict[str, str | None] = {}
        for m in self.store.list():
            meta = m.get("meta") or {}
            if meta.get("kind") == "rewind":
                continue
            if meta.get("session_id"):
                owners[m["checkpoint_id"]] = meta["session_id"]
            elif (pid := meta.get("patch_id")):
                if pid not in patch_owner:
                    try:
                        patch_owner[pid] = self.patches.get(pid).session_id
                    except Exception:  # noqa: BLE001 - a removed patch: its checkpoint stays nobody's
                        patch_owner[pid] = None
                if patch_owner[pid]:
                    owners[m["checkpoint_id"]] = patch_owner[pid]
        return owners

    def rewinds(self) -> list[dict[str, Any]]:
        """The rewinds not redone (their checkpoint unrestored), oldest first: each one's meta."""
        return [{**m["meta"], "checkpoint_id": m["checkpoint_id"]} for m in self.store.list()
                if (m.get("meta") or {}).get("kind") == "rewind" and not m.get("restored")]

    def checkpoints(self) -> list[PromptCheckpoint]:
        """Every prompt of the workspace, oldest first, with what it changed."""
        manifests = {m["checkpoint_id"]: m for m in self.store.list()}
        owners = self._owners()
        rewound = {sid: r["rewind_id"] for r in self.rewinds() for sid in r.get("sessions", [])}
        out = []
        for s in reversed(self.agent.store.list(warn=False)):
            mine = [cid for cid, owner in owners.items() if owner == s.session_id]
            files = sorted({e["path"] for cid in mine for e in manifests[cid].get("files", [])})
            out.append(PromptCheckpoint(s.session_id, s.prompt or "", s.created_at, s.mode, files,
                                        sorted(cid for cid in mine if not manifests[cid].get("restored")),
                                        rewound.get(s.session_id)))
        return out

    def scope(self, session_id: str, code: bool = True) -> tuple[list[str], list[str]]:
        """(the prompts taken back: `session_id` and every later one, oldest first; their unrestored
        checkpoints, newest first). With `code` (the files are restored), refused when a prompt's
        applies have no checkpoint (any more); a conversation rewind restores no file."""
        sid = self.agent.store.resolve(session_id)
        later = sorted(s.session_id for s in self.agent.store.list(warn=False) if s.session_id >= sid)
        owners = self._owners()
        manifests = {m["checkpoint_id"]: m for m in self.store.list()}
        held = {(manifests[c].get("meta") or {}).get("patch_id") for c in owners}
        gone, unchecked = [], []
        for s in later if code else []:
            session = self.agent._runtime(s).session
            for rec in session.patches.values():
                if rec.applied and rec.patch_id not in held:
                    (unchecked if rec.unchecked else gone).append(
                        (f"{rec.patch_id} (prompt {s[:13]}: {', '.join(rec.files)})", rec.files))
        if unchecked:
            raise RewindRefused("rewind refused, nothing was changed: these hunks were accepted in the editor, "
                                "which keeps no checkpoint of them (the editor's undo takes them back), so the "
                                "rewind cannot take them out:\n" + "\n".join(f"  - {g}" for g, _ in unchecked),
                                sorted({f for _, files in unchecked for f in files}))
        if gone:
            raise RewindRefused("rewind refused, nothing was changed: the checkpoints of these applies are gone "
                                "(older than the checkpoints kept), so they cannot be taken out:\n"
                                + "\n".join(f"  - {g}" for g, _ in gone), [])
        ids = sorted((cid for cid, owner in owners.items() if owner in later and not manifests[cid].get("restored")),
                     reverse=True)
        return later, ids

    def covered(self, checkpoint_ids: list[str]) -> list[str]:
        files: set[str] = set()
        for m in self.store.list():
            if m["checkpoint_id"] in checkpoint_ids:
                files.update(e["path"] for e in m.get("files", []))
                files.update(m.get("after", {}) or {})
        return sorted(files)

    # -- rewind and redo ---------------------------------------------------------------------

    def _buffers(self, files: list[str]) -> dict[str, str]:
        overlay = self.agent.overlay
        return {rel: doc[0] for rel in files if (doc := overlay.get(rel)) is not None}

    async def _undo(self, checkpoint_ids: list[str]) -> tuple[list[str], list[str], str]:
        """Take `checkpoint_ids` out (newest first): (files restored, kept, via)."""
        from deepseek_ls.patch import PatchError

        try:
            if self.agent.restorer is None:
                plan = await asyncio.to_thread(self.patches.undo_on_disk, checkpoint_ids)
                return [f.path for f in plan.files], plan.kept, "disk"
            outcome = await self.agent.restorer(checkpoint_ids)
            return list(outcome.changed), list(outcome.kept), "workspace/applyEdit"
        except PatchError as exc:  # edits made since overlap: nothing was changed
            raise RewindRefused(str(exc).replace("undo refused", "rewind refused"),
                                list(getattr(exc.__cause__, "files", []))) from None

    async def rewind(self, session_id: str, what: str = "both") -> RewindResult:
        if what not in WHATS:
            raise ValueError(f"rewind what? {what!r}: one of {', '.join(WHATS)}")
        code = what in ("code", "both")
        sessions, ids = await asyncio.to_thread(self.scope, session_id, code)
        target = sessions[0]
        rewind_id = new_id()
        files = self.covered(ids) if code else []
        meta = {"kind": "rewind", "rewind_id": rewind_id, "to_session": target, "what": what,
                "sessions": sessions, "checkpoint_ids": ids if code else []}
        # The rewind's own checkpoint: what the files hold now (the buffers the person sees), for a redo.
        redo = await asyncio.to_thread(self.store.create, files, label=f"rewind to before {target[:13]}", meta=meta,
                                       texts=self._buffers(files))
        restored: list[str] = []
        kept: list[str] = []
        via = "none"
        if code and ids:
            try:
                restored, kept, via = await self._undo(ids)
            except BaseException:
                shutil.rmtree(self.store.dir / redo, ignore_errors=True)
                raise
        await asyncio.to_thread(self.store.record_after, redo, files, self._buffers(files))
        result = RewindResult(rewind_id, target, what, sessions, restored, kept, via)
        self._record(target, "Rewound@v1", {"rewind_id": rewind_id, "what": what, "sessions": sessions,
                                            "checkpoint_ids": meta["checkpoint_ids"], "redo_checkpoint": redo,
                                            "files": restored, "kept": kept, "via": via})
        return result

    async def redo(self, rewind_id: str | None = None) -> RewindResult:
        """Undo a rewind (the latest one not redone when None): its code back 3-way, its prompts back."""
        live = self.rewinds()
        chosen = next((r for r in reversed(live) if rewind_id in (None, r["rewind_id"])), None)
        if chosen is None:
            raise RewindRefused(f"no rewind {rewind_id} to redo" if rewind_id else "no rewind to redo")
        cid = chosen["checkpoint_id"]
        manifest = next(m for m in self.store.list() if m["checkpoint_id"] == cid)
        restored: list[str] = []
        via = "none"
        if manifest.get("files"):
            restored, _kept, via = await self._undo([cid])
        else:
            await asyncio.to_thread(self.store.mark_restored, [cid])
        await asyncio.to_thread(self.patches.reapplied, chosen.get("checkpoint_ids") or [])
        self._record(chosen["to_session"], "RewindRedone@v1", {"rewind_id": chosen["rewind_id"], "files": restored,
                                                               "via": via})
        return RewindResult(chosen["rewind_id"], chosen["to_session"], chosen["what"], chosen.get("sessions", []),
                            restored, [], via, redone=True)

    def _record(self, session_id: str, kind: str, payload: dict[str, Any]) -> None:
        rt = self.agent._runtime(session_id)
        rt.session.emit(kind, {**payload, "external": True})  # the person's action: a replay re-emits it


def conversation_after(sessions: list[str], result: RewindResult) -> list[str]:
    """A conversation's prompts (session ids, oldest first) after `result`: a rewind of the
    conversation drops the prompts it took back, a redo of one puts them back in order."""
    if result.what == "code":
        return list(sessions)
    if result.redone:
        return sorted(set(sessions) | set(result.sessions))
    return [s for s in sessions if s not in result.sessions]

"""One-action undo of a Hetun mission: take out every apply since the mission's checkpoint, newest first."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class MissionUndo:
    """What `Agent.undo_mission` did: the files it restored, the files it left as they are because
    they were changed after the mission's checkpoint (not by the mission), and how ("disk", or
    "workspace/applyEdit" onto the editor's buffers, which the person saves)."""

    session_id: str
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    via: str = "disk"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def mission_chain(patches: Any, mark: str, session_id: str) -> list[str]:
    """The unrestored checkpoints from `mark` (the mission's, made before its first write) to the
    newest, newest first. Refused (`LookupError`) when a later checkpoint belongs to another session."""
    live = [m for m in patches.checkpoints.list() if not m.get("restored")]
    ids = [m["checkpoint_id"] for m in live]
    if mark not in ids:
        raise LookupError("the mission was already undone (its checkpoint is restored or gone)")
    later = live[ids.index(mark):]
    for m in later[1:]:
        patch_id = (m.get("meta") or {}).get("patch_id")
        owner = (m.get("meta") or {}).get("session_id")  # a command's change (patch/command_changes.py)
        if patch_id:
            try:
                owner = patches.get(patch_id).session_id
            except Exception:  # noqa: BLE001 - a deleted patch: not ours to judge, refuse below
                owner = None
        if owner != session_id:
            raise LookupError(f"undo refused, nothing was changed: {m.get('label') or m['checkpoint_id']} was "
                              "applied after the mission by something else; undo that first")
    return [m["checkpoint_id"] for m in reversed(later)]


def undo_since(patches: Any, mark: str, session_id: str) -> Any:
    """Undo the mission on disk (no editor) in one plan (`PatchStore.undo_on_disk`): each apply taken
    out three-way against the files now, the mark restoring nothing over later edits, all or nothing.
    Returns the `UndoPlan`; raises `PatchError` naming the files when edits overlap."""
    return patches.undo_on_disk(mission_chain(patches, mark, session_id))

"""Seals on the state deepseek-ls keeps in a workspace and later acts on.

A repository can ship a `.deepseek/` directory (its `config.toml` is meant to be
shared), and with it anything else under that name: a checkpoint there is what
`apply --undo` (and undo in the editor) writes back into the person's files, and
a staged patch there is what the editor's lenses and `deepseek-ls diff|apply`
offer as the agent's own proposal. So each checkpoint manifest and each staged
patch is sealed with an HMAC under a key kept beside the user config
(`state.key`, mode 0600), never in a workspace; a checkpoint manifest carries the
sha256 of every file the checkpoint stored. A record whose seal does not verify
(planted by a repository, copied from another machine or user, altered, renamed,
or made before seals) is not ours and is ignored (`why_not_ours` says why); a
stored checkpoint file that no longer has its recorded hash refuses the undo.

A seal also names the workspace it was made in (`workspace_id`: the resolved root), so a
record of ours copied into another workspace (a repository prepared with it, a checkpoint of
project A offered in project B) is not ours there. A record sealed before seals named their
workspace (`is_legacy`) is the person's own and is re-sealed for the workspace it is found in
on first read (`reseal_legacy`). A project that was moved no longer matches its old seals:
the person vouches for them with `deepseek-ls sessions --adopt ID` (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

KEY_FILE = "state.key"
_KEY_BYTES = 32
_keys: dict[Path, bytes] = {}
_lock = threading.Lock()


def key_path() -> Path:
    from deepseek_ls.config_layers import user_config_path

    return user_config_path().parent / KEY_FILE


def key() -> bytes:
    """This user's sealing key (created on first use)."""
    return _key()


def _key() -> bytes:
    path = key_path()
    with _lock:
        if path not in _keys:
            _keys[path] = _load_or_create(path)
        return _keys[path]


def _load_or_create(path: Path) -> bytes:
    for _ in range(50):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = None
        except OSError as exc:
            return _process_key(path, exc)
        if data is not None:
            if len(data) >= _KEY_BYTES:
                return data
            time.sleep(0.01)  # another process is writing it
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            return _process_key(path, exc)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(_KEY_BYTES))
    return _process_key(path, OSError(f"{path} stays shorter than {_KEY_BYTES} bytes"))


def _process_key(path: Path, exc: OSError) -> bytes:
    # Checkpoints and patches made now are this process's only; better than trusting all.
    log.warning("cannot keep the state key at %s (%s): checkpoints and staged patches are sealed for this "
                "process only", path, exc)
    return secrets.token_bytes(_KEY_BYTES)


def _canonical(record: dict) -> bytes:
    body = {k: v for k, v in record.items() if k != "seal"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")


def sealed(record: dict) -> dict:
    """`record` with its seal (any previous one replaced)."""
    out = {k: v for k, v in record.items() if k != "seal"}
    out["seal"] = hmac.new(_key(), _canonical(out), hashlib.sha256).hexdigest()
    return out


def is_sealed(record: object) -> bool:
    """Whether `record` carries a seal made with this user's key over exactly its content."""
    if not isinstance(record, dict) or not isinstance(record.get("seal"), str):
        return False
    expected = hmac.new(_key(), _canonical(record), hashlib.sha256).hexdigest()
    return hmac.compare_digest(record["seal"], expected)


def workspace_id(root: Path | str) -> str:
    """The identity a seal binds a record to: the workspace root, absolute with links resolved."""
    return str(Path(root).absolute().resolve())


def why_not_ours(record: object, id_field: str, expected_id: str, workspace: str | None = None) -> str | None:
    """None when `record` is sealed with this user's key, names itself `expected_id` (its file's
    name) in `id_field` and, with `workspace` (`workspace_id`), was sealed in that workspace or
    before seals named one (`is_legacy`); else why it is not ours, in words for a log line or the
    person."""
    if not isinstance(record, dict):
        return "it is not a JSON object"
    if record.get("seal") is None:
        return "it has no seal (shipped with the repository, or made before deepseek-ls sealed its state)"
    if not is_sealed(record):
        return "its seal does not verify (sealed by another user or machine, or altered since)"
    if record.get(id_field) != expected_id:
        return f"it was sealed as {record.get(id_field)!r}, not {expected_id!r} (copied or renamed)"
    if workspace is not None and "workspace" in record and record["workspace"] != workspace:
        return (f"it was sealed in another workspace ({record['workspace']!r}): copied from there, "
                "or this project was moved or renamed since")
    return None


def is_legacy(record: object) -> bool:
    """A record sealed (by whichever key) before seals named their workspace."""
    return isinstance(record, dict) and "workspace" not in record


def reseal_legacy(record: dict, workspace: str) -> dict:
    """A legacy record of ours (`why_not_ours` is None, `is_legacy`) sealed for `workspace`."""
    return sealed({**record, "workspace": workspace})


ADOPTIONS_FILE = "adoptions.jsonl"


def record_adoption(entry: dict) -> Path:
    """Append one line saying what the person adopted (a record they vouched for) to the audit
    file beside the key, out of any workspace's reach; returns its path."""
    path = key_path().parent / ADOPTIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **entry},
                      sort_keys=True, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def digest(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()

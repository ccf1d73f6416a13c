"""Credential files in what git prints as patches, hidden by their content.

The deny-list keeps `.env` and friends out of `git diff` / `git log -p` with exclude
pathspecs (`policy/command_secrets.py`), but a netrc saved as `deploy/hosts` or a
Docker `auths` file called `ci/registry.json` has no telling name: git prints it
like any other file, and redaction does not know every credential format. So the
output of every git command, and of the `git.diff` tool, goes through
`hide_secret_diffs`: each file section (`diff --git ...` to the next section or
commit) names the blobs it compares on its `index` line; when any of them is a
credential file by its content (`policy/secret_files.py`) — on either side, so a
secret file deleted in a commit is hidden too — the section is replaced by one
line saying so. A section with hunks whose blobs cannot be named (no `index`
line, an ambiguous abbreviation) is hidden as well, as are diff lines that output
truncation cut off from their header.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import threading
from collections.abc import Callable, Iterable

from deepseek_ls.policy import safe_files
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.git_safety import SafeGit
from deepseek_ls.policy.secret_files import HEAD_BYTES, secret_kind_of_bytes

_SECTION = re.compile(r"^diff --(?:git|cc|combined) ")
_COMMIT = re.compile(r"^commit [0-9a-f]{40,64}\b")  # git log's default header: a section ends there
_INDEX = re.compile(r"^index ([0-9a-f]{4,64}(?:,[0-9a-f]{4,64})*)\.\.([0-9a-f]{4,64})\b")
_TRUNCATED = re.compile(r"^\.\.\. \[\d+ bytes truncated\] \.\.\.$")  # tools/shell.py's marker
_NO_BLOB = re.compile(r"^0+$")
_TIMEOUT = 30.0
_MAX_WORKTREE_FILE = 32 * 1024 * 1024

# (blob id, the path its section names) pairs -> for each id, the kind of credential file it is
# (None: not one; "unknown": cannot tell)
KindsOf = Callable[[list[tuple[str, str]]], dict[str, str | None]]


def looks_like_patch(text: str) -> bool:
    return text.startswith(("diff --git ", "diff --cc ", "diff --combined ")) or any(
        marker in text for marker in ("\ndiff --git ", "\ndiff --cc ", "\ndiff --combined ")
    )


def hide_secret_diffs(text: str, kinds_of: KindsOf) -> tuple[str, list[str]]:
    """`text` (git's output) with the file sections of credential files replaced by a note, and
    the names of the hidden files. Text that holds no patch is returned as it is."""
    if not looks_like_patch(text):
        return text, []
    chunks = _split(text.splitlines(keepends=True))
    ids = sorted({(i, _name(lines[0])) for kind, lines in chunks if kind == "section" for i in _blob_ids(lines)})
    kinds = kinds_of(ids) if ids else {}
    out: list[str] = []
    hidden: list[str] = []
    for kind, lines in chunks:
        if kind == "other":
            out += lines
            continue
        if kind == "orphan":
            out.append(f"[deepseek-ls: {len(lines)} diff lines cut from their file's header by output truncation "
                       "are hidden]\n")
            continue
        why = _secret_reason(lines, kinds)
        if why is None:
            out += lines
            continue
        name = _name(lines[0])
        hidden.append(name)
        out.append(lines[0] if lines[0].endswith("\n") else lines[0] + "\n")
        out.append(f"[deepseek-ls: the diff of {name} is hidden: {why}]\n")
    return "".join(out), hidden


def _split(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Chunks of ("section" | "orphan" | "other", lines) in order."""
    chunks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    kind = "other"
    patch_seen = False
    for line in lines:
        bare = line.rstrip("\r\n")
        if _SECTION.match(bare):
            patch_seen = True
            kind, current = "section", [line]
            chunks.append((kind, current))
        elif _TRUNCATED.match(bare):
            chunks.append(("other", [line]))
            # What follows, up to the next header, belongs to a section whose header was cut.
            kind, current = "orphan", []
            chunks.append((kind, current))
        elif _COMMIT.match(bare) or current is None:
            kind, current = "other", [line]
            chunks.append((kind, current))
        else:
            current.append(line)
    # Orphans before any patch header at all are not diff lines (a long `git log --oneline`).
    return [(("other" if k == "orphan" and not patch_seen else k), ls) for k, ls in chunks if ls]


def _header(lines: list[str]) -> list[str]:
    head = []
    for line in lines:
        if line.startswith(("@@", "Binary files ")):
            break
        head.append(line.rstrip("\r\n"))
    return head


def _blob_ids(lines: list[str]) -> list[str]:
    for line in _header(lines):
        m = _INDEX.match(line)
        if m:
            return [b for b in (*m.group(1).split(","), m.group(2)) if not _NO_BLOB.match(b)]
    return []


def _secret_reason(lines: list[str], kinds: dict[str, str | None]) -> str | None:
    ids = _blob_ids(lines)
    if not ids:
        has_content = any(line.startswith(("@@", "Binary files ")) for line in lines)
        return "git named no blob for it, so its content could not be checked" if has_content else None
    for blob in ids:
        kind = kinds.get(blob, "unknown")
        if kind == "unknown":
            return "its content could not be checked"
        if kind is not None:
            return f"its content looks like {kind}"
    return None


def _name(header: str) -> str:
    bare = header.rstrip("\r\n")
    for prefix in ("diff --git ", "diff --cc ", "diff --combined "):
        if bare.startswith(prefix):
            rest = bare[len(prefix):]
            if prefix == "diff --git " and " b/" in rest:
                return rest.rsplit(" b/", 1)[1]
            return rest
    return bare


def blob_kinds(safe: SafeGit, blobs: Iterable[tuple[str, str]]) -> dict[str, str | None]:
    """What kind of credential file each blob is (None: not one), read with one hardened
    `git cat-file --batch` (no filters, no textconv) and only the head of each blob. A blob that
    is not in git's object store is the work-tree side of `git diff`: the file at the section's
    path is read when its git hash matches the id. A blob that cannot be read (ambiguous, neither
    stored nor in the work tree) or a git that fails is "unknown"."""
    pairs = list(dict.fromkeys(blobs))
    wanted = list(dict.fromkeys(blob for blob, _ in pairs))
    result: dict[str, str | None] = dict.fromkeys(wanted, "unknown")
    if not wanted:
        return result
    missing = set(wanted)
    try:
        proc = subprocess.Popen(
            safe.argv("cat-file", "--batch"), cwd=safe.cwd, env=safe.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
    except OSError:
        return result
    timer = threading.Timer(_TIMEOUT, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(f"{blob}\n" for blob in wanted).encode("ascii"))
        proc.stdin.close()
        for blob in wanted:
            header = proc.stdout.readline().decode("ascii", "replace").split()
            if len(header) != 3 or header[1] not in ("blob", "tree", "commit", "tag"):
                if header[-1:] != ["missing"]:
                    missing.discard(blob)  # ambiguous: stays unknown
                continue
            missing.discard(blob)
            size = int(header[2])
            head = proc.stdout.read(min(size, HEAD_BYTES))
            rest = size - len(head)
            while rest > 0:
                chunk = proc.stdout.read(min(rest, 1 << 20))
                if not chunk:
                    break
                rest -= len(chunk)
            proc.stdout.read(1)  # the newline after the content
            if header[1] == "blob" and len(head) == min(size, HEAD_BYTES):
                result[blob] = secret_kind_of_bytes(head)
    except (OSError, ValueError):
        missing = set()
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
    for blob, path in pairs:
        if blob in missing and result[blob] == "unknown":
            data = _worktree_blob(safe, path, blob)
            if data is not None:
                result[blob] = secret_kind_of_bytes(data)
    return result


def _worktree_blob(safe: SafeGit, path: str, blob: str) -> bytes | None:
    """The work tree's `path` when its git blob id (SHA-1 or SHA-256) starts with `blob`."""
    try:
        data = safe_files.read_bytes(safe.location.worktree, path, max_bytes=_MAX_WORKTREE_FILE)
    except (PolicyViolation, OSError, ValueError):
        return None
    if len(data) > _MAX_WORKTREE_FILE:
        return None
    raw = b"blob %d\0" % len(data) + data
    for algorithm in (hashlib.sha1, hashlib.sha256):
        if algorithm(raw).hexdigest().startswith(blob):
            return data
    return None

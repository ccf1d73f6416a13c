"""The secret gate around programs we did not write: an MCP tool's arguments and its results.

A filesystem or git MCP server reads what it is asked to read: `.env`, `id_rsa`, a committed
`deploy/.env.staging`. Our own tools refuse those by the path policy and by content; an MCP
server's tool gets the same checks here, on both sides of the call:

- `secret_argument(args, …)`: why a call is refused before it is made, or None. Every string
  argument (at any depth: `paths: [...]`, `{"file": {"uri": ...}}`) is read as a path, a
  `file://` URI or git's `REV:PATH`; one that names a secret location (`policy.deny_paths`,
  `.git/`), or an existing file (symlinks followed) that is at one or holds a credential file,
  refuses the call, whichever tool it is and whatever the argument is called.
- `hide_secret_text(text, …)`: a result as the model may see it. A text that is a credential
  file (a service-account JSON, a netrc, a kubeconfig, …; keys are left to redaction, which
  masks them whole and in part) is replaced by a note; in a patch (`git show`,
  `git diff`, in git's own form or GitPython's bare `---`/`+++` form) each file section of a
  secret location, or whose lines are a credential file, is replaced by a note. Redaction runs
  after this, on what is left (`tools/mcp/provider.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from deepseek_ls.policy.command_secrets import path_candidates
from deepseek_ls.policy.paths import secret_location
from deepseek_ls.policy.secret_files import HEAD_BYTES, secret_kind, secret_kind_of_bytes

_MAX_ARG = 4096  # longer strings are content (a file to write, a message), not paths


def secret_argument(args: Any, root: Path, deny_paths: list[str] | tuple[str, ...]) -> str | None:
    """Why a tool call whose arguments are `args` must not be made (a secret path is named),
    or None. Relative paths are taken from `root`, the server's working directory."""
    for where, value in _strings(args, "arguments"):
        if len(value) > _MAX_ARG or "\n" in value:
            continue
        for candidate in path_candidates(value):
            why = _secret_path(candidate, root, deny_paths)
            if why:
                return f"{where} names {value[:200]!r}: {why}"
    return None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where != "arguments" else f"argument {key!r}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def _secret_path(candidate: str, root: Path, deny_paths: list[str] | tuple[str, ...]) -> str | None:
    path = unquote(urlparse(candidate).path) if candidate.lower().startswith("file:") else candidate
    why = secret_location(path, deny_paths)
    if why:
        return why
    target = Path(path) if os.path.isabs(path) else root / path
    try:
        if not os.path.lexists(target):
            return None
        real = os.path.realpath(target)
    except (OSError, ValueError):
        return None
    why = secret_location(real, deny_paths)
    if why:
        return f"it leads to {real}: {why}"
    try:
        if not os.path.isfile(real):
            return None
        with open(real, "rb") as handle:
            kind = secret_kind_of_bytes(handle.read(HEAD_BYTES))
    except OSError:
        return None
    return f"the file looks like {kind}; secret files are never read" if kind else None


# -- results --------------------------------------------------------------------------------------

_GIT_SECTION = re.compile(r"^diff --(?:git|cc|combined) ")
_COMMIT = re.compile(r"^commit [0-9a-f]{7,64}\b")
_SIDE = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(.+?)\t?$")


def hide_secret_text(text: str, deny_paths: list[str] | tuple[str, ...]) -> tuple[str, list[str]]:
    """`text` (a tool's result) with credential files and the patch sections of secret files
    replaced by notes, and what was hidden."""
    shown, hidden = _hide_patch_sections(text, deny_paths) if "+++ " in text else (text, [])
    kind = secret_kind(shown)
    # A key in a result is masked by redaction (whole or in part), the rest of the text kept;
    # the other credential files (netrc, kubeconfig, a service account, ...) redaction cannot read.
    if kind and kind != "private key":
        return f"[deepseek-ls: the tool's result looks like {kind}; not shown (secret files never reach the model)]", [kind]
    return shown, hidden


def _hide_patch_sections(text: str, deny_paths: list[str] | tuple[str, ...]) -> tuple[str, list[str]]:
    out: list[str] = []
    hidden: list[str] = []
    for header, lines in _sections(text.splitlines(keepends=True)):
        if header is None:
            out += lines
            continue
        why, name = _section_secret(lines, deny_paths)
        if why is None:
            out += lines
            continue
        hidden.append(name)
        out.append(header if header.endswith("\n") else header + "\n")
        out.append(f"[deepseek-ls: the diff of {name} is hidden: {why}]\n")
    return "".join(out), hidden


def _sections(lines: list[str]) -> Iterator[tuple[str | None, list[str]]]:
    """(section header or None for other text, lines) in order. A section starts at
    `diff --git`, or at a `---` line followed by `+++` outside a section's header; it ends at
    the next section or commit header."""
    current: list[str] = []
    header: str | None = None
    in_header = False
    for i, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        bare_start = _GIT_SECTION.match(bare) is not None
        plain_start = (bare.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
                       and not in_header)
        if bare_start or plain_start or _COMMIT.match(bare):
            if current:
                yield header, current
            current = [line]
            header = line if (bare_start or plain_start) else None
            in_header = bare_start
            continue
        if bare.startswith("@@"):
            in_header = False
        current.append(line)
    if current:
        yield header, current


def _section_secret(lines: list[str], deny_paths: list[str] | tuple[str, ...]) -> tuple[str | None, str]:
    names = _section_names(lines)
    name = names[-1] if names else lines[0].strip()
    for path in names:
        why = secret_location(path, deny_paths)
        if why:
            return why, path
    body = "".join(line[1:] for line in lines if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))
    kind = secret_kind(body) if body else None
    return (f"its content looks like {kind}" if kind else None), name


def _section_names(lines: list[str]) -> list[str]:
    names = []
    first = lines[0].rstrip("\r\n")
    if _GIT_SECTION.match(first) and " b/" in first:
        rest = first.split(" ", 2)[2]
        names += [rest.split(" b/", 1)[0].removeprefix("a/"), rest.rsplit(" b/", 1)[1]]
    for line in lines[:8]:
        side = _SIDE.match(line.rstrip("\r\n"))
        if side and side.group(1) != "/dev/null":
            names.append(side.group(1))
    return names

"""Secret files recognised by what they contain, not by their name.

The deny-list (`policy.deny_paths`) knows where secrets usually live, but a
service-account key saved as `deploy/ci.json` or a kubeconfig called
`cluster.yaml` has no telling name. These checks look at a file's text (its
first `HEAD_BYTES`) for the shapes of credential files; a file that matches is
treated like a deny-listed one: never read by a tool, never indexed, never
searched, never patched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, NamedTuple

from deepseek_ls import multiscan
from deepseek_ls.policy import safe_files
from deepseek_ls.policy.errors import PolicyViolation

HEAD_BYTES = 64_000


# The one code point outside ASCII that `str.lower()` turns into an ASCII letter (a test
# checks all of Unicode): configparser, which reads ~/.aws/credentials, lowers option names.
_LOWERS_TO_ASCII = {"k": "\u212a"}  # KELVIN SIGN


def _lowered_as(word: str) -> str:
    """A pattern for every spelling of `word` that `str.lower()` turns into it."""
    return "".join(f"[{c.upper()}{c}{_LOWERS_TO_ASCII.get(c, '')}]" if c.isalpha() else re.escape(c) for c in word)


class _Shape(NamedTuple):
    kind: str
    needles: tuple[str, ...]  # ASCII: the pattern cannot match without one of them (few files hold one)
    pattern: re.Pattern[str]
    caseless: bool = False  # needles match in any ASCII letter case (bytes.lower(), Hyperscan's caseless)
    at_start: bool = False  # a needle must open the head
    # A match, if any, can start at the start of a line that holds a needle (or one of
    # `line_needles`, when given): the pattern is tried only there (a search tries every
    # position of the head).
    on_needle_line: bool = False
    line_needles: tuple[str, ...] = ()


# Each pattern is specific to a credential *file*, not to code that merely mentions
# the format. The index checks every file it reads, so the patterns run only on heads
# that pass their shape's gate (a needle), and the gates of all shapes are one scan of
# the head when Hyperscan is installed (`_GATES`).
_SHAPES: tuple[_Shape, ...] = (
    _Shape("private key", ("PRIVATE KEY",),
           re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*(?:\\n|\n)\s*[A-Za-z0-9+/=]{16}")),
    _Shape("private key", ("PuTTY-User-Key-File-",), re.compile(r"^PuTTY-User-Key-File-\d+:", re.M)),
    _Shape("gcloud credentials", ('"type"',),
           re.compile(r"\"type\"\s*:\s*\"(?:service_account|authorized_user|external_account|impersonated_service_account)\"")),
    _Shape(
        "kubeconfig", ("kind:",),
        re.compile(r"(?ms)^kind:\s*[\"']?Config[\"']?\s*$.*^\s*(?:users|contexts|clusters):"
                   r"|^\s*(?:users|contexts|clusters):.*^kind:\s*[\"']?Config[\"']?\s*$"),
    ),
    _Shape("docker credentials", ('"auths"',),
           re.compile(r"\"auths\"\s*:\s*\{[^}]*\"auth\"\s*:\s*\"[A-Za-z0-9+/=]{8,}\"", re.S)),
    # A match starts at a line whose first word is `machine` or `default` (after blanks,
    # which may span lines: the match from that word's own line start is a match too).
    _Shape("netrc", ("password",),
           re.compile(r"(?m)^\s*(?:machine\s+\S+|default)\b[^\n]*(?:\n[^\n]*){0,3}?\bpassword\s+\S+"),
           on_needle_line=True, line_needles=("machine", "default")),
    # The name as configparser reads it (any letter case); the gate stops before the `k`,
    # so it holds in bytes as in text. Not re.I: that also folds `ſ` into `s`.
    _Shape("aws credentials", ("aws_secret_access_",),
           re.compile(rf"(?m)^\s*{_lowered_as('aws_secret_access_key')}\s*=\s*\S{{16,}}"), caseless=True),
    _Shape("npm credentials", ("_auth", "_password"),
           re.compile(r"(?m)^\s*(?://\S+/:)?_(?:authToken|auth|password)\s*=\s*\S{8,}"), on_needle_line=True),
    _Shape("git credentials", ("http",),  # the pattern is anchored at the start
           re.compile(r"(?m)\Ahttps?://[^:/\s@]+:[^@\s]{6,}@\S+\s*$"), at_start=True),
)


def _text_gate(shape: _Shape, head: str, lowered: list[str]) -> bool:
    if shape.at_start:
        return head.startswith(shape.needles)
    if shape.caseless:
        if not lowered:
            lowered.append(head.lower())
        head = lowered[0]
    return any(needle in head for needle in shape.needles)


# Each shape's needles as bytes, encoded once (a build gates every file it reads).
_BYTE_NEEDLES = {shape: tuple(needle.encode() for needle in shape.needles) for shape in _SHAPES}


def _bytes_gate(shape: _Shape, head: bytes, lowered: list[bytes]) -> bool:
    needles = _BYTE_NEEDLES[shape]
    if shape.at_start:
        return head.startswith(needles)
    if shape.caseless:
        if not lowered:
            lowered.append(head.lower())  # ASCII letters only, as the pattern's re.A
        head = lowered[0]
    return any(needle in head for needle in needles)


def _gate_patterns() -> list[tuple[bytes, int, int]]:
    """Every needle of every shape (its index as the id) for one Hyperscan pass; a
    `startswith` gate needs no scan."""
    return [
        (re.escape(needle).encode(), index, multiscan.SINGLEMATCH | (multiscan.CASELESS if shape.caseless else 0))
        for index, shape in enumerate(_SHAPES) if not shape.at_start
        for needle in shape.needles
    ]


_GATES = multiscan.Lazy(_gate_patterns, what="secret-file gates")


def _note_gate(index: int, _start: int, _to: int, _flags: int, hits: set[int]) -> None:
    hits.add(index)


def engine() -> str:
    """Which engine gates byte heads: `hyperscan` (one pass for every needle), or
    `python` (a substring pass per needle)."""
    return "hyperscan" if _GATES.get() is not None else "python"


def _confirm(head: str, shapes: Iterable[_Shape]) -> str | None:
    for shape in shapes:
        if _matches(shape, head):
            return shape.kind
    return None


def _matches(shape: _Shape, head: str) -> bool:
    if not shape.on_needle_line:
        return shape.pattern.search(head) is not None
    tried: set[int] = set()
    for needle in shape.line_needles or shape.needles:
        at = head.find(needle)
        while at >= 0:
            line_start = head.rfind("\n", 0, at) + 1
            if line_start not in tried:
                if shape.pattern.match(head, line_start):
                    return True
                tried.add(line_start)
            at = head.find(needle, at + 1)
    return False


def secret_kind(text: str) -> str | None:
    """What kind of credential file `text` is (its head is enough), or None."""
    head = text[:HEAD_BYTES]
    lowered: list[str] = []
    return _confirm(head, (shape for shape in _SHAPES if _text_gate(shape, head, lowered)))


def secret_kind_of_bytes(data: bytes) -> str | None:
    """`secret_kind` of a file's bytes: its first `HEAD_BYTES` bytes, decoded only when
    a gate holds (the needles are ASCII, so they are found in the bytes as in the text)."""
    head = data[:HEAD_BYTES]
    scanner = _GATES.get()
    if scanner is not None:
        hits: set[int] = set()
        scanner.scan(head, _note_gate, hits)
        shapes = [shape for index, shape in enumerate(_SHAPES)
                  if index in hits or (shape.at_start and head.startswith(_BYTE_NEEDLES[shape]))]
    else:
        lowered: list[bytes] = []
        shapes = [shape for shape in _SHAPES if _bytes_gate(shape, head, lowered)]
    return _confirm(head.decode("utf-8", "replace"), shapes) if shapes else None


def check_not_secret(rel: str, text: str) -> None:
    """Raise `PolicyViolation` when `text` (the content of `rel`) is a credential file."""
    kind = secret_kind(text)
    if kind is not None:
        raise PolicyViolation(rel, "secret_content", f"the file's content looks like {kind}; secret files are never read")


def file_is_secret(root: Path, rel: str) -> bool:
    """Whether workspace file `rel` must stay hidden for its content (or cannot be opened safely:
    a hard link, a link swapped in). Unreadable files are not secret (there is nothing to show)."""
    try:
        head = safe_files.read_bytes(root, rel, max_bytes=HEAD_BYTES)
    except PolicyViolation:
        return True
    except OSError:
        return False
    return secret_kind_of_bytes(head) is not None

"""Find where a hunk belongs in the base text when its line numbers are wrong.

Models miscount lines. A hunk is placed by its old text (context + removed
lines): first byte-exact, then ignoring line endings, then ignoring
whitespace, then reading `[REDACTED:rule]` placeholders (the model saw the
file through the secret redactor) as "any secret value"; among several
matches the one nearest the claimed position wins,
and hunks keep their order without overlapping. A hunk found nowhere is
reported with the nearest candidate (line, similarity, first differing line) so
the model, or a person, can fix it.

A placeholder must never be written into a file, and never be turned back into
the secret it stands for: a hunk whose added lines carry one is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from deepseek_ls.patch.model import Located, PatchError
from deepseek_ls.patch.parse import ParsedHunk


@dataclass
class Placement:
    start: int  # 0-based index into base lines
    located: Located
    old_seq: list[str]  # the base's own lines, as matched
    new_seq: list[str]  # the hunk's new lines, rebuilt on the base's lines and line endings


_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_-]+\]")


@dataclass
class _Secrets:
    """The values `[REDACTED:rule]` placeholders stood for in the matched lines."""

    values: dict[str, set[str]] = field(default_factory=dict)

    def add(self, placeholder: str, value: str) -> None:
        self.values.setdefault(placeholder, set()).add(value)


def _eol(line: str) -> str:
    return line.rstrip("\r\n")


def _trailing(line: str) -> str:
    return line.rstrip()


def _ws(line: str) -> str:
    return " ".join(line.split())


# Typographic punctuation models write for ASCII (as Codex's seek_sequence normalises it).
_PUNCT = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
    **dict.fromkeys("\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "),
})


def _unicode(line: str) -> str:
    return _ws(line.translate(_PUNCT))


# The ladder, strictest first: a hunk is placed by the first pass that finds it.
PASSES: list[tuple[Located, Callable[[str], str]]] = [
    ("exact", lambda s: s),
    ("eol", _eol),
    ("trailing_ws", _trailing),
    ("whitespace", _ws),
    ("unicode", _unicode),
]


def locate_hunk(base: list[str], hunk: ParsedHunk, *, hint: int, floor: int) -> Placement:
    """Place `hunk` in `base` at or after index `floor`, nearest to `hint`.

    Several places matching equally well are ambiguous and refused: two equally near the
    claimed line, or any two when the hunk header carried no line numbers."""
    old = hunk.old_seq
    if not old:
        # Pure insertion: only the position can be trusted.
        start = min(max(hint, floor), len(base))
        return Placement(start, "exact", [], _rebuild(hunk, [], base, _Secrets()))
    for mode, norm in PASSES:
        want = [norm(x) for x in old]
        have = [norm(x) for x in base]
        starts = [
            i
            for i in range(floor, len(have) - len(want) + 1)
            if have[i] == want[0] and have[i : i + len(want)] == want
        ]
        if starts:
            start = _unambiguous(starts, hint, hunk)
            # "offset" means other line numbers than the header said; a header without numbers said none.
            located: Located = mode if mode != "exact" or start == hint or not hunk.numbered else "offset"
            matched = base[start : start + len(old)]
            return Placement(start, located, matched, _rebuild(hunk, matched, base, _Secrets()))
    if any(_PLACEHOLDER.search(x) for x in old):
        placed = _locate_redacted(base, hunk, hint=hint, floor=floor)
        if placed is not None:
            return placed
    raise PatchError(_not_found_message(base, hunk, hint, floor))


def _unambiguous(starts: list[int], hint: int, hunk: ParsedHunk) -> int:
    ranked = sorted(starts, key=lambda i: (abs(i - hint), i))
    if len(ranked) == 1 or (hunk.numbered and abs(ranked[0] - hint) < abs(ranked[1] - hint)):
        return ranked[0]
    where = ", ".join(str(i + 1) for i in ranked[:5])
    why = "the hunk header has no line numbers" if not hunk.numbered else f"lines {ranked[0] + 1} and {ranked[1] + 1} are equally near the claimed line {hint + 1}"
    raise PatchError(
        f"hunk @@ -{hunk.old_start},{hunk.old_lines} @@ is ambiguous: its old lines occur at lines {where} and {why}; "
        "add context lines that occur only once, or give the right line numbers"
    )


def _locate_redacted(base: list[str], hunk: ParsedHunk, *, hint: int, floor: int) -> Placement | None:
    """Whitespace-insensitive match where each placeholder stands for one secret token."""
    old = hunk.old_seq
    patterns = []
    for line in old:
        parts = _PLACEHOLDER.split(_ws(line))
        names = _PLACEHOLDER.findall(_ws(line))
        patterns.append((re.compile(r"(\S+)".join(re.escape(p) for p in parts) + r"\Z"), names))
    have = [_ws(x) for x in base]
    found: list[tuple[int, _Secrets]] = []
    for i in range(floor, len(have) - len(old) + 1):
        secrets = _Secrets()
        for (rx, names), line in zip(patterns, have[i : i + len(old)]):
            m = rx.match(line)
            if m is None:
                break
            for name, value in zip(names, m.groups()):
                secrets.add(name, value)
        else:
            found.append((i, secrets))
    if not found:
        return None
    start, secrets = min(found, key=lambda f: (abs(f[0] - hint), f[0]))
    matched = base[start : start + len(old)]
    return Placement(start, "redacted", matched, _rebuild(hunk, matched, base, secrets))


def _rebuild(hunk: ParsedHunk, matched: list[str], base: list[str], secrets: _Secrets) -> list[str]:
    """New lines with context taken from the base verbatim and added lines in the base's line ending."""
    crlf = _uses_crlf(base)
    base_text = "".join(base)
    out: list[str] = []
    k = 0
    for tag, text in hunk.body:
        if tag == "+":
            text = _restore_secrets(text, secrets, base_text)
            if crlf and text.endswith("\n") and not text.endswith("\r\n"):
                text = text[:-1] + "\r\n"
            out.append(text)
        else:
            if tag == " ":
                out.append(matched[k] if k < len(matched) else text)
            k += 1
    # A base line without a final newline that is no longer last (the model added
    # lines after it without a "\ No newline" marker) needs one, or lines would join.
    eol = "\r\n" if crlf else "\n"
    for i in range(len(out) - 1):
        if not out[i].endswith("\n"):
            out[i] += eol
    return out


def _restore_secrets(text: str, secrets: _Secrets, base_text: str) -> str:
    """An added line may not carry a placeholder: mapping it back to the secret it stood for
    would let a model copy a secret it never saw to wherever it likes (a log line, a test
    that prints it, another file), so such a hunk is refused."""

    def refuse(m: re.Match[str]) -> str:
        placeholder = m.group(0)
        if placeholder in base_text:  # the file really contains this text
            return placeholder
        raise PatchError(
            f"an added line contains {placeholder}, a redaction placeholder; it is never turned back "
            "into the secret it stands for. Keep lines with secret values as unchanged context "
            "(leave them out of the removed and added lines)"
        )

    return _PLACEHOLDER.sub(refuse, text)


def _uses_crlf(base: list[str]) -> bool:
    crlf = sum(1 for line in base if line.endswith("\r\n"))
    return crlf > 0 and crlf * 2 >= sum(1 for line in base if line.endswith("\n"))


def _not_found_message(base: list[str], hunk: ParsedHunk, hint: int, floor: int) -> str:
    old = [_ws(x) for x in hunk.old_seq]
    have = [_ws(x) for x in base]
    claimed = hunk.old_start
    head = f"hunk @@ -{claimed},{hunk.old_lines} @@ does not match the file"
    if not base:
        return f"{head}: the file is empty"
    best_i, best_score = 0, -1
    last = max(len(have) - len(old), 0)
    for i in range(0, last + 1):
        score = sum(1 for a, b in zip(old, have[i : i + len(old)]) if a == b)
        if score > best_score or (score == best_score and abs(i - hint) < abs(best_i - hint)):
            best_i, best_score = i, score
    window = base[best_i : best_i + len(old)]
    detail = ""
    for n, (want, got) in enumerate(zip(hunk.old_seq, window)):
        if _ws(want) != _ws(got):
            detail = (
                f"; first difference at line {best_i + n + 1}: expected {_eol(want)!r}, found {_eol(got)!r}"
            )
            break
    else:
        if len(window) < len(old):
            detail = f"; the file ends after line {len(base)}"
    excerpt = "".join(f"{best_i + n + 1:>5} | {_eol(line)}\n" for n, line in enumerate(base[best_i : best_i + len(old) + 2]))
    return (
        f"{head}; nearest candidate at line {best_i + 1} "
        f"({best_score}/{len(old)} lines match{', before the previous hunk' if best_i < floor else ''}){detail}"
        + (f"; did you mean these lines of the file?\n{excerpt}" if excerpt and best_score else "")
    )

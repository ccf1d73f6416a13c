"""Importing a secret-rule set written for RE2 (gitleaks, betterleaks, Kingfisher) into Python.

Used by `scripts/update-secret-rules.py` when the rule data (`policy/secret_rules.json`) is
regenerated, and by its tests; redaction itself only loads the result.

- `to_python(pattern)`: the same language in Python's `re` syntax. RE2 lets `(?i)` appear
  mid-pattern, applying to the rest of its group (every later alternative included); Python
  wants flags scoped, so `a(?i)b|c` becomes `a(?i:b)|(?i:c)`. `\\z` is `\\Z`; POSIX classes
  (`[[:alnum:]]`) are spelled out; `[`, `&`, `~`, `|` and a second `-` inside a class are
  escaped (Python reserves them for set operations). Patterns are compiled with `re.ASCII`,
  as RE2's `\\w`, `\\d`, `\\s` and `\\b` are ASCII.
- `needles(pattern)`: lower-case ASCII literals, one of which every match contains (in any
  letter case), or () when none is long enough to be worth a gate: redaction runs a rule's
  regex only on text where one of its needles is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812
from re import _parser as sre  # type: ignore[attr-defined]

FLAGS = re.ASCII

_POSIX = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
    "space": r"\t\n\v\f\r ", "xdigit": "0-9a-fA-F", "word": r"\w", "blank": r" \t",
    "punct": r"!-/:-@\[-`{-~", "cntrl": r"\x00-\x1f\x7f", "print": r" -~", "graph": r"!-~",
}
_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def to_python(pattern: str) -> str:
    """`pattern` (RE2 syntax) in Python `re` syntax (to compile with `FLAGS`)."""
    out: list[str] = []
    # One entry per open group: the scoped-flag groups opened inside it and not yet closed.
    pending: list[list[str]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            esc = pattern[i:i + 2]
            out.append(r"\Z" if esc == r"\z" else esc)
            i += 2
        elif ch == "[":
            i = _char_class(pattern, i, out)
        elif ch == "(":
            flags = _INLINE_FLAGS.match(pattern, i)
            if flags and (i > 0 or pending != [[]]):
                if "U" in flags.group(1):
                    raise ValueError("the ungreedy flag (?U) has no Python equivalent")
                out.append(f"(?{flags.group(1)}:")
                pending[-1].append(flags.group(1))
                i = flags.end()
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                out.append("(?P<")  # a named group, as Go's regexp also spells it
                i += 3
            else:
                out.append(ch)
                i += 1
            pending.append([])
        elif ch == ")":
            out.append(")" * len(pending.pop()))
            out.append(ch)
            i += 1
        elif ch == "|":
            # A scoped flag ends with its alternative and applies again to the next one.
            out.append(")" * len(pending[-1]) + "|" + "".join(f"(?{f}:" for f in pending[-1]))
            i += 1
        else:
            out.append(ch)
            i += 1
    out.append(")" * len(pending[0]))
    return "".join(out)


def _char_class(pattern: str, i: int, out: list[str]) -> int:
    """Copy the class starting at `pattern[i] == "["`; returns the index after its `]`."""
    out.append("[")
    i += 1
    if pattern.startswith("^", i):
        out.append("^")
        i += 1
    first = True
    prev = ""
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]" and not first:
            out.append("]")
            return i + 1
        first = False
        if ch == "\\":
            out.append(pattern[i:i + 2])
            prev = pattern[i:i + 2]
            i += 2
            continue
        posix = re.match(r"\[:(\^?)([a-z]+):\]", pattern[i:])
        if posix:
            if posix.group(1) or posix.group(2) not in _POSIX:
                raise ValueError(f"unsupported POSIX class {posix.group(0)!r}")
            out.append(_POSIX[posix.group(2)])
            i += posix.end()
            prev = ""
            continue
        if ch in "[&~|" or (ch == "-" and prev == "-"):
            out.append("\\" + ch)
        else:
            out.append(ch)
        prev = ch
        i += 1
    raise ValueError("unterminated character class")


# -- required literals ----------------------------------------------------------------------------

MIN_NEEDLE = 2  # a gate that opens often ("sk") costs no more than none; one character ("=") is none
Needles = frozenset[str] | None  # None: no literal is required


def needles(pattern: str) -> tuple[str, ...]:
    """Sorted lower-case literals, one of which is in every match of `pattern` (any letter case);
    () when no set of literals of at least `MIN_NEEDLE` characters is required."""
    found = _seq(sre.parse(pattern, FLAGS))
    if not found or min(len(s) for s in found) < MIN_NEEDLE:
        return ()
    return tuple(sorted(found))


def _seq(items: list) -> Needles:
    """The best required set of a sequence: the strings its runs of exactly-known parts spell
    (`a(?:kia|sia)` is {akia, asia}), and its other parts' own sets."""
    best: Needles = None
    run: frozenset[str] = frozenset({""})

    def consider(candidate: Needles) -> None:
        nonlocal best
        if candidate and all(candidate) and (best is None or _score(candidate) > _score(best)):
            best = candidate

    for op, av in items:
        exact = _exact(op, av)
        if exact is not None and len(run) * len(exact) <= _MAX_SET:
            run = frozenset(a + b for a in run for b in exact)
            continue
        consider(run)
        if exact is None:
            # The run followed by how this part starts: `A(?:3T[A-Z0-9]|KIA)` needs "a3t" or "akia".
            starts = _prefixes(op, av)
            if starts is not None and len(run) * len(starts) <= _MAX_SET:
                consider(frozenset(a + b for a in run for b in starts))
            consider(_node(op, av))
        run = exact if exact is not None else frozenset({""})
    consider(run)
    return best


_MAX_SET = 64  # needles of one rule


def _score(candidate: frozenset[str]) -> tuple[int, int]:
    return (min(len(s) for s in candidate), -len(candidate))


def _exact(op: object, av: object) -> frozenset[str] | None:
    """Every string (lower case, ASCII) this node can match, when there are few; else None."""
    if op is C.LITERAL and isinstance(av, int) and av < 128:
        return frozenset({chr(av).lower()})
    if op is C.IN and isinstance(av, list) and all(o is C.LITERAL and v < 128 for o, v in av):
        chars = frozenset(chr(v).lower() for _, v in av)
        return chars if len(chars) <= 3 else None
    if op is C.SUBPATTERN:
        return _exact_seq(av[3])
    if op is C.BRANCH:
        return _union(av[1], _exact_seq)
    if op is C.MAX_REPEAT and av[0] == av[1] == 1:
        return _exact_seq(av[2])
    return None


def _prefixes(op: object, av: object) -> frozenset[str] | None:
    """Strings one of which every match of this node starts with (lower case), or None."""
    exact = _exact(op, av)
    if exact is not None:
        return exact
    if op is C.SUBPATTERN:
        return _prefix_seq(av[3])
    if op is C.BRANCH:
        return _union(av[1], _prefix_seq)
    return None


def _union(alternatives: list, of: Callable[[list], frozenset[str] | None]) -> frozenset[str] | None:
    """The strings of every alternative (by `of`), or None when one has none or they are many."""
    out: set[str] = set()
    for alternative in alternatives:
        strings = of(alternative)
        if strings is None:
            return None
        out |= strings
    return frozenset(out) if len(out) <= _MAX_SET else None


def _prefix_seq(items: list) -> frozenset[str] | None:
    out = frozenset({""})
    for op, av in items:
        exact = _exact(op, av)
        if exact is None:
            starts = _prefixes(op, av)
            if starts is not None and len(out) * len(starts) <= _MAX_SET:
                out = frozenset(a + b for a in out for b in starts)
            break
        if len(out) * len(exact) > _MAX_SET:
            break
        out = frozenset(a + b for a in out for b in exact)
    return out if all(out) else None


def _exact_seq(items: list) -> frozenset[str] | None:
    out = frozenset({""})
    for op, av in items:
        strings = _exact(op, av)
        if strings is None or len(out) * len(strings) > _MAX_SET:
            return None
        out = frozenset(a + b for a in out for b in strings)
    return out


def _node(op: object, av: object) -> Needles:
    if op is C.SUBPATTERN:
        return _seq(av[3])
    if op is C.BRANCH:
        out: set[str] = set()
        for alternative in av[1]:
            found = _seq(alternative)
            if not found:
                return None
            out |= found
        return frozenset(out)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, _high, body = av
        return _seq(body) if low >= 1 else None
    if op is C.ATOMIC_GROUP:
        return _seq(av)
    return None

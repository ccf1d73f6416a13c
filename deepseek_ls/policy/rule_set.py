"""The maintained secret-rule set as span detectors for redaction (`policy/redact.py`).

`secret_rules.json` beside this file is data generated from a pinned, maintained rule set
(betterleaks', gitleaks' successor, and OSV-SCALIBR's detectors: `scripts/update-secret-rules.py`
says how and which rules are left out). Each rule has a Python pattern, the group that holds
the secret (-1: the first group that matched) and needles: lower-case literals one of which
every match contains.

A rule's regex runs only on text holding one of its needles. The needles of all rules are found
in one pass: Hyperscan where it is installed (x86_64 Linux), an Aho-Corasick automaton
(pyahocorasick) on the other platforms, substring tests if neither is there; all give the same
set of rules to run (a test checks). Loaded on first use: a command that redacts
nothing does not pay for ~440 compiled patterns.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepseek_ls import multiscan

from re import _parser as sre  # type: ignore[attr-defined]  # the longest match of a rule

DATA = Path(__file__).with_name("secret_rules.json")
Span = tuple[int, int, str]


@dataclass
class DataRule:
    id: str
    family: str  # the mask's name: [REDACTED:<family>]
    pattern: str
    flags: int
    group: int  # 0: the whole match; -1: the first group that matched; n: group n
    needles: tuple[str, ...]
    _regex: re.Pattern[str] | None = None
    _width: int = -1

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern, self.flags)
            high = sre.parse(self.pattern, self.flags).getwidth()[1]
            self._width = high if high < _UNBOUNDED else -1
        return self._regex

    @property
    def width(self) -> int:
        """The longest match, or -1 when unbounded."""
        self.regex  # noqa: B018 - computed with the regex
        return self._width


_UNBOUNDED = 1 << 16  # sre reports an unbounded repeat as MAXREPEAT; a window this wide saves nothing
_CROWDED = 128  # a needle more often than once in this many characters is "everywhere"
_MARGIN = 8  # characters beyond a window's edges, so \b and the rule's own context see the neighbours


class RuleSet:
    def __init__(self, rules: list[DataRule]) -> None:
        self.rules = rules
        self._always = [i for i, rule in enumerate(rules) if not rule.needles]
        self._by_needle: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            for needle in rule.needles:
                self._by_needle.setdefault(needle, []).append(i)
        self._needles = list(self._by_needle)
        self._scan = multiscan.Lazy(self._gate_patterns, what="secret-rule needles")
        self._aho: Any = None  # the Aho-Corasick automaton, built on first use; False: not installed
        self.prefer: str | None = None

    def _gate_patterns(self) -> list[tuple[bytes, int, int]]:
        return [(re.escape(needle).encode(), n, 0) for n, needle in enumerate(self._needles)]

    def engine(self) -> str:
        """Which engine finds the needles: `hyperscan` (x86_64 Linux), `aho-corasick`
        (pyahocorasick, the other platforms), or `python` (substring tests, when neither is
        installed). `prefer` names one to use instead of the first available (tests)."""
        if self.prefer is not None:
            return self.prefer
        if self._scan.get() is not None:
            return "hyperscan"
        return "aho-corasick" if self._automaton() is not None else "python"

    def _automaton(self) -> Any:
        if self._aho is None:
            try:
                import ahocorasick
            except ImportError:
                self._aho = False
            else:
                automaton = ahocorasick.Automaton()
                for n, needle in enumerate(self._needles):
                    automaton.add_word(needle, n)
                automaton.make_automaton()
                self._aho = automaton
        return self._aho or None

    def hits(self, lowered: str) -> dict[int, list[int]]:
        """For each needle of `lowered` (its index), where its occurrences end (in characters
        when `lowered` is ASCII; otherwise the positions are not used); [] for a needle met so
        often that its rules search the whole text anyway."""
        engine = self.engine()
        found: dict[int, list[int]] = {}
        if engine == "hyperscan":
            self._scan.get().scan(lowered.encode("utf-8", "surrogatepass"), _note, found)
            return found
        if engine == "aho-corasick":
            for last, n in self._automaton().iter(lowered):
                found.setdefault(n, []).append(last + 1)
            return found
        crowded = len(lowered) // _CROWDED
        for n, needle in enumerate(self._needles):
            if needle not in lowered:
                continue
            if lowered.count(needle) > crowded:
                found[n] = []  # met everywhere: its rules search the whole text, no need for where
                continue
            at = lowered.find(needle)
            while at >= 0:
                found.setdefault(n, []).append(at + len(needle))
                at = lowered.find(needle, at + 1)
        return found

    def gated(self, lowered: str) -> list[int]:
        """Indices of the rules whose regex must run on the text `lowered` is the lower case of."""
        return sorted(self._windows(lowered, exact=False))

    def _windows(self, lowered: str, *, exact: bool) -> dict[int, list[tuple[int, int]] | None]:
        """Rule index -> the windows of text its regex must search (None: all of it)."""
        out: dict[int, list[tuple[int, int]] | None] = {i: None for i in self._always}
        for n, ends in self.hits(lowered).items():
            needle = self._needles[n]
            for i in self._by_needle[needle]:
                if not exact:
                    out.setdefault(i, None)
                    continue
                reach = self.rules[i].width + _MARGIN
                spans = out.get(i, [])
                # Unbounded, or a needle met everywhere ("pat" in code about patterns): one
                # search of the whole text costs less than a search per window.
                if (reach <= _MARGIN or spans is None or not ends
                        or (len(spans) + len(ends)) * 2 * reach > len(lowered)):
                    out[i] = None
                    continue
                spans.extend((max(0, end - len(needle) - reach), end + reach) for end in ends)
                out[i] = spans
        return out

    def spans(self, text: str, lowered: str) -> list[Span]:
        """Where the rules find secrets in `text` (`lowered`: its lower case, computed once by
        the caller for every detector). A rule's regex searches only around its needles'
        occurrences, as far as its longest match reaches (the whole text for unbounded rules,
        or when offsets in the lower case are not offsets in `text`)."""
        aligned = text.isascii() and len(lowered) == len(text)
        out: list[Span] = []
        for i, windows in self._windows(lowered, exact=aligned).items():
            rule = self.rules[i]
            for start, end in _merged(windows) if windows else [(0, len(text))]:
                for m in rule.regex.finditer(text, start, end):
                    s, e = _secret_span(m, rule.group)
                    if e > s:
                        out.append((s, e, rule.family))
        return out


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _note(index: int, _start: int, to: int, _flags: int, found: dict[int, list[int]]) -> None:
    found.setdefault(index, []).append(to)


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int]:
    if group > 0 and m.group(group) is not None:
        return m.span(group)
    if group < 0:
        for n in range(1, (m.re.groups or 0) + 1):
            if m.group(n):
                return m.span(n)
    return m.span()


def load(path: Path = DATA) -> RuleSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    flags = re.ASCII if data.get("regex_flags") == "ASCII" else 0
    return RuleSet([
        DataRule(r["id"], r["family"], r["pattern"], flags, int(r["group"]), tuple(r["needles"]))
        for r in data["rules"]
    ])


_LOADED: list[RuleSet] = []
_LOCK = threading.Lock()


def rule_set() -> RuleSet:
    """The shipped rule set, loaded and compiled on first use (once per process)."""
    if not _LOADED:
        with _LOCK:
            if not _LOADED:
                _LOADED.append(load())
    return _LOADED[0]

"""The change under review: a unified diff read into files and hunks, what the model may comment on.

`ChangeSet.from_diff` parses with the patch layer's parser (unidiff, miscounted headers
recounted) and keeps, per file, its hunks and the lines a finding may name: the new
side's lines the hunks show (context included), or the old side's for a deleted file.
Files the model must not see are set aside with the reason (`skipped`): a binary file,
a path the policy denies or whose content is a credential file, a section git's secret
gate already hid. `chunks` groups the files into the pieces one model call reviews:
the whole diff when it fits `chunk_tokens`, else file by file, a file too large for one
call hunk by hunk (a hunk too large, such as a long new file, in halves); only a single line
longer than a call is skipped, and said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Literal

from deepseek_ls.llm.tokens import EstimateCounter
from deepseek_ls.patch.model import PatchError
from deepseek_ls.patch.parse import ParsedFile, ParsedHunk, parse_diff

FileStatus = Literal["added", "modified", "deleted", "renamed"]
_STATUS: dict[str, FileStatus] = {"add": "added", "modify": "modified", "delete": "deleted", "rename": "renamed"}
_SECTION = re.compile(r"^diff --git ", re.MULTILINE)
_HIDDEN = re.compile(r"^\[deepseek-ls: the diff of (.+?) is hidden: (.+)\]$", re.MULTILINE)
_COUNTER = EstimateCounter()


class NotADiff(ValueError):
    """The text given for review holds no unified diff; the message says what was wrong."""


@dataclass
class Skipped:
    file: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "reason": self.reason}


@dataclass
class ReviewedFile:
    path: str
    status: FileStatus
    old_path: str | None
    hunks: list[ParsedHunk]

    @property
    def changed_lines(self) -> int:
        return sum(1 for h in self.hunks for tag, _ in h.body if tag != " ")

    @property
    def side(self) -> Literal["new", "old"]:
        """Which side's line numbers findings use: a deleted file has only its old side."""
        return "old" if self.status == "deleted" else "new"

    def numbered(self, hunk: ParsedHunk) -> list[tuple[int | None, str, str]]:
        """(line number on `side` or None, tag, text) for each line of `hunk`."""
        old, new = hunk.old_start, hunk.new_start
        out: list[tuple[int | None, str, str]] = []
        for tag, text in hunk.body:
            text = text.rstrip("\r\n")
            if tag == " ":
                out.append((new if self.side == "new" else old, tag, text))
                old, new = old + 1, new + 1
            elif tag == "+":
                out.append((new, tag, text))
                new += 1
            else:
                out.append((old if self.side == "old" else None, tag, text))
                old += 1
        return out

    def lines(self) -> dict[int, str]:
        """The text of every line a finding may name, by its number on `side`."""
        return {n: text for h in self.hunks for n, _, text in self.numbered(h) if n is not None}

    def spans(self) -> list[tuple[int, int]]:
        """The line ranges the hunks show; a hunk that only removes lines is the line where they were."""
        out = []
        for h in self.hunks:
            numbers = [n for n, _, _ in self.numbered(h) if n is not None]
            if numbers:
                out.append((min(numbers), max(numbers)))
            else:
                at = max(1, h.new_start if self.side == "new" else h.old_start)
                out.append((at, at))
        return out

    def covers(self, start: int, end: int) -> bool:
        return any(start <= hi and end >= lo for lo, hi in self.spans())

    def summary(self) -> dict[str, object]:
        return {"file": self.path, "status": self.status, "old_path": self.old_path,
                "changed_lines": self.changed_lines, "hunks": len(self.hunks)}


@dataclass
class Chunk:
    """What one model call reviews: whole files, or some hunks of one large file."""

    files: list[ReviewedFile]
    part: tuple[int, int] | None = None  # (n, of): hunks of one file split over several calls

    @property
    def changed_lines(self) -> int:
        return sum(f.changed_lines for f in self.files)

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


@dataclass
class ChangeSet:
    files: list[ReviewedFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def changed_lines(self) -> int:
        return sum(f.changed_lines for f in self.files)

    def file(self, path: str) -> ReviewedFile | None:
        return next((f for f in self.files if f.path == path), None)

    @classmethod
    def from_diff(cls, text: str, *, allowed: Callable[[str], str | None]) -> "ChangeSet":
        """Parse `text`; `allowed(path)` returns why a file must not be shown to the model, or None.

        Raises `NotADiff` when `text` holds no unified diff at all."""
        changes = cls()
        text = _drop_hidden_sections(text, changes.skipped)
        if not text.strip():
            return changes
        try:
            parsed = parse_diff(text)
        except PatchError as exc:
            raise NotADiff(f"not a unified diff: {exc}") from None
        for pf in parsed:
            changes._add(pf, allowed)
        return changes

    def _add(self, pf: ParsedFile, allowed: Callable[[str], str | None]) -> None:
        path = pf.path
        if pf.binary:
            self.skipped.append(Skipped(path, "binary file: not reviewed"))
            return
        if not pf.hunks:
            self.skipped.append(Skipped(path, "no text change (a mode change or an empty file)"))
            return
        refused = allowed(path)
        if refused is None:
            from deepseek_ls.policy.secret_files import secret_kind

            kind = secret_kind("".join(t for h in pf.hunks for tag, t in h.body if tag != "-"))
            refused = f"its content looks like {kind}" if kind else None
        if refused is not None:
            self.skipped.append(Skipped(path, f"not sent to the model: {refused}"))
            return
        self.files.append(ReviewedFile(path, _STATUS[pf.kind], pf.old_path if pf.kind == "rename" else None, pf.hunks))

    def chunks(self, chunk_tokens: int, render: Callable[[Chunk], str]) -> tuple[list[Chunk], list[Skipped]]:
        """Pieces of at most `chunk_tokens` (estimated from `render(chunk)`), and the hunks too large
        for any call. The whole change when it fits; else whole files packed in order; a file too
        large alone is split between its hunks."""
        whole = Chunk(list(self.files))
        if self.files and _tokens(render(whole)) <= chunk_tokens:
            return [whole], []
        chunks: list[Chunk] = []
        too_large: list[Skipped] = []
        current: list[ReviewedFile] = []
        for f in self.files:
            if _tokens(render(Chunk([f]))) > chunk_tokens:
                chunks += _split_file(f, chunk_tokens, render, too_large)
                continue
            if current and _tokens(render(Chunk([*current, f]))) > chunk_tokens:
                chunks.append(Chunk(current))
                current = []
            current.append(f)
        if current:
            chunks.append(Chunk(current))
        return chunks, too_large


def _split_file(f: ReviewedFile, chunk_tokens: int, render: Callable[[Chunk], str], too_large: list[Skipped]) -> list[Chunk]:
    def fits(hunks: list[ParsedHunk]) -> bool:
        return _tokens(render(Chunk([ReviewedFile(f.path, f.status, f.old_path, hunks)]))) <= chunk_tokens

    pieces: list[ParsedHunk] = []
    for hunk in f.hunks:
        pieces += _fitting(hunk, fits, f, too_large)
    groups: list[list[ParsedHunk]] = []
    for piece in pieces:
        if groups and fits([*groups[-1], piece]):
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return [Chunk([ReviewedFile(f.path, f.status, f.old_path, g)], part=(i + 1, len(groups)))
            for i, g in enumerate(groups)]


def _fitting(hunk: ParsedHunk, fits: Callable[[list[ParsedHunk]], bool], f: ReviewedFile,
             too_large: list[Skipped]) -> list[ParsedHunk]:
    """`hunk`, or its halves (again and again) when it is too large for one call: a new file of
    thousands of lines is one hunk. A single line too large for a call is set aside, and said."""
    if fits([hunk]):
        return [hunk]
    if len(hunk.body) == 1:
        line = hunk.new_start if f.side == "new" else hunk.old_start
        too_large.append(Skipped(f.path, f"line {line} is longer than one review call (review.chunk_tokens): "
                                         "not reviewed"))
        return []
    half = len(hunk.body) // 2
    first, second = _cut(hunk, 0, half), _cut(hunk, half, len(hunk.body))
    return _fitting(first, fits, f, too_large) + _fitting(second, fits, f, too_large)


def _cut(hunk: ParsedHunk, a: int, b: int) -> ParsedHunk:
    """Lines a..b of `hunk`'s body as a hunk of their own, numbered where they are."""
    before = hunk.body[:a]
    old = hunk.old_start + sum(1 for tag, _ in before if tag != "+")
    new = hunk.new_start + sum(1 for tag, _ in before if tag != "-")
    body = hunk.body[a:b]
    return ParsedHunk(old_start=old, old_lines=sum(1 for tag, _ in body if tag != "+"), new_start=new,
                      new_lines=sum(1 for tag, _ in body if tag != "-"), section=hunk.section, body=body)


def _tokens(text: str) -> int:
    return _COUNTER.count(text)


def _drop_hidden_sections(text: str, skipped: list[Skipped]) -> str:
    """Sections git's secret gate replaced by a note (`policy/diff_secrets.py`) are set aside, named."""
    if "[deepseek-ls: the diff of " not in text:
        return text
    starts = [m.start() for m in _SECTION.finditer(text)] + [len(text)]
    kept = [text[: starts[0]]]
    for a, b in zip(starts, starts[1:]):
        section = text[a:b]
        hidden = _HIDDEN.search(section)
        if hidden:
            skipped.append(Skipped(hidden.group(1), f"not sent to the model: {hidden.group(2)}"))
        else:
            kept.append(section)
    return "".join(kept)

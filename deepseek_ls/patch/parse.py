"""Unified diff text -> `ParsedFile`s, with unidiff doing the parsing.

Models write slightly wrong diffs; the one repair done here is recounting hunk
headers whose line counts do not match their bodies (or that carry no numbers,
``@@ ... @@``), before unidiff parses: unidiff trusts the counts and would stop
a hunk early, dropping its last lines. The body still has to match the file
exactly; a hunk cut short to context alone is refused. Locating hunks
whose line numbers are wrong is `locate.py`'s job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import unidiff

from deepseek_ls.patch.model import ChangeKind, PatchError

_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_LOOSE_HEADER = re.compile(r"^@@.*?@@(.*)$")


@dataclass
class ParsedHunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    section: str
    body: list[tuple[str, str]]  # (" " | "-" | "+", line text with its ending)
    numbered: bool = True  # False for "@@ ... @@": its position must come from its context alone
    recounted: bool = False  # the header's counts did not match the body

    @property
    def old_seq(self) -> list[str]:
        return [text for tag, text in self.body if tag != "+"]

    @property
    def new_seq(self) -> list[str]:
        return [text for tag, text in self.body if tag != "-"]


@dataclass
class ParsedFile:
    old_path: str | None
    new_path: str | None
    kind: ChangeKind
    hunks: list[ParsedHunk] = field(default_factory=list)
    binary: bool = False

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def parse_diff(diff_text: str) -> list[ParsedFile]:
    """Parse a unified diff (git or plain). Raises `PatchError` when it is not one."""
    if not diff_text.strip():
        raise PatchError("the diff is empty")
    headers = [line for line in diff_text.split("\n") if line.startswith("@@")]
    # Every header is checked against its body first: unidiff trusts the counts, so a header
    # counting too few lines would drop the rest of its body (an added line lost, without error).
    diff_text = recount_hunk_headers(diff_text)
    try:
        patch = _unidiff(diff_text)
    except unidiff.UnidiffParseError as exc:
        raise PatchError(f"not a valid unified diff: {exc}") from exc
    parsed_hunks = sum(len(f) for f in patch)
    if parsed_hunks != len(headers):
        raise PatchError(
            f"the diff has {len(headers)} '@@' hunk header(s) but only {parsed_hunks} could be read; "
            "check that every hunk follows a '--- a/path' / '+++ b/path' header"
        )
    files = [_convert(f) for f in patch]
    if not files:
        raise PatchError("no file changes found: expected '--- a/path' / '+++ b/path' headers and '@@' hunks")
    for header, hunk in zip(headers, (h for f in files for h in f.hunks)):
        match = _HEADER.match(header.rstrip("\r"))
        hunk.numbered = match is not None
        claimed = (int(match.group(2) or 1), int(match.group(4) or 1)) if match else None
        hunk.recounted = claimed != (len(hunk.old_seq), len(hunk.new_seq))
    return files


def _unidiff(text: str) -> unidiff.PatchSet:
    # Split on "\n" only: str.splitlines would also break lines at \x0c, \x1c,
    # \u2028 ... which real source files contain.
    pieces = text.split("\n")
    lines = [p + "\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    return unidiff.PatchSet(lines)


def _strip_prefix(path: str | None, prefix: str, other: str | None, other_prefix: str) -> str | None:
    if path is None or path == "/dev/null":
        return None
    path = path.split("\t", 1)[0].rstrip("\r")  # a diff written with CRLF line endings
    if path.startswith(prefix) and (other is None or other == "/dev/null" or other.startswith(other_prefix)):
        return path[len(prefix):]
    return path


def _convert(f: unidiff.PatchedFile) -> ParsedFile:
    src = _strip_prefix(f.source_file, "a/", f.target_file, "b/")
    dst = _strip_prefix(f.target_file, "b/", f.source_file, "a/")
    # The paths decide, not unidiff's line-count heuristics: "@@ -1 +0,0 @@" on
    # b/f.txt empties f.txt, it does not delete it.
    if src is None:
        kind: ChangeKind = "add"
    elif dst is None:
        kind = "delete"
    elif src != dst:
        kind = "rename"
    else:
        kind = "modify"
    parsed = ParsedFile(old_path=src, new_path=dst, kind=kind, binary=bool(f.is_binary_file))
    for h in f:
        body: list[tuple[str, str]] = []
        for line in h:
            if line.line_type == "\\":
                if body:
                    tag, text = body[-1]
                    body[-1] = (tag, text[:-1] if text.endswith("\n") else text)
                continue
            if line.line_type not in (" ", "-", "+"):
                continue
            body.append((line.line_type, line.value))
        parsed.hunks.append(
            ParsedHunk(
                old_start=h.source_start,
                old_lines=h.source_length,
                new_start=h.target_start,
                new_lines=h.target_length,
                section=(h.section_header or "").strip(),
                body=body,
            )
        )
    return parsed


def recount_hunk_headers(diff_text: str) -> str:
    """Every `@@` header with the counts its body really has. The body runs to the next hunk or
    file header (or to a line no hunk line starts with); a header whose counts cover that body, or
    all of it but trailing blank lines, is kept as written. Raises `PatchError` for a hunk that
    claims more lines than its body has and changes nothing: cut short, not miscounted."""
    lines = diff_text.split("\n")
    out: list[str] = []
    i = 0
    ordinal = 0
    while i < len(lines):
        if not lines[i].startswith("@@"):
            out.append(lines[i])
            i += 1
            continue
        ordinal += 1
        end = _body_end(lines, i + 1)
        out.append(_header_for(lines, i, end, ordinal))
        out.extend(lines[i + 1 : end])
        i = end
    return "\n".join(out)


def _body_end(lines: list[str], start: int) -> int:
    """Where the hunk whose body starts at `start` ends (the index after its last line)."""
    j = start
    while j < len(lines):
        body = lines[j]
        if body.startswith("@@") or body.startswith("diff --git "):
            break
        if body.startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ "):
            break
        if body == "" and j == len(lines) - 1:
            break  # the text's final line break
        if body[:1] not in (" ", "+", "-", "\\") and body.rstrip("\r") != "":
            break
        j += 1
    return j


def _counts(lines: list[str]) -> tuple[int, int]:
    """(old, new) line counts of hunk body lines (a blank line is blank context)."""
    old = sum(1 for line in lines if not line.startswith(("+", "\\")))
    new = sum(1 for line in lines if not line.startswith(("-", "\\")))
    return old, new


def _covered(body: list[str], claimed: tuple[int, int]) -> int | None:
    """How many body lines the counts `claimed` cover, as unidiff reads them (None: never exactly)."""
    old = new = 0
    for k, line in enumerate(body):
        if (old, new) == claimed:
            return k
        old += not line.startswith(("+", "\\"))
        new += not line.startswith(("-", "\\"))
    return len(body) if (old, new) == claimed else None


def _header_for(lines: list[str], at: int, end: int, ordinal: int) -> str:
    """The header of the hunk at `lines[at]` (body `lines[at+1:end]`): as written when its counts
    hold, else recounted. Blank body lines inside the hunk become blank context (`" "`)."""
    header = lines[at]
    match = _HEADER.match(header.rstrip("\r"))
    body = lines[at + 1 : end]
    if match is not None:
        claimed = (int(match.group(2) or 1), int(match.group(4) or 1))
        covered = _covered(body, claimed)
        if covered is not None and all(line.rstrip("\r") == "" or line.startswith("\\") for line in body[covered:]):
            _blank_context(lines, at + 1, at + 1 + covered)
            return header  # what unidiff will read is exactly the body (trailing blank lines aside)
        _refuse_cut_off(lines, at, end, claimed, ordinal)
    _blank_context(lines, at + 1, end)
    old_n, new_n = _counts(body)
    old_start = int(match.group(1)) if match else 1
    new_start = int(match.group(3)) if match else 1
    if old_n == 0 and old_start > 0 and not match:
        old_start = 0
    loose = _LOOSE_HEADER.match(header)
    section = match.group(5) if match else (loose.group(1) if loose else "")
    return f"@@ -{old_start},{old_n} +{new_start},{new_n} @@{section}"


def _blank_context(lines: list[str], start: int, end: int) -> None:
    for j in range(start, end):
        if lines[j].rstrip("\r") == "":
            lines[j] = " " + lines[j]


def _refuse_cut_off(lines: list[str], at: int, end: int, claimed: tuple[int, int], ordinal: int) -> None:
    """A hunk claiming more lines than its body has, none of them a change: recounting would make
    a hunk that changes nothing out of one that was cut short (or lost its lines)."""
    body = [line for line in lines[at + 1 : end] if line.rstrip("\r") != ""]
    old_n, new_n = _counts(body)
    if (old_n < claimed[0] or new_n < claimed[1]) and not any(line[:1] in ("+", "-") for line in body):
        raise PatchError(
            f"hunk {ordinal} ({lines[at].strip()[:60]}) is cut short: its header counts {claimed[0]} old and "
            f"{claimed[1]} new lines, but its body has {old_n} line(s) of context and no changed line; "
            "send the whole hunk"
        )


def format_diff(files: list[ParsedFile]) -> str:
    """`ParsedFile`s back to unified diff text (a header without numbers stays without)."""
    out: list[str] = []
    for f in files:
        out.append(f"--- {'a/' + f.old_path if f.old_path else '/dev/null'}\n")
        out.append(f"+++ {'b/' + f.new_path if f.new_path else '/dev/null'}\n")
        for h in f.hunks:
            if h.numbered:
                out.append(f"@@ -{h.old_start},{len(h.old_seq)} +{h.new_start},{len(h.new_seq)} @@ {h.section}".rstrip() + "\n")
            else:
                out.append("@@ ... @@\n")
            for tag, text in h.body:
                out.append(tag + text if text.endswith("\n") else f"{tag}{text}\n\\ No newline at end of file\n")
    return "".join(out)


def resend_failed(previous: list[ParsedFile], failed: list[tuple[str, int]], answer: list[ParsedFile]) -> list[ParsedFile]:
    """The previous diff with its failed hunks replaced, in order, by the hunks the model resent
    for the same file. A file resent with at least as many hunks as it had is taken whole (the
    model resent everything); files the previous diff did not touch are added."""
    by_path = {f.path: f for f in answer}
    out: list[ParsedFile] = []
    for f in previous:
        new = by_path.pop(f.path, None)
        bad = [i for p, i in failed if p == f.path]
        if new is None or not bad:
            out.append(f)
            continue
        if len(new.hunks) >= len(f.hunks):
            out.append(new)
            continue
        replacements = iter(new.hunks)
        hunks = [next(replacements, h) if i in bad else h for i, h in enumerate(f.hunks)]
        hunks += list(replacements)
        out.append(ParsedFile(f.old_path, f.new_path, f.kind, hunks, f.binary))
    return out + list(by_path.values())

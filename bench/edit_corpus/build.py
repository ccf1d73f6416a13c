"""Build the edit corpus: model answers with realistic defects, made from real commits.

Each case takes one file changed by one commit of a real repository (by default
this repository's own history): the file before the commit is the base, the file
after it is the expected result, and the answer is that change written the way
models write it, with one defect of a kind seen in real answers. Cases whose
defect makes the answer wrong (a removed line the file does not have) expect a
refusal. Deterministic for a given repository and seed; the output is committed
as data (`corpus.jsonl.gz`) so the bench needs neither the repository nor the
network.

    python bench/edit_corpus/build.py [--repo PATH] [--cases 130] [--seed 15]
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import random
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent

DEFECTS = [
    "clean",             # a correct fenced diff
    "line_offset",       # hunk line numbers off by 3..60
    "bad_counts",        # @@ counts that do not match the body
    "no_numbers",        # "@@ ... @@" headers
    "trailing_space",    # trailing spaces added to context lines
    "indent_drift",      # context indentation changed by one space
    "smart_punct",       # typographic quotes/dashes in context lines
    "long_fence",        # ```` or ~~~ fences
    "blank_context",     # blank context lines without their leading space
    "crlf_answer",       # the whole answer with CRLF line endings
    "editblock",         # SEARCH/REPLACE blocks instead of a diff
    "whole_file",        # the whole new file in a code block
    "wrong_removed",     # a removed line the file does not have: must be refused
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def candidates(repo: Path, limit: int) -> list[tuple[str, str]]:
    """(commit, path) of text files modified (not added/deleted) by non-merge commits."""
    out = []
    for line in git(repo, "log", "--no-merges", "--format=@%H", "--diff-filter=M", "--name-only", "-n", "400").splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.endswith((".py", ".md", ".lua", ".ts", ".toml", ".sh")):
            out.append((commit, line))
    return out[:limit]


def udiff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{path}", f"b/{path}", n=3)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def map_body(diff: str, fn, tags: str = " -") -> str:
    """Apply `fn` to the text of body lines whose tag is in `tags`."""
    out, in_hunk = [], False
    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith(("--- ", "+++ ")) and not in_hunk:
            pass
        elif in_hunk and line[:1] in tags and line[:1] != "\\":
            line = line[0] + fn(line[1:])
        out.append(line)
    return "".join(out)


def defect(kind: str, path: str, before: str, after: str, rng: random.Random) -> tuple[str, str] | None:
    """(answer text, expectation "apply" | "refuse"), or None when the defect does not fit this change."""
    diff = udiff(path, before, after)
    if not diff or "\\ No newline" in diff:
        return None
    fenced = lambda d, f="```": f"Here is the change.\n\n{f}diff\n{d}{f}\n"  # noqa: E731
    if kind == "clean":
        return fenced(diff), "apply"
    if kind == "line_offset":
        shift = rng.choice([-1, 1]) * rng.randint(3, 60)

        def move(m: re.Match[str]) -> str:
            a, b = max(int(m.group(1)) + shift, 1), max(int(m.group(3)) + shift, 1)
            return f"@@ -{a},{m.group(2) or 1} +{b},{m.group(4) or 1} @@"
        return fenced(re.sub(_HEADER, move, diff)), "apply"
    if kind == "bad_counts":
        return fenced(re.sub(_HEADER, lambda m: f"@@ -{m.group(1)},{rng.randint(1, 30)} +{m.group(3)},{rng.randint(1, 30)} @@",
                             diff)), "apply"
    if kind == "no_numbers":
        return fenced(re.sub(r"(?m)^@@ .* @@", "@@ ... @@", diff)), "apply"
    if kind == "trailing_space":
        return fenced(map_body(diff, lambda t: t[:-1] + "  \n" if t.endswith("\n") and t.strip() else t, " ")), "apply"
    if kind == "indent_drift":
        changed = map_body(diff, lambda t: t[1:] if t.startswith("  ") else t, " ")
        return (fenced(changed), "apply") if changed != diff else None
    if kind == "smart_punct":
        swap = lambda t: t.replace('"', "\u201c", 1).replace('"', "\u201d", 1).replace("'", "\u2019").replace(" - ", " \u2014 ")  # noqa: E731
        changed = map_body(diff, swap, " ")
        return (fenced(changed), "apply") if changed != diff else None
    if kind == "long_fence":
        return fenced(diff, rng.choice(["````", "~~~", "`````"])), "apply"
    if kind == "blank_context":
        changed = map_body(diff, lambda t: t, " ").replace("\n \n", "\n\n")
        return (fenced(changed), "apply") if changed != diff else None
    if kind == "crlf_answer":
        return fenced(diff).replace("\n", "\r\n"), ("apply" if "\r" not in before else None)
    if kind == "editblock":
        return editblocks(path, diff), "apply"
    if kind == "whole_file":
        if len(before.splitlines()) > 400:
            return None
        return f"The corrected file:\n\n{path}\n```\n{after}```\n", "apply"
    if kind == "wrong_removed":
        lines = diff.splitlines(keepends=True)
        removed = [i for i, line in enumerate(lines) if line.startswith("-") and not line.startswith("---") and len(line.strip()) > 8]
        if not removed:
            return None
        i = rng.choice(removed)
        lines[i] = lines[i].rstrip("\n") + "  # hallucinated\n"
        return fenced("".join(lines)), "refuse"
    raise ValueError(kind)


def editblocks(path: str, diff: str) -> str:
    """One SEARCH/REPLACE block per hunk, its SEARCH the hunk's old lines."""
    blocks, old, new = [], [], []
    for line in diff.splitlines(keepends=True)[2:]:
        if line.startswith("@@"):
            if old or new:
                blocks.append((old, new))
            old, new = [], []
        elif line[:1] in " -":
            old.append(line[1:])
            if line[:1] == " ":
                new.append(line[1:])
        elif line[:1] == "+":
            new.append(line[1:])
    blocks.append((old, new))
    return "".join(f"{path}\n```\n<<<<<<< SEARCH\n{''.join(o)}=======\n{''.join(n)}>>>>>>> REPLACE\n```\n\n" for o, n in blocks)


def build(repo: Path, cases: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    pool = candidates(repo, 2000)
    rng.shuffle(pool)
    out: list[dict] = []
    kinds = iter(DEFECTS * (cases // len(DEFECTS) + 2))
    kind = next(kinds)
    for commit, path in pool:
        if len(out) >= cases:
            break
        try:
            before = git(repo, "show", f"{commit}~1:{path}")
            after = git(repo, "show", f"{commit}:{path}")
        except (subprocess.CalledProcessError, UnicodeDecodeError):
            continue
        if before == after or len(before) > 40_000 or len(udiff(path, before, after).splitlines()) > 120:
            continue
        made = defect(kind, path, before, after, rng)
        if made is None or made[1] is None:
            continue
        answer, expect = made
        out.append({"id": f"{kind}-{commit[:8]}-{path.replace('/', '_')}", "defect": kind, "commit": commit,
                    "path": path, "base": before, "expected": after, "answer": answer, "expect": expect})
        kind = next(kinds)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(git(HERE, "rev-parse", "--show-toplevel").strip()))
    parser.add_argument("--cases", type=int, default=130)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "corpus.jsonl.gz")
    args = parser.parse_args()
    corpus = build(args.repo, args.cases, args.seed)
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for case in corpus:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for case in corpus:
        counts[case["defect"]] = counts.get(case["defect"], 0) + 1
    print(f"{len(corpus)} cases -> {args.out}: {counts}")


if __name__ == "__main__":
    main()

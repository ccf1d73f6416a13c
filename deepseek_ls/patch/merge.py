"""3-way merge of text with `git merge-file -p` on temporary files.

Used when the target changed since a patch was staged: `ours` is what is there
now (buffer or disk), `base` what the model saw, `theirs` base + the hunks.
Non-overlapping changes merge; overlapping ones are a conflict, reported with
the conflicting line ranges, and nothing is written.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.policy.env import host_exec_path
from deepseek_ls.policy.git_safety import base_env


@dataclass
class ThreeWay:
    ok: bool
    text: str
    conflicts: int
    report: str = ""


def git_binary() -> str:
    git = shutil.which("git", path=host_exec_path())  # never a file of a workspace
    if git is None:
        raise RuntimeError("git is not installed; it is needed for 3-way merges (git merge-file)")
    return git


def merge_three_way(base: str, ours: str, theirs: str, *, label: str = "file") -> ThreeWay:
    with tempfile.TemporaryDirectory(prefix="dsls-merge-") as tmp:
        paths = []
        for name, text in (("current", ours), ("base", base), ("patched", theirs)):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
            paths.append(str(path))
        proc = subprocess.run(
            [git_binary(), "merge-file", "-p", "-L", "current", "-L", "base", "-L", "patch", *paths],
            capture_output=True,
            timeout=60,
            cwd=tmp,  # outside any repository: no repository config is read
            env=base_env(None),
        )
    if proc.returncode < 0 or proc.returncode > 127:
        raise RuntimeError(f"git merge-file failed: {proc.stderr.decode(errors='replace').strip()}")
    text = proc.stdout.decode("utf-8", "surrogatepass")
    if proc.returncode == 0:
        return ThreeWay(True, text, 0)
    return ThreeWay(False, text, proc.returncode, conflict_report(text, label))


def conflict_report(merged: str, label: str) -> str:
    """Readable summary of the conflict regions in `git merge-file` output, with line
    numbers in the current text (the side the person sees)."""
    regions: list[str] = []
    current_line = 0  # lines of the current text seen so far
    start = 0
    ours: list[str] = []
    theirs: list[str] = []
    side = None
    for line in merged.split("\n"):
        if line.startswith("<<<<<<< "):
            start, ours, theirs, side = current_line + 1, [], [], "ours"
        elif line.startswith("||||||| ") and side:
            side = "base"
        elif line.startswith("=======") and side:
            side = "theirs"
        elif line.startswith(">>>>>>> ") and side:
            where = f"line {start}" if ours else f"after line {start - 1}"
            regions.append(f"  at {where}: the file now has {_preview(ours)} where the patch wants {_preview(theirs)}")
            side = None
        elif side == "ours":
            ours.append(line)
            current_line += 1
        elif side == "theirs":
            theirs.append(line)
        elif side is None:
            current_line += 1
    head = f"{label}: the file changed since the patch was staged and {len(regions)} change(s) overlap"
    return "\n".join([head, *regions])


def _preview(lines: list[str]) -> str:
    if not lines:
        return "nothing"
    first = lines[0].strip()
    more = f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else ""
    return repr(first[:60]) + more

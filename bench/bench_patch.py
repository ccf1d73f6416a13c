"""Patch staging figures (redaction and path policy: bench_policy.py).

    .venv/bin/python bench/bench_patch.py [--rounds 30] [--smoke]

What is measured, with the baseline measured in the same run:
- stage + apply of a real multi-file diff (a package tree from site-packages, 6 files
  edited in 4 places each) against `git apply` of the same diff (process spawn included);
- merge_hunks on an unchanged buffer (direct) and on an edited buffer (3-way via
  `git merge-file`), against a bare `git merge-file` of the same three texts;
Prints median and p95 in ms, and the ratio of medians (ours / baseline).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.patch.merge import merge_three_way
from deepseek_ls.policy import PathPolicy

from benchstats import add_smoke_option, report, smoke_sizes

SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"




def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def make_repo(tmp: Path) -> tuple[Path, str, int]:
    repo = tmp / "repo"
    shutil.copytree(SITE / "pathspec", repo / "pathspec", ignore=shutil.ignore_patterns("__pycache__"))
    git(tmp, "init", "-q", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A")
    files = sorted(p for p in (repo / "pathspec").rglob("*.py") if p.stat().st_size > 3000)[:6]
    for path in files:
        lines = path.read_text().split("\n")
        for k in range(4):
            i = (k + 1) * len(lines) // 5
            lines[i] = lines[i] + f"  # bench edit {k}"
        path.write_text("\n".join(lines))
    diff = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    return repo, diff, len(files)


def bench_stage_apply(repo: Path, diff: str, rounds: int) -> None:
    store = PatchStore(repo, repo / ".deepseek", policy=PathPolicy(repo, []), gate=SafetyGate(max_loc_without_approval=10**6))
    stage, apply, total, git_apply = [], [], [], []
    (repo / ".deepseek" / "bench.diff").write_text(diff)
    for _ in range(rounds):
        t0 = time.perf_counter()
        ps = store.stage(diff)
        t1 = time.perf_counter()
        result = store.apply(ps.patch_id)
        t2 = time.perf_counter()
        assert result.ok, result.message
        stage.append((t1 - t0) * 1000)
        apply.append((t2 - t1) * 1000)
        total.append((t2 - t0) * 1000)
        store.undo()
        t3 = time.perf_counter()
        git(repo, "apply", ".deepseek/bench.diff")
        git_apply.append((time.perf_counter() - t3) * 1000)
        git(repo, "apply", "-R", ".deepseek/bench.diff")
    hunks = diff.count("\n@@ ")
    print(f"diff: {len(diff.encode())} bytes, {hunks} hunks")
    report("stage (parse+validate+locate)", stage, git_apply, "git apply")
    report("apply (checkpoint+write)", apply, git_apply, "git apply")
    report("stage + apply", total, git_apply, "git apply")


def bench_merge(rounds: int) -> None:
    base = "".join(f"line {i}\n" for i in range(2000))
    theirs = base.replace("line 1000\n", "LINE 1000\n")
    ours = "user line\n" + base
    tmp = Path(tempfile.mkdtemp(prefix="dsls-bench-merge-"))
    for name, text in (("o", ours), ("b", base), ("t", theirs)):
        (tmp / name).write_text(text)
    mine, bare = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        assert merge_three_way(base, ours, theirs).ok
        mine.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        subprocess.run(["git", "merge-file", "-p", str(tmp / "o"), str(tmp / "b"), str(tmp / "t")], capture_output=True, check=True)
        bare.append((time.perf_counter() - t) * 1000)
    shutil.rmtree(tmp)
    report("3-way merge (2000 lines)", mine, bare, "bare git merge-file")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, rounds=2)
    with tempfile.TemporaryDirectory(prefix="dsls-bench-patch-") as tmp:
        repo, diff, files = make_repo(Path(tmp))
        print(f"workspace: pathspec package tree, {files} files edited")
        bench_stage_apply(repo, diff, args.rounds)
    bench_merge(args.rounds)


if __name__ == "__main__":
    main()

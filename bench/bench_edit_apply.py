"""How often a model's edit lands exactly right: deepseek-ls vs git apply, patch -p1 and Aider.

Runs every case of `bench/edit_corpus/corpus.jsonl.gz` (model answers with realistic
defects, built from real commits by `bench/edit_corpus/build.py`) through each applier
on a fresh copy of the file, and compares the result with the commit's real result:

* applied exactly   — the result is right and no tolerance was needed
* after recovery    — the result is right thanks to a tolerance (ladder, recount, format)
* refused           — nothing written (for answers that must be refused, this is right)
* applied WRONGLY   — something was written that is not the commit's result

deepseek-ls reads the raw answer (diff in any fence, SEARCH/REPLACE blocks, whole file).
`git apply` and `patch -p1` get the diff deepseek-ls extracted from the answer (they
cannot read fences or other formats; for those they count as refused). Aider's own
flexible appliers (`udiff_coder`, `editblock_coder`) read the raw answer, in the
bench-only venv made by `bench/setup-aider.sh` (skipped when it is missing).

    python bench/bench_edit_apply.py [--json] [--smoke]

`--smoke` runs one case of each defect kind (and expectation) through every applier.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deepseek_ls.agent.executor_parse import extract_diff  # noqa: E402
from deepseek_ls.patch import PatchError, PatchStore  # noqa: E402
from deepseek_ls.patch.editblock import edit_blocks_to_diff, has_edit_blocks, parse_edit_blocks  # noqa: E402
from deepseek_ls.patch.wholefile import whole_file_blocks, whole_file_diff  # noqa: E402
from deepseek_ls.policy.paths import PathPolicy  # noqa: E402

from benchstats import add_smoke_option, smoke_sizes  # noqa: E402

CORPUS = ROOT / "bench" / "edit_corpus" / "corpus.jsonl.gz"
AIDER_PY = Path(os.environ.get("AIDER_BENCH_PYTHON", ROOT / ".bench-aider" / "bin" / "python"))
OUTCOMES = ("exact", "recovered", "refused", "wrong")


def load() -> list[dict]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def workspace(case: dict) -> Path:
    root = Path(tempfile.mkdtemp(prefix="dsls-edit-bench-"))
    target = root / case["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(case["base"].encode())
    return root


def judge(case: dict, written: str | None, tolerant: bool) -> str:
    if written is None or written == case["base"]:
        return "refused"
    if case["expect"] == "refuse" or written != case["expected"]:
        return "wrong"
    return "recovered" if tolerant else "exact"


def ours(case: dict) -> tuple[str, str]:
    root = workspace(case)
    try:
        answer = case["answer"]
        diff, converted = extract_diff(answer), False
        if not diff and has_edit_blocks(answer):
            diff, converted = edit_blocks_to_diff(parse_edit_blocks(answer), lambda p: (root / p).exists()), True
        if not diff:
            blocks = whole_file_blocks(answer, {case["path"]: case["base"]})
            if case["path"] in blocks:
                diff = whole_file_diff(case["path"], case["base"], blocks[case["path"]], max_lines=400) or ""
                converted = True
        if not diff:
            return "refused", "no diff, SEARCH/REPLACE block or whole file found"
        store = PatchStore(root, root / ".deepseek", policy=PathPolicy(root, []))
        ps = store.stage(diff)
        result = store.apply(ps.patch_id)
        if not result.ok:
            return "refused", result.message
        tolerant = converted or any(h.located not in ("exact", "offset") or h.recounted for h in ps.hunks) \
            or any(h.located == "offset" for h in ps.hunks)
        return judge(case, (root / case["path"]).read_text(), tolerant), ""
    except PatchError as exc:
        return "refused", str(exc).splitlines()[-1][:200]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def external(case: dict, argv: list[str]) -> tuple[str, str]:
    diff = extract_diff(case["answer"].replace("\r\n", "\n")) if "\r\n" in case["answer"] else extract_diff(case["answer"])
    if not diff:
        return "refused", "not a unified diff"
    root = workspace(case)
    try:
        (root / "answer.diff").write_text(diff)
        proc = subprocess.run([*argv, str(root / "answer.diff")], cwd=root, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            return "refused", (proc.stderr or proc.stdout).strip().splitlines()[0][:200] if (proc.stderr or proc.stdout).strip() else "failed"
        return judge(case, (root / case["path"]).read_text(), False), ""
    finally:
        shutil.rmtree(root, ignore_errors=True)


def git_apply(case: dict) -> tuple[str, str]:
    return external(case, ["git", "apply"])


def patch_p1(case: dict) -> tuple[str, str]:
    return external(case, ["patch", "-p1", "-s", "-f", "--no-backup-if-mismatch", "-r", "-", "-i"])


AIDER_SCRIPT = r"""
import json, os, sys, tempfile
from pathlib import Path
from aider.coders.udiff_coder import find_diffs, do_replace as udiff_replace
from aider.coders.editblock_coder import DEFAULT_FENCE, find_original_update_blocks, do_replace as eb_replace
out = []
for case in json.load(sys.stdin):
    # Each case in its own directory holding the file, as Aider's coders expect (they look at the disk).
    os.chdir(tempfile.mkdtemp(prefix="aider-bench-"))
    Path(case["path"]).parent.mkdir(parents=True, exist_ok=True)
    Path(case["path"]).write_text(case["base"])
    content, answer = case["base"], case["answer"]
    try:
        edits = find_diffs(answer)
        if edits:
            for fname, hunk in edits:
                content = udiff_replace(fname, content, hunk)
                if content is None:
                    break
        else:
            blocks = [b for b in find_original_update_blocks(answer, DEFAULT_FENCE) if b[0] is not None]
            if not blocks:
                content = None
            for fname, before, after in blocks:
                content = eb_replace(fname, content, before, after, DEFAULT_FENCE) if content is not None else None
    except Exception as exc:
        content = None
    out.append(content)
json.dump(out, sys.stdout)
"""


def aider_all(cases: list[dict]) -> list[tuple[str, str]] | None:
    if not AIDER_PY.exists():
        return None
    payload = json.dumps([{"path": c["path"], "base": c["base"], "answer": c["answer"]} for c in cases])
    proc = subprocess.run([str(AIDER_PY), "-c", AIDER_SCRIPT], input=payload, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        print(f"aider: could not run ({proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode})", file=sys.stderr)
        return None
    return [(judge(c, written, False), "") for c, written in zip(cases, json.loads(proc.stdout))]


def table(name: str, results: list[tuple[str, str]], cases: list[dict]) -> dict:
    good = [r for r, c in zip(results, cases) if c["expect"] == "apply"]
    bad = [r for r, c in zip(results, cases) if c["expect"] == "refuse"]
    g, b = Counter(o for o, _ in good), Counter(o for o, _ in bad)
    applied = g["exact"] + g["recovered"]
    row = {
        "applier": name, "answers": len(good),
        "exact": g["exact"], "recovered": g["recovered"], "refused": g["refused"], "wrong": g["wrong"],
        "applied_pct": round(100 * applied / max(len(good), 1), 1),
        "must_refuse": len(bad), "refused_ok": b["refused"], "wrong_on_must_refuse": b["wrong"],
        "wrong_total": g["wrong"] + b["wrong"],
    }
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-refused", action="store_true", help="print why deepseek-ls refused each case")
    add_smoke_option(parser)
    args = parser.parse_args()
    cases = load()
    if smoke_sizes(args):
        first: dict[tuple[str, str], dict] = {}
        for case in cases:
            first.setdefault((case["defect"], case["expect"]), case)
        cases = list(first.values())
    runs = {"deepseek-ls": [ours(c) for c in cases], "git apply": [git_apply(c) for c in cases],
            "patch -p1": [patch_p1(c) for c in cases]}
    aider = aider_all(cases)
    if aider is not None:
        runs["aider (udiff+editblock)"] = aider
    rows = [table(name, results, cases) for name, results in runs.items()]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        kinds = Counter(c["defect"] for c in cases)
        print(f"edit corpus: {len(cases)} model answers from real commits ({len(kinds)} defect kinds); "
              f"{sum(c['expect'] == 'apply' for c in cases)} carry a right change, "
              f"{sum(c['expect'] == 'refuse' for c in cases)} must be refused")
        print(f"{'applier':26} {'exact':>6} {'recov.':>6} {'refused':>7} {'WRONG':>6} {'applied':>8}   must-refuse: refused / WRONG")
        for r in rows:
            print(f"{r['applier']:26} {r['exact']:6} {r['recovered']:6} {r['refused']:7} {r['wrong']:6} {r['applied_pct']:7.1f}%"
                  f"   {r['refused_ok']:>3}/{r['must_refuse']} / {r['wrong_on_must_refuse']}")
        if aider is None:
            print("aider: skipped (run bench/setup-aider.sh to install it in a bench-only venv)")
        names = list(runs)
        print("\nright results by defect (wrong applies in brackets):")
        print(f"{'defect':16}" + "".join(f"{n[:14]:>16}" for n in names))
        for kind in dict.fromkeys(c["defect"] for c in cases):
            cells = []
            for n in names:
                got = Counter(o for (o, _), c in zip(runs[n], cases) if c["defect"] == kind)
                total = sum(got.values())
                right = got["refused"] if kind == "wrong_removed" else got["exact"] + got["recovered"]
                cells.append(f"{right}/{total}" + (f" [{got['wrong']}]" if got["wrong"] else ""))
            print(f"{kind:16}" + "".join(f"{cell:>16}" for cell in cells))
    if args.show_refused:
        for (outcome, why), case in zip(runs["deepseek-ls"], cases):
            if outcome in ("refused", "wrong") and case["expect"] == "apply":
                print(f"  {outcome}: {case['id']}: {why}")


if __name__ == "__main__":
    main()

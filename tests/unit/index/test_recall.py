"""Recall against ripgrep on real code: every file `rg -w -l IDENT` finds is in our results.

The corpus is a slice of this machine's Python standard library (real code, with
its odd encodings and huge generated files); identifiers are drawn from it with
a fixed seed so the test is repeatable.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter
from pathlib import Path

import pytest

from deepseek_ls.config_models import IndexConfig
from deepseek_ls.index import CodeIndex

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = [
    "json", "email", "http", "asyncio", "concurrent", "logging", "urllib", "importlib", "collections",
    "xml", "unittest", "multiprocessing", "tomllib",
]
RG = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")
QUERY_OPERATORS = {"AND", "OR", "NOT", "TO", "IN"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("stdlib")
    for package in PACKAGES:
        for src in sorted((STDLIB / package).rglob("*.py")):
            dest = root / src.relative_to(STDLIB)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
    return root


@pytest.fixture(scope="module")
def built(corpus, tmp_path_factory):
    # State outside the corpus, so ripgrep and the index see the same files.
    index = CodeIndex(corpus, tmp_path_factory.mktemp("state"), IndexConfig())
    return index, index.build()


def draw_identifiers(root: Path, count: int, seed: int = 5) -> list[str]:
    words: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        words.update(set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{3,40}\b", path.read_text("utf-8", "replace"))))
    candidates = sorted(w for w in words if w not in QUERY_OPERATORS)
    return random.Random(seed).sample(candidates, count)


def rg_files(root: Path, word: str) -> set[str]:
    proc = subprocess.run(
        [RG, "-w", "-l", "-F", "--hidden", "--no-ignore", "--", word, "."],
        cwd=root, capture_output=True, text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {line.removeprefix("./") for line in proc.stdout.splitlines()}


@pytest.mark.skipif(RG is None or not (STDLIB / "json").is_dir(), reason="needs ripgrep and the stdlib sources")
def test_every_file_ripgrep_finds_is_in_the_index_results(corpus, built):
    index, report = built
    n_files = report.total_files
    assert n_files > 150
    skipped = {s.path for s in report.skipped}
    identifiers = draw_identifiers(corpus, 80)
    checked = 0
    for ident in identifiers:
        expected = rg_files(corpus, ident) - skipped
        got = {h.path for h in index.query(ident, top_k=n_files).hits}
        missing = expected - got
        assert not missing, f"{ident!r}: ripgrep finds {sorted(missing)[:5]} but the index does not"
        checked += len(expected)
    assert checked > 200  # the sample really exercised many files


@pytest.mark.skipif(RG is None or not (STDLIB / "json").is_dir(), reason="needs ripgrep and the stdlib sources")
def test_common_identifier_ranks_its_defining_file_first(built):
    index, _ = built
    assert index.query("JSONDecoder").hits[0].path == "json/decoder.py"
    assert index.query("BaseEventLoop").hits[0].path == "asyncio/base_events.py"

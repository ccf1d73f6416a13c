"""The bench's edit corpus (model answers with real defects, from real commits) as a test of the
promise behind it: never a wrong apply, and at least 95 % of the right changes applied."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import bench_edit_apply as bench  # noqa: E402


def test_never_apply_a_model_answer_wrongly_and_apply_nearly_all():
    cases = bench.load()
    assert len(cases) >= 100
    outcomes = [(case, bench.ours(case)[0]) for case in cases]
    assert [case["id"] for case, outcome in outcomes if outcome == "wrong"] == []
    must_refuse = [outcome for case, outcome in outcomes if case["expect"] == "refuse"]
    assert must_refuse and set(must_refuse) == {"refused"}
    right = Counter(outcome for case, outcome in outcomes if case["expect"] == "apply")
    assert (right["exact"] + right["recovered"]) / sum(right.values()) >= 0.95, right

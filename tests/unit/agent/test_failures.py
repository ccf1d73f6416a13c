from deepseek_ls.agent.failures import (
    FailureClassifier,
    error_lines,
    fingerprint,
    materially_reduced,
)
from deepseek_ls.config_models import FailureClassifierConfig
from deepseek_ls.sink import ListSink

OUT_A = "tests/test_x.py::test_a FAILED\nE   AssertionError: assert 1 == 2\n1 failed in 0.12s\n"
OUT_A_LATER = "\x1b[31mtests/test_x.py::test_a FAILED\x1b[0m\nE   AssertionError: assert 1 == 2\n1 failed in 3.40s\n"
OUT_B = "tests/test_y.py::test_b FAILED\nE   NameError: name 'foo' is not defined\n1 failed in 0.1s\n"


def classifier():
    return FailureClassifier(FailureClassifierConfig(), ListSink())


def test_fingerprint_ignores_timings_and_colours():
    assert fingerprint(OUT_A) == fingerprint(OUT_A_LATER)
    assert fingerprint(OUT_A) != fingerprint(OUT_B)


def test_first_failure_is_mechanical_second_identical_is_repeated():
    c = classifier()
    assert c.verify_failed("pytest", OUT_A).failure_class == "MechanicalVerifyFailure"
    second = c.verify_failed("pytest", OUT_A_LATER)
    assert second.failure_class == "RepeatedVerifyFailure" and second.goes_to_planner
    assert [p["failure_class"] for _, p in c.sink.events] == ["MechanicalVerifyFailure", "RepeatedVerifyFailure"]


def test_different_failures_stay_mechanical():
    c = classifier()
    assert c.verify_failed("pytest", OUT_A).failure_class == "MechanicalVerifyFailure"
    assert c.verify_failed("pytest", OUT_B).failure_class == "MechanicalVerifyFailure"


def test_design_mismatch_when_replan_does_not_reduce_errors():
    c = classifier()
    c.verify_failed("pytest", OUT_A + OUT_B)
    c.note_replan()
    assert c.verify_failed("pytest", OUT_B + OUT_A).failure_class == "DesignMismatch"


def test_replan_that_reduces_errors_is_not_design_mismatch():
    c = classifier()
    c.verify_failed("pytest", OUT_A + OUT_B)
    c.note_replan()
    assert c.verify_failed("pytest", OUT_B).failure_class == "MechanicalVerifyFailure"


def test_material_reduction_rule():
    old = {"a", "b", "c"}
    assert materially_reduced(old, {"a", "b"}, 0.8)  # one fewer
    assert not materially_reduced(old, {"a", "b", "c"}, 0.8)  # same set
    assert materially_reduced(old, {"x", "y", "z"}, 0.8)  # different errors
    assert error_lines("ok\nall good") == []


def test_patch_mismatch_is_recorded():
    c = classifier()
    f = c.patch_mismatch("hunk 1 does not apply to src/a.py")
    assert f.failure_class == "PatchMismatch" and not f.goes_to_planner
    assert c.sink.kinds() == ["FailureClassified@v1"]

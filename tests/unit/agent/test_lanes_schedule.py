"""Which steps run at once in teammate lanes (agent/lanes/schedule.py)."""

from __future__ import annotations

import pytest

from deepseek_ls.agent.lanes.schedule import wave
from deepseek_ls.agent.plan import Plan, Step


def plan(*steps: Step) -> Plan:
    return Plan(goal="g", steps=list(steps))


def titles(steps: list[Step]) -> list[str]:
    return [s.title for s in steps]


@pytest.mark.parametrize(
    "steps, expected",
    [
        pytest.param([Step(title="a", files=["a.py"]), Step(title="b", files=["b.py"])], ["a", "b"], id="disjoint"),
        pytest.param([Step(title="a", files=["a.py"]), Step(title="b", files=["b.py"]), Step(title="c", files=["a.py"])],
                     ["a", "b"], id="shared-file-waits"),
        pytest.param([Step(title="a", files=["a.py"]), Step(title="b", files=["b.py"], depends_on=["a"])], [],
                     id="declared-dependency-by-title"),
        pytest.param([Step(title="a", files=["a.py"]), Step(title="b", files=["b.py"], depends_on=["1"]),
                      Step(title="c", files=["c.py"])], ["a", "c"], id="dependency-by-number"),
        pytest.param([Step(title="a", files=["a.py"]), Step(title="b", files=[])], [], id="no-files-never-in-a-lane"),
        pytest.param([Step(title="a", files=["a.py", "b.py"]), Step(title="b", files=["b.py"])], [], id="overlap"),
        pytest.param([Step(title="a", files=["a.py"])], [], id="one-step-no-wave"),
        pytest.param([Step(title="a", files=["a.py"], status="running"), Step(title="b", files=["b.py"]),
                      Step(title="c", files=["c.py"])], [], id="first-open-step-not-pending"),
        pytest.param([Step(title="a", files=["a.py"], status="done"), Step(title="b", files=["b.py"], depends_on=["a"]),
                      Step(title="c", files=["a.py"])], ["b", "c"], id="done-steps-free-their-files-and-dependents"),
        pytest.param([Step(title="a", files=["a.py"]), Step(title="Fix: x", intent="fix", files=["b.py"])], [],
                     id="fix-steps-run-in-the-workspace"),
    ],
)
def test_wave(steps, expected):
    assert titles(wave(plan(*steps))) == expected


def test_dependency_on_a_step_by_id():
    a = Step(title="a", files=["a.py"])
    b = Step(title="b", files=["b.py"], depends_on=[a.step_id])
    c = Step(title="c", files=["c.py"])
    assert titles(wave(plan(a, b, c))) == ["a", "c"]


def test_depends_on_is_read_from_the_plan_json():
    parsed = Plan.model_validate({"goal": "g", "steps": [{"title": "a", "files": ["a.py"]},
                                                          {"title": "b", "files": ["b.py"], "depends_on": ["a"]}]})
    assert parsed.steps[1].depends_on == ["a"] and wave(parsed) == []

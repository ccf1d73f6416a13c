import json

import pytest

from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.plan_parse import PlanParseError, parse_plan

JSON_PLAN = {
    "goal": "Add a greeting",
    "assumptions": ["python project"],
    "steps": [
        {"title": "Edit greet", "intent": "edit", "tools": ["fs.read"], "files": ["src/app.py"]},
        {"title": "Add test", "files": ["./tests/test_app.py"]},
    ],
    "verification": ["pytest -q"],
    "risk_notes": [],
    "confidence": 0.9,
}


def test_fenced_json_plan_is_parsed_with_fresh_ids():
    text = "Here is the plan:\n```json\n" + json.dumps({**JSON_PLAN, "plan_id": "x", "version": 9}) + "\n```\n"
    plan = parse_plan(text)
    assert plan.goal == "Add a greeting"
    assert plan.version == 1 and plan.plan_id != "x"
    assert [s.files for s in plan.steps] == [["src/app.py"], ["tests/test_app.py"]]
    assert plan.verification == ["pytest -q"] and plan.confidence == 0.9
    assert len({s.step_id for s in plan.steps}) == 2


def test_bare_json_plan_with_prose_around_it():
    plan = parse_plan("Sure. " + json.dumps(JSON_PLAN) + " Done.")
    assert plan.files == ["src/app.py", "tests/test_app.py"]


def test_line_protocol_pairs_plan_lines_with_files():
    text = "\n".join(
        [
            "ARCHITECT_PLAN_V1",
            "PLAN|Rename helper",
            "PLAN|Update caller",
            "FILE|src/util.py|edit",
            "FILE|src/main.py|edit",
            "VERIFY|pytest -q",
            "ACCEPT|tests pass",
            "ARCHITECT_PLAN_END",
        ]
    )
    plan = parse_plan(text)
    assert [(s.title, s.files) for s in plan.steps] == [("Rename helper", ["src/util.py"]), ("Update caller", ["src/main.py"])]
    assert plan.verification == ["pytest -q"] and plan.acceptance == ["tests pass"]


def test_line_protocol_no_edit():
    plan = parse_plan("ARCHITECT_PLAN_V1\nNO_EDIT|true|already done\nARCHITECT_PLAN_END")
    assert plan.no_edit_reason == "already done" and plan.steps == []


@pytest.mark.parametrize(
    "text, message",
    [
        pytest.param("", "empty", id="empty"),
        pytest.param("I think we should edit app.py", "could not read a plan", id="prose"),
        pytest.param('{"goal": "x", "steps": []}', "no 'steps'", id="no-steps"),
        pytest.param('{"steps": [{"title": "a"}]}', "no 'goal'", id="no-goal"),
        pytest.param('{"goal": "g", "steps": [{"title": "a", "files": ["/etc/passwd"]}]}', "workspace-relative", id="abs-path"),
        pytest.param('{"goal": "g", "steps": [{"title": "a", "files": ["../x.py"]}]}', "workspace-relative", id="escape"),
        pytest.param("ARCHITECT_PLAN_V1\nPLAN|x\nFILE|a.py|edit\n", "not closed", id="unclosed"),
        pytest.param("ARCHITECT_PLAN_V1\nPLAN|x\nARCHITECT_PLAN_END", "no FILE| lines", id="no-files"),
        pytest.param("ARCHITECT_PLAN_V1\nPLAN|x\nFILE|a.py|edit\n--- a/a.py\nARCHITECT_PLAN_END", "line 4", id="diff-inside"),
    ],
)
def test_invalid_answers_say_what_is_wrong(text, message):
    with pytest.raises(PlanParseError, match=message):
        parse_plan(text)


def test_revision_keeps_done_steps_and_bumps_version():
    plan = Plan(goal="g", steps=[Step(title="a", files=["a.py"]), Step(title="b", files=["b.py"])])
    plan = plan.with_status(plan.steps[0].step_id, "done")
    new = Plan(goal="g2", steps=[Step(title="a"), Step(title="c", files=["c.py"])])
    revised = plan.revised(new)
    assert revised.plan_id == plan.plan_id and revised.version == 2
    assert revised.steps[0].step_id == plan.steps[0].step_id and revised.steps[0].status == "done"
    assert revised.next_pending().title == "c"

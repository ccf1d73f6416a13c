"""The session view is a fold over its events: restoring from the log gives the same view."""

from pathlib import Path

from deepseek_ls.agent.plan import Plan, Step
from deepseek_ls.agent.routing_sink import RoutingSink, bound
from deepseek_ls.agent.session import Session
from deepseek_ls.agent.verify import derive_commands
from deepseek_ls.store.sessions import SessionStore


def test_restored_session_equals_live_session(tmp_path: Path):
    store = SessionStore(tmp_path)
    log = store.create(tmp_path, mode="agent", prompt="fix it")
    live = Session.restore(log.session_id, log)
    plan = Plan(goal="g", steps=[Step(title="a", files=["a.py"])])
    step = plan.steps[0]
    live.machine.to("Planning")
    live.emit("PlanCreated@v1", {"plan": plan.to_json()})
    live.machine.to("ExecutingStep")
    live.emit("StepMarked@v1", {"plan_id": plan.plan_id, "step_id": step.step_id, "status": "running"})
    live.emit("RouterDecision@v1", {"decision_id": "d1", "unit": "executor", "role": "executor", "features": {},
                                    "weights": {}, "contributions": {}, "score": 0.1, "threshold": 0.72,
                                    "reason_codes": [], "profile": "fast", "model": "deepseek-chat"})
    live.emit("PatchStaged@v1", {"patch_id": "p1", "files": ["a.py"], "hunks": [{"hunk_id": "h1"}]})
    live.machine.to("AwaitingApproval")
    live.emit("ApprovalRequested@v1", {"request_id": "r1", "kind": "patch.apply", "title": "t", "patch_id": "p1"})

    restored = Session.restore(log.session_id, store.open(log.session_id))
    assert restored.view() == live.view()
    view = restored.view()
    assert view["state"] == "AwaitingApproval" and view["pending_approvals"] == ["r1"]
    assert view["patches"][0] | {} == {"patch_id": "p1", "step_id": step.step_id, "profile": "fast", "decision_id": "d1",
                                       "files": ["a.py"], "hunk_ids": ["h1"], "applied": [], "rejected": []}


def test_routing_sink_sends_editor_events_to_the_patch_owner(tmp_path: Path):
    store = SessionStore(tmp_path)
    a = Session.restore(*(lambda log: (log.session_id, log))(store.create(tmp_path)))
    b = Session.restore(*(lambda log: (log.session_id, log))(store.create(tmp_path)))
    sink = RoutingSink(lambda pid: a if pid == "p1" else None)
    with bound(b):
        sink.emit("PatchRejected@v1", {"patch_id": "p2", "hunk_ids": []})
    sink.emit("PatchApplied@v1", {"patch_id": "p1", "hunk_ids": ["h"], "files": ["x"]})
    sink.emit("PatchApplied@v1", {"patch_id": "unknown", "hunk_ids": [], "files": []})  # nobody: dropped
    kinds_a = [(e.kind, e.payload.get("external")) for e in a.log.read()]
    kinds_b = [e.kind for e in b.log.read()]
    assert ("PatchApplied@v1", True) in kinds_a and "PatchRejected@v1" in kinds_b
    assert "PatchApplied@v1" not in kinds_b


def test_verification_commands_derived_from_project_type(tmp_path: Path):
    assert derive_commands(tmp_path) == []
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest"}}')
    assert derive_commands(tmp_path) == ["cargo test", "npm test", "python -m pytest -q"]

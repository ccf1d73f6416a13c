from deepseek_ls.agent.replay import _translate_ids, normalise
from deepseek_ls.store.events import Event

A = "01a20142-be8b-7000-9d65-e5f037416871"
B = "01a20142-c077-7001-8d58-bd9d7dfa6cf8"
C = "01a20199-0000-7000-8000-000000000001"
D = "01a20199-0000-7000-8000-000000000002"


def ev(seq, kind, payload):
    return Event(seq_no=seq, ts="t", session_id="s", kind=kind, payload=payload)


def test_ids_are_renamed_by_first_appearance_and_timings_dropped():
    rec = [ev(1, "StepMarked@v1", {"plan_id": A, "step_id": B, "status": "running"}),
           ev(2, "VerificationRun@v1", {"command": "pytest", "ok": True, "duration_ms": 12.0}),
           ev(3, "LLMCall@v1", {"call_id": "x"})]
    rep = [ev(1, "StepMarked@v1", {"plan_id": C, "step_id": D, "status": "running"}),
           ev(2, "VerificationRun@v1", {"command": "pytest", "ok": True, "duration_ms": 99.0})]
    assert normalise(rec) == normalise(rep)  # LLMCall is not a compared decision
    swapped = [ev(1, "StepMarked@v1", {"plan_id": D, "step_id": C, "status": "running"})]
    assert normalise(rec)[:1] == normalise(swapped)  # renaming is positional...
    mixed = [ev(1, "StepMarked@v1", {"plan_id": C, "step_id": C, "status": "running"})]
    assert normalise(rec)[:1] != normalise(mixed)  # ...but two ids are never merged into one


def test_request_arguments_are_translated_to_the_replay_ids():
    rec = [ev(1, "PlanCreated@v1", {"plan": {"plan_id": A, "steps": [{"step_id": B}]}}),
           ev(2, "AgentRequest@v1", {"op": "run_step", "args": {"step_id": B}})]
    replayed = [ev(1, "PlanCreated@v1", {"plan": {"plan_id": C, "steps": [{"step_id": D}]}})]
    out = _translate_ids(rec[1].payload, rec, 2, replayed)
    assert out == {"op": "run_step", "args": {"step_id": D}}

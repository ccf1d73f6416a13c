"""Replay is a check, not a rubber stamp: a session whose recorded answers were tampered with diverges,
and the report names the first differing event."""

from __future__ import annotations

import json

import pytest
from scenario_kit import diff, plan_json, scenario_config

from deepseek_ls.agent.replay import replay_session
from deepseek_ls.store.provenance import NotOurSession

ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)


async def test_tampered_recording_diverges_at_the_first_differing_event(make_agent, fake_deepseek, workspace):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    assert view["state"] == "Completed"
    sid = view["session_id"]

    # The person's own log edited by hand after its first event: no longer theirs (every line is
    # chained to the seal, docs/architecture.md) until they adopt it (`sessions --adopt`), which
    # they may; its recorded planner answer then names a different step.
    forged_id = sid
    forged = agent.store.log_path(sid)
    original = forged.read_bytes()
    lines = []
    for line in forged.read_text().splitlines():
        event = json.loads(line)
        if event["kind"] == "LLMCall@v1" and event["payload"]["role"] == "planner":
            event["payload"]["response"]["content"] = event["payload"]["response"]["content"].replace("Fix add", "Fix sub")
            line = json.dumps(event)
        lines.append(line)
    forged.write_text("\n".join(lines) + "\n")
    with pytest.raises(NotOurSession):  # an edited log is not replayed as the person's own
        await replay_session(workspace, agent.state_dir, scenario_config(), forged_id)
    agent.store.adopt(agent.store.adoptable(forged_id))

    report = await replay_session(workspace, agent.state_dir, scenario_config(), forged_id)
    assert not report.ok
    first_plan = next(e.seq_no for e in agent.store.open(forged_id).read() if e.kind == "PlanCreated@v1")
    assert report.divergence["seq_no"] == first_plan
    assert "PlanCreated@v1" in report.message and "Fix sub" in report.message
    forged.write_bytes(original)  # the fixture replays every session at teardown: theirs again as written
    agent.store.adopt(agent.store.adoptable(forged_id))

"""Every "no" ends in a defined state: each approval point of the agent loop × deny / cancel / no answer.

A real Agent (real patch store, verification, MCP server process, git worktrees for lanes) against
the fake DeepSeek server over HTTP; the person is `Person`, who refuses one kind of approval (or
question) and allows the rest, and who, told to give no answer, never answers: the core's
`policy.approval_timeout_seconds` (0.3 s here) ends the wait. Each case checks the session's state
and reason, that the refused thing was asked once (never again by itself), that nothing was
applied or run, and that the log stayed small. Every session replays exactly (`make_agent`).

On the old code a cancel was no answer at all (only deny existed), no answer hung forever, a
refused verification was asked again without end (`deepseek-ls run` filled 32 MB of log in 30 s),
and a cancelled question left the session Idle, where its step could not run again.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from scenario_kit import diff, plan_json, scenario_config

from deepseek_ls.config_models import McpServerConfig
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
HOSTILE_MCP = Path(__file__).resolve().parents[1] / "mcp" / "hostile_mcp_server.py"
TIMEOUT = 0.3
SAID = {"deny": "denied", "cancel": "cancelled", "never": f"no answer within {TIMEOUT:g} s"}
ANSWERS = [pytest.param("deny", id="deny"), pytest.param("cancel", id="cancel"), pytest.param("never", id="no-answer")]
MAX_EVENTS = 80  # a refusal writes a handful of events; the old verification loop wrote thousands


class Person:
    """Refuses approvals of `kind` (and, for `ask_user` / `mission`, questions) with `answer`: deny,
    cancel, or never (no answer); allows everything else. Asked the same kind again and again (the
    old loops), it fails the session instead of answering for ever."""

    def __init__(self, kind: str, answer: str) -> None:
        self.kind, self.answer = kind, answer
        self.asked: Counter[str] = Counter()
        self.questions: list[str] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked[request.kind] += 1
        if self.asked[request.kind] > 4:
            raise AssertionError(f"{request.kind} asked again and again")
        if request.kind != self.kind:
            return ApprovalDecision(request_id=request.request_id, answer="allow_once")
        if self.answer == "never":
            await asyncio.Event().wait()
        return ApprovalDecision(request_id=request.request_id, answer=self.answer)  # type: ignore[arg-type]

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        self.questions.append(question)
        if len(self.questions) > 4:
            raise AssertionError("asked again and again")
        if self.kind not in ("ask_user", "mission"):
            return "approve" if choices else "whatever you think"
        if self.answer == "never":
            await asyncio.Event().wait()
        return "reject" if self.answer == "deny" else None

    def stream(self, channel, text, *, session_id=None) -> None:
        return None

    def progress(self, token, message, percentage=None, *, done=False) -> None:
        return None


def config(**loop):
    cfg = scenario_config()
    cfg.policy.approval_timeout_seconds = TIMEOUT
    for key, value in loop.items():
        setattr(cfg.agent_loop, key, value)
    return cfg


def events(agent, sid: str):
    return agent.store.open(sid).read()


def paused(agent, view: dict, kind: str, answer: str) -> str:
    """The session is Paused on this refusal, the reason saying how; returns the reason."""
    assert view["state"] == "Paused", (view["state"], view["state_reason"], view["last_error"])
    assert view["refusal"]["kind"] == kind and view["refusal"]["answer"] == ("timeout" if answer == "never" else answer)
    assert SAID[answer] in view["state_reason"], view["state_reason"]
    assert len(events(agent, view["session_id"])) < MAX_EVENTS
    return view["state_reason"]


def commit_all(root: Path) -> None:
    """`root` as a git repository with one commit (lanes need one)."""
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                       capture_output=True, timeout=60)


# -- patch apply (the terminal's loop; ACP asks the same way) -----------------------------------


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_patch_apply_refused(make_agent, fake_deepseek, workspace, answer):
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    person = Person("patch.apply", answer)
    agent = make_agent(person, config())
    view = await agent.run("Fix add")

    paused(agent, view, "patch.apply", answer)
    assert person.asked == Counter({"patch.apply": 1})
    assert "a - b" in (workspace / "app.py").read_text()
    (patch,) = view["patches"]
    step = view["plan"]["steps"][0]
    if answer == "deny":  # a decision on the change: rejected, the step failed
        assert patch["rejected"] and not patch["applied"] and step["status"] == "failed"
    else:  # no decision: still staged for the person, the step still at approval
        assert not patch["rejected"] and not patch["applied"] and step["status"] == "running"
        assert "still staged" in view["state_reason"]
    assert [r.role for r in fake_deepseek.requests] == ["planner", "executor"]


# -- verification command (bash.run) ------------------------------------------------------------


@pytest.mark.parametrize("answer", ANSWERS)
async def test_never_hang_verification_refused_is_asked_once_per_run(make_agent, fake_deepseek, workspace, answer):
    """The step needs no change, so the loop goes straight to verifying (where the old loop asked
    without end); running the session again is the person's new action: asked once more, no more."""
    marker = workspace / f"ran-{uuid.uuid4().hex[:8]}"  # in the workspace (bound writable): were it run, the host would see it
    (workspace / "Makefile").write_text(f"test:\n\ttouch {marker}\n")
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Check add", ["app.py"]), verification=["make test X=1"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": "NO_CHANGE|add is fine as it is"})
    person = Person("bash.run", answer)
    agent = make_agent(person, config())
    try:
        view = await agent.run("Check add")
        reason = paused(agent, view, "bash.run", answer)
        assert "make test X=1" in reason and "was not run" in reason
        assert person.asked == Counter({"bash.run": 1})
        before = len(events(agent, view["session_id"]))

        again = await asyncio.wait_for(agent.run(session_id=view["session_id"]), 60)
        paused(agent, again, "bash.run", answer)
        assert person.asked == Counter({"bash.run": 2})
        assert len(events(agent, view["session_id"])) - before < 20
        assert not marker.exists()
        runs = [e.payload for e in events(agent, view["session_id"]) if e.kind == "VerificationRun@v1"]
        assert len(runs) == 2 and all(r["exit_code"] is None and "not approved" in r["output"] for r in runs)
    finally:
        marker.unlink(missing_ok=True)


# -- MCP tool call ---------------------------------------------------------------------------------


@pytest.fixture
def acting_mcp(workspace: Path, tmp_path: Path):
    """The hostile test server with an acting tool (`lookup`, each call approved); its calls land in `calls`."""
    state = tmp_path / "mcp-state"
    specs = McpServerSet({"srv": McpServerSpec(
        "srv", McpServerConfig(command=sys.executable, args=[str(HOSTILE_MCP), "acting", str(state)]), "test", "user")})

    def make(cfg):
        return McpManager(workspace, specs, cfg.mcp, log_dir=workspace / ".deepseek" / "mcp")

    make.calls = state / "calls.jsonl"  # type: ignore[attr-defined]
    return make


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_mcp_call_refused(make_agent, fake_deepseek, acting_mcp, workspace, answer):
    """A deny is told to the model, which goes on without the tool (the same call again is answered
    from the refusal, not asked); a cancel or no answer stops the step where it is."""
    call = {"name": "mcp_srv_lookup", "arguments": {"q": "add"}}
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"}, "tool_calls": [call]})
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool", "last_contains": "by the person"},
                       "tool_calls": [call]})  # the model tries again
    fake_deepseek.add({"match": {"role": "executor", "last_role": "tool"}, "content": FIX})
    person = Person("mcp.call", answer)
    cfg = config()
    agent = make_agent(person, cfg, mcp=acting_mcp(cfg))
    try:
        view = await agent.run("Fix add")
    finally:
        await agent.aclose()

    assert person.asked["mcp.call"] == 1
    assert not acting_mcp.calls.exists() or acting_mcp.calls.read_text() == ""
    results = [e.payload for e in events(agent, view["session_id"])
               if e.kind == "ToolResult@v1" and e.payload["tool"] == "mcp_srv_lookup"]
    if answer == "deny":
        assert view["state"] == "Completed", view["state_reason"]  # moved on without the tool
        assert len(results) == 2 and not any(r["ok"] for r in results)
        assert "denied by the person" in results[0]["error"] and "denied earlier" in results[1]["error"]
        assert "return a + b" in (workspace / "app.py").read_text()
    else:
        reason = paused(agent, view, "mcp.call", answer)
        assert "mcp_srv_lookup" in reason and "run it again" in reason
        assert view["plan"]["steps"][0]["status"] == "pending"
        assert len(results) == 1 and view["patches"] == []
        assert [r.role for r in fake_deepseek.requests] == ["planner", "executor"]


# -- AskUser ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [a for a in ANSWERS if a.id != "deny"])
@pytest.mark.parametrize("who", ["planner", "executor"])
async def test_never_hang_question_refused(make_agent, fake_deepseek, workspace, who, answer):
    """A clarifying question cancelled or left unanswered pauses the session (the old code sent it
    back to Idle, from where a step could not run again); running it again asks again."""
    if who == "planner":
        fake_deepseek.add({"match": {"role": "planner"}, "content": "ASK_USER|Which greeting style?", "repeat": True})
    else:
        fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix add", ["app.py"]))})
        fake_deepseek.add({"match": {"role": "executor"}, "content": "ASK_USER|Which greeting style?", "repeat": True})
    person = Person("ask_user", answer)
    agent = make_agent(person, config())
    view = await agent.run("Change the greeting")

    reason = paused(agent, view, "ask_user", answer)
    assert "Which greeting style?" in reason and person.questions == ["Which greeting style?"]
    assert view["questions"][-1]["cancelled"] is True
    if who == "executor":
        assert view["plan"]["steps"][0]["status"] == "pending"

    again = await asyncio.wait_for(agent.run(session_id=view["session_id"]), 60)
    paused(agent, again, "ask_user", answer)
    assert person.questions == ["Which greeting style?"] * 2
    assert (workspace / "app.py").read_text().count("a - b") == 1


# -- the Hetun mission card --------------------------------------------------------------------------


def hetun_script(fake) -> None:
    fake.add({"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\n"})
    fake.add({"match": {"role": "hetun.sub"}, "content": "FINDING|0.9|app.py:6 add returns a - b\n"})
    fake.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"})
    fake.add({"match": {"role": "planner"},
              "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})


@pytest.mark.parametrize("answer", ANSWERS)
async def test_never_hang_mission_card_refused(make_agent, fake_deepseek, workspace, answer):
    hetun_script(fake_deepseek)
    person = Person("mission", answer)
    agent = make_agent(person, config())
    view = await agent.run("Fix add in app.py", mode="hetun")

    assert view["state"] == "Paused" and len(person.questions) == 1
    if answer == "deny":  # "reject": a decision
        assert "mission rejected" in view["state_reason"] and view["hetun"]["decision"] == "reject"
    else:
        reason = paused(agent, view, "mission", answer)
        assert "still waits" in reason and not view["hetun"].get("decision")
    assert "checkpoint" not in view["hetun"] and view["patches"] == []
    assert "executor" not in [r.role for r in fake_deepseek.requests]
    assert "a - b" in (workspace / "app.py").read_text()


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_mission_scope_growth_refused(make_agent, fake_deepseek, workspace, answer):
    """An approved mission's patch reaches a file the mission never named: asked explicitly
    (`scope.grow`); a "no" of any kind applies nothing, and only a deny rejects the patch."""
    from test_hetun_scenarios import grown_scope_script

    grown_scope_script(fake_deepseek)
    before = {p: (workspace / p).read_text() for p in ("app.py", "util.py")}
    person = Person("scope.grow", answer)  # the mission card itself is approved
    agent = make_agent(person, config())
    view = await agent.run("Fix add in app.py", mode="hetun")

    paused(agent, view, "patch.apply", answer)
    assert person.asked == Counter({"scope.grow": 1}) and len(person.questions) == 1
    assert {p: (workspace / p).read_text() for p in before} == before
    assert "PatchApplied@v1" not in [e.kind for e in events(agent, view["session_id"])]
    assert bool(view["patches"][-1]["rejected"]) is (answer == "deny")


# -- teammate lanes: the merged result's approval, and a lane's own -----------------------------------


TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])


def lanes_script(fake, verification: str) -> None:
    fake.add({"match": {"role": "planner"},
              "content": plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=[verification])})
    fake.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX})
    fake.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})


@pytest.mark.parametrize("answer", ANSWERS)
async def test_no_unapproved_exec_lane_merge_refused(make_agent, fake_deepseek, workspace, answer):
    commit_all(workspace)
    lanes_script(fake_deepseek, "git status")
    person = Person("patch.apply", answer)
    agent = make_agent(person, config(teammate_mode=True))
    view = await agent.run("Fix add and add triple")

    paused(agent, view, "patch.apply", answer)
    assert person.asked["patch.apply"] == 1  # the first merged lane result; the second waits its turn
    assert "a - b" in (workspace / "app.py").read_text() and "triple" not in (workspace / "util.py").read_text()
    merged = [e.payload for e in events(agent, view["session_id"]) if e.kind == "LaneMerged@v1"]
    assert len(merged) == 2 and all(m["ok"] for m in merged)


@pytest.mark.parametrize("answer", ANSWERS)
async def test_never_hang_lane_refusal_pauses_instead_of_running_the_step_here(make_agent, fake_deepseek, workspace,
                                                                               answer):
    """A lane whose verification the person refused stops; its step is not run again in the
    workspace (where it would ask again): the session pauses, saying which lane and why."""
    (workspace / "Makefile").write_text("test:\n\ttrue\n")
    commit_all(workspace)
    lanes_script(fake_deepseek, "make test X=1")
    person = Person("bash.run", answer)
    agent = make_agent(person, config(teammate_mode=True))
    view = await agent.run("Fix add and add triple")

    reason = paused(agent, view, "lane", answer)
    assert "lane of step" in reason and "make test X=1" in reason
    assert person.asked["bash.run"] == 2  # each lane asked once, at the same time
    assert person.asked["patch.apply"] == 0 and view["patches"] == []
    assert [r.role for r in fake_deepseek.requests].count("executor") == 2  # the lanes' own, nothing here
    assert "a - b" in (workspace / "app.py").read_text()

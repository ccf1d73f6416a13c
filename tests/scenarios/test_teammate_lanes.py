"""Teammate lanes end to end: a real Agent, real git worktrees, the fake DeepSeek server over HTTP.

A 3-step plan: "Fix add" (app.py) and "Add triple" (util.py) are independent and
run at once in lanes; "Greet with comma" (app.py) shares a file with the first and
waits. Every session (the lanes' own too) must replay exactly (the `make_agent`
fixture checks that after each test).
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from deepseek_ls.agent.lanes import worktree as wt_ops
from scenario_kit import ScriptedUI, diff, plan_json, scenario_config

FIX_ADD = diff("app.py", ["    return a - b"], ["    return a + b"], start=5)
GREET = diff("app.py", ['    return "Hello " + name'], ['    return "Hello, " + name + "!"'], start=1)
TRIPLE = diff("util.py", ["def double(x):", "    return x * 2"],
              ["def double(x):", "    return x * 2", "", "", "def triple(x):", "    return x * 3"])
PLAN = plan_json(("Fix add", ["app.py"]), ("Add triple", ["util.py"]), ("Greet with comma", ["app.py"]),
                 verification=["git status"])
LATENCY = {"delay_before_first_byte": 0.4}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    return workspace


def script(fake, *, latency: bool = True, plan: str = PLAN) -> None:
    slow = {"fault": LATENCY} if latency else {}
    fake.add({"match": {"role": "planner"}, "content": plan})
    fake.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD, **slow})
    fake.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE, **slow})
    fake.add({"match": {"role": "executor", "contains": "Step: Greet with comma"}, "content": GREET})


def lane_config(on: bool = True):
    cfg = scenario_config()
    cfg.agent_loop.teammate_mode = on
    return cfg


def events(agent, sid: str):
    return agent.store.open(sid).read()


def ts(event) -> datetime:
    return datetime.fromisoformat(event.ts.replace("Z", "+00:00"))


async def test_independent_steps_run_at_once_and_merge_like_the_sequential_run(make_agent, fake_deepseek, repo,
                                                                                 tmp_path):
    sequential = tmp_path / "sequential"
    shutil.copytree(repo, sequential)
    script(fake_deepseek)
    agent = make_agent(config=lane_config())
    view = await agent.run("Fix add, add triple, greet with a comma")
    assert view["state"] == "Completed", view["state_reason"]

    log = events(agent, view["session_id"])
    spawned = [e for e in log if e.kind == "LaneSpawned@v1"]
    started = [e for e in log if e.kind == "LaneStarted@v1"]
    finished = [e for e in log if e.kind == "LaneCompleted@v1"]
    assert [e.payload["step_title"] for e in spawned] == ["Fix add", "Add triple"]  # the third waited
    assert len(started) == 2 and len(finished) == 2
    # Each lane's `git status` ran in its worktree (a linked worktree of this repository under /tmp).
    assert [e.payload["verified"] for e in finished] == [True, True]
    # Concurrent: both lanes started before either finished (timestamps of the event log).
    assert max(ts(e) for e in started) < min(ts(e) for e in finished)
    lane_calls = []
    for e in started:
        calls = [c for c in events(agent, e.payload["lane_session_id"]) if c.kind == "LLMCall@v1"]
        assert len(calls) == 1
        end = ts(calls[0])
        lane_calls.append((end.timestamp() - calls[0].payload["total_ms"] / 1000, end.timestamp()))
    (a0, a1), (b0, b1) = lane_calls
    assert a0 < b1 and b0 < a1, "the two lanes' model calls overlap in time"
    merged = [e.payload for e in log if e.kind == "LaneMerged@v1"]
    assert [m["ok"] for m in merged] == [True, True]
    assert [m["step_id"] for m in merged] == [e.payload["step_id"] for e in spawned]  # step order

    # The same plan without lanes gives byte-identical files.
    from deepseek_ls.agent import Agent
    from deepseek_ls.llm.client import LLMClient

    seq = Agent(sequential, lane_config(False), llm=LLMClient(lane_config(False).llm), ui=ScriptedUI())
    try:
        script(fake_deepseek, latency=False)
        seq_view = await seq.run("Fix add, add triple, greet with a comma")
    finally:
        await seq.llm.aclose()
    assert seq_view["state"] == "Completed"
    assert not [e for e in events(seq, seq_view["session_id"]) if e.kind.startswith("Lane")]
    for name in ("app.py", "util.py", "tests/test_app.py"):
        assert (repo / name).read_bytes() == (sequential / name).read_bytes(), name

    # Nothing left behind: no worktree, no lane branch, no owner file.
    assert "lane/" not in git(repo, "branch", "--list")
    assert git(repo, "worktree", "list").count("\n") == 1
    assert not list((agent.state_dir / "lanes").glob("*.json"))


class EditingUI(ScriptedUI):
    """The person edits app.py in the workspace while the lanes run (when the first lane starts),
    and the workspace is checked each time a lane finishes."""

    def __init__(self, root: Path, new_text: str) -> None:
        super().__init__()
        self.root, self.new_text = root, new_text
        self.at_lane_end: list[str] = []

    def stream(self, channel, text, *, session_id=None) -> None:
        super().stream(channel, text, session_id=session_id)
        if channel == "status" and "lane 1: step" in text and "started" in text:
            (self.root / "app.py").write_text(self.new_text)
        if channel == "status" and text.startswith("lane ") and " done (" in text:
            self.at_lane_end.append((self.root / "app.py").read_text())


async def test_never_clobber_user_edits_made_while_lanes_run(make_agent, fake_deepseek, repo):
    user_text = (repo / "app.py").read_text().replace("    return a - b", "    return sum([a, -b])  # mine")
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["git status"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD,
                       "fault": LATENCY})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE,
                       "fault": LATENCY})
    # The lane's result no longer fits the person's edit: the step runs again in the workspace.
    fake_deepseek.add({"match": {"role": "executor", "contains": "could not be merged"},
                       "content": diff("app.py", ["    return sum([a, -b])  # mine"], ["    return sum([a, b])  # mine"],
                                       start=5)})
    ui = EditingUI(repo, user_text)
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add and add triple")
    assert view["state"] == "Completed", view["state_reason"]
    assert ui.at_lane_end == [user_text, user_text]  # no lane wrote into the workspace
    log = events(agent, view["session_id"])
    merged = {e.payload["step_id"]: e.payload for e in log if e.kind == "LaneMerged@v1"}
    steps = {s["title"]: s["step_id"] for s in view["plan"]["steps"]}
    assert merged[steps["Fix add"]]["ok"] is False and "no longer fits" in merged[steps["Fix add"]]["conflict"]
    assert merged[steps["Add triple"]]["ok"] is True
    assert any(e.kind == "FailureClassified@v1" and e.payload["failure_class"] == "PatchMismatch" for e in log)
    assert "    return sum([a, b])  # mine\n" in (repo / "app.py").read_text()  # built on the person's edit
    assert "def triple" in (repo / "util.py").read_text()


async def test_a_failed_verification_after_the_merge_goes_to_the_recovery_loop(make_agent, fake_deepseek, repo):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["python -m pytest -q"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix:"}, "content": GREET})
    agent = make_agent(config=lane_config())
    view = await agent.run("Fix add and add triple")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    assert [e.payload["ok"] for e in log if e.kind == "LaneMerged@v1"] == [True, True]
    runs = [e.payload["ok"] for e in log if e.kind == "VerificationRun@v1"]
    assert runs == [False, True]  # the merged result failed (greet), the fix step repaired it
    assert any(e.kind == "FailureClassified@v1" and e.payload["failure_class"] == "MechanicalVerifyFailure"
               for e in log)
    assert '"Hello, " + name + "!"' in (repo / "app.py").read_text()


async def test_without_git_teammate_mode_says_so_and_runs_the_steps_in_order(make_agent, fake_deepseek, workspace):
    script(fake_deepseek, latency=False, plan=PLAN.replace('"git status"', '"python -m pytest -q"'))
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add, add triple, greet with a comma")
    assert view["state"] == "Completed"
    assert not [e for e in events(agent, view["session_id"]) if e.kind.startswith("Lane")]
    notices = [t for c, t in ui.streamed if c == "status" and "teammate mode" in t]
    assert len(notices) == 1 and "not a git repository" in notices[0] and "one after the other" in notices[0]
    assert "def triple" in (workspace / "util.py").read_text()


async def test_always_answers_a_hanging_lane_is_cancelled_at_its_time_budget(make_agent, fake_deepseek, repo):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["git status"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE,
                       "fault": {"keepalive_forever": True}})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": TRIPLE})
    cfg = lane_config()
    # The budget binds the well-behaved lane too (worktree, executor, sandboxed verification):
    # it took 0.5-0.8 s at load 9.5 here, so 2 s left it one stall away from timing out as well.
    cfg.agent_loop.lane_timeout_seconds = 5.0
    cfg.llm.idle_timeout_seconds = 600  # only the lane's budget can stop it
    agent = make_agent(config=cfg)
    view = await agent.run("Fix add and add triple")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    failed = [e.payload for e in log if e.kind == "LaneFailed@v1"]
    assert len(failed) == 1 and "lane_timeout_seconds" in failed[0]["reason"]
    assert "def triple" in (repo / "util.py").read_text() and "a + b" in (repo / "app.py").read_text()
    assert "lane/" not in git(repo, "branch", "--list")


async def test_no_leak_lanes_left_by_a_killed_run_are_removed_when_the_agent_starts(make_agent, repo):
    import json

    state = repo / ".deepseek"
    left = wt_ops.create(repo, state, "left-1", "lane/killed/step", buffers={}, deny_paths=[])
    (left.root / "app.py").write_text("half-done lane edit\n")
    info = json.loads(left.owner_file.read_text())
    left.owner_file.write_text(json.dumps({**info, "pid": 2**22 + 11, "process": "gone"}))
    make_agent(config=lane_config())
    assert not left.tree.exists() and not left.owner_file.exists()
    assert "lane/" not in git(repo, "branch", "--list")


async def test_an_approved_hetun_mission_runs_its_independent_steps_in_lanes(make_agent, fake_deepseek, repo):
    fake_deepseek.add({"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\n"})
    fake_deepseek.add({"match": {"role": "hetun.sub"}, "repeat": True, "content": "FINDING|0.8|app.py:5 add subtracts\n"})
    fake_deepseek.add({"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"})
    script(fake_deepseek)
    ui = ScriptedUI(answers=["approve"])
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add, add triple, greet with a comma", mode="hetun")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    kinds = [e.kind for e in log]
    assert kinds.index("MissionDecided@v1") < kinds.index("LaneSpawned@v1")
    assert [e.payload["step_title"] for e in log if e.kind == "LaneSpawned@v1"] == ["Fix add", "Add triple"]
    assert kinds.index("MissionCheckpoint@v1") < kinds.index("PatchApplied@v1")
    assert ui.approvals == []  # the mission's files: no per-hunk prompt, lanes or not
    assert "a + b" in (repo / "app.py").read_text() and "triple" in (repo / "util.py").read_text()


async def test_a_lane_that_changed_another_lanes_file_is_not_merged_and_reruns_here(make_agent, fake_deepseek, repo):
    """Lane 2 grows its scope (its executor edits app.py, its planner adds the file): its result overlaps
    lane 1's, so it is a conflict; step 2 runs again in the workspace, after step 1 is applied."""
    fake_deepseek.add({"match": {"role": "planner", "contains": "Request:"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["git status"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": GREET})
    fake_deepseek.add({"match": {"role": "planner", "contains": "also needs these files"}, "content": plan_json(
        ("Add triple", ["util.py", "app.py"]), verification=["git status"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Add triple"}, "content": GREET})
    fake_deepseek.add({"match": {"role": "executor", "contains": "could not be merged"}, "content": TRIPLE})
    agent = make_agent(config=lane_config())
    view = await agent.run("Fix add and add triple")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    merged = [e.payload for e in log if e.kind == "LaneMerged@v1"]
    assert [m["ok"] for m in merged] == [True, False]
    assert "which the lane of step 'Fix add' changed too" in merged[1]["conflict"]
    text = (repo / "app.py").read_text()
    assert "a + b" in text and '"Hello, "' not in text  # lane 2's stray edit of app.py never landed
    assert "def triple" in (repo / "util.py").read_text()


async def test_no_leak_a_cancel_while_lanes_run_pauses_and_removes_every_worktree(make_agent, fake_deepseek, repo):
    import asyncio

    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Add triple", ["util.py"]), verification=["git status"])})
    for title in ("Fix add", "Add triple"):
        fake_deepseek.add({"match": {"role": "executor", "contains": f"Step: {title}"}, "content": FIX_ADD,
                           "fault": {"keepalive_forever": True}})
    cfg = lane_config()
    cfg.llm.idle_timeout_seconds = 600
    agent = make_agent(config=cfg)
    task = asyncio.ensure_future(agent.run("Fix add and add triple"))
    # Cancel while both lanes' model calls are held at the server. (Cancelling before a lane has
    # asked its model is another case, whose replay does not yet reproduce the stop.)
    for _ in range(1200):  # a hang guard of two minutes, not a timing assumption
        if [r.role for r in fake_deepseek.requests].count("executor") >= 2:
            break
        await asyncio.sleep(0.1)
    assert [r.role for r in fake_deepseek.requests].count("executor") >= 2, "both lanes asked their model"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    main = next(s for s in agent.store.list() if s.prompt == "Fix add and add triple" and
                "LaneSpawned@v1" in [e.kind for e in events(agent, s.session_id)])
    log = events(agent, main.session_id)
    assert [e.payload["reason"] for e in log if e.kind == "LaneFailed@v1"] == ["cancelled", "cancelled"]
    assert agent.session_view(main.session_id)["state"] == "Paused"
    # Removal finishes in the lanes' cleanup (worker threads that outlive the cancel): wait for it,
    # up to a minute as a hang guard (git worktree removal on a loaded runner can take seconds).
    for _ in range(600):
        if "lane/" not in git(repo, "branch", "--list") and git(repo, "worktree", "list").count("\n") == 1:
            break
        await asyncio.sleep(0.1)
    assert "lane/" not in git(repo, "branch", "--list") and git(repo, "worktree", "list").count("\n") == 1
    assert (repo / "app.py").read_text().count("a - b") == 1  # nothing written


# -- what a lane's result may hold: deletions, new files, binary files (issue 19) -----------------

DROP_UTIL = "```diff\n--- a/util.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-def double(x):\n-    return x * 2\n```"
NEW_HELPERS = ("```diff\n--- /dev/null\n+++ b/helpers.py\n@@ -0,0 +1,2 @@\n+def triple(x):\n+    return x * 3\n```\n"
               "```diff\n--- /dev/null\n+++ b/pkg/__init__.py\n```")


async def test_a_lanes_deleted_and_new_files_merge_as_deletions_and_additions(make_agent, fake_deepseek, repo,
                                                                               tmp_path):
    """Lane 2 deletes util.py and creates helpers.py and an empty pkg/__init__.py: its result is staged as
    a deletion and two additions, each reviewed by the person like any change, and the workspace ends
    byte-identical to the sequential run."""
    sequential = tmp_path / "sequential"
    shutil.copytree(repo, sequential)
    plan = plan_json(("Fix add", ["app.py"]), ("Replace util", ["util.py", "helpers.py", "pkg/__init__.py"]),
                     verification=["git status"])

    def script_it() -> None:
        fake_deepseek.add({"match": {"role": "planner"}, "content": plan})
        fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
        fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Replace util"},
                           "content": DROP_UTIL + "\n" + NEW_HELPERS})

    script_it()
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add and replace util with helpers")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    merged = [e.payload for e in log if e.kind == "LaneMerged@v1"]
    assert [m["ok"] for m in merged] == [True, True]
    assert not any(e.kind == "FailureClassified@v1" for e in log)
    staged = {e.payload["patch_id"]: e.payload for e in log if e.kind == "PatchStaged@v1"}
    lane2 = staged[merged[1]["patch_ids"][0]]
    assert sorted(lane2["files"]) == ["helpers.py", "pkg/__init__.py", "util.py"]
    assert "deleted file mode" in lane2["diff"] and "+++ b/helpers.py" in lane2["diff"]
    reviewed = {f for a in ui.approvals if a.patch_id == lane2["patch_id"] for f in a.files}
    assert reviewed == {"helpers.py", "pkg/__init__.py", "util.py"}  # the person was asked, deletion included
    assert not (repo / "util.py").exists()
    assert (repo / "helpers.py").read_text() == "def triple(x):\n    return x * 3\n"
    assert (repo / "pkg" / "__init__.py").read_bytes() == b""

    from deepseek_ls.agent import Agent
    from deepseek_ls.llm.client import LLMClient

    seq = Agent(sequential, lane_config(False), llm=LLMClient(lane_config(False).llm), ui=ScriptedUI())
    try:
        script_it()
        seq_view = await seq.run("Fix add and replace util with helpers")
    finally:
        await seq.llm.aclose()
    assert seq_view["state"] == "Completed"
    for name in ("app.py", "helpers.py", "pkg/__init__.py", "util.py"):
        assert (repo / name).exists() == (sequential / name).exists(), name
        if (repo / name).exists():
            assert (repo / name).read_bytes() == (sequential / name).read_bytes(), name


BUILD_TEST = '''from pathlib import Path

STAMP = Path(__file__).resolve().parent.parent / "stamp.txt"


def test_stamp_is_built():
    if STAMP.read_bytes() == b"v2\\n":  # the build turns a bumped stamp into its binary form
        STAMP.write_bytes(b"v2\\x00\\xff\\xfe")
'''
BUMP = (diff("stamp.txt", ["v1"], ["v2"]) + "\n"
        + "```diff\n--- a/notes.md\n+++ b/notes.md\n@@ -1,1 +1,2 @@\n # notes\n+- stamp bumped to v2\n```")


async def test_a_lane_that_changed_a_binary_file_is_refused_whole_naming_it(make_agent, fake_deepseek, workspace):
    """Lane 2's verification turns stamp.txt into binary bytes: its result (stamp.txt + notes.md) is not
    merged at all — not even notes.md — with a message naming stamp.txt, and the step runs in the
    workspace as without lanes."""
    (workspace / "stamp.txt").write_text("v1\n")
    (workspace / "notes.md").write_text("# notes\n")
    (workspace / "tests" / "test_stamp.py").write_text(BUILD_TEST)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Bump stamp", ["stamp.txt", "notes.md"]),
        verification=["python -m pytest -q tests/test_stamp.py"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Bump stamp"}, "content": BUMP})
    fake_deepseek.add({"match": {"role": "executor", "contains": "which is not UTF-8 text"}, "content": BUMP})
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add and bump the stamp")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    steps = {s["title"]: s["step_id"] for s in view["plan"]["steps"]}
    done = {e.payload["step_id"]: e.payload for e in log if e.kind == "LaneCompleted@v1"}
    assert done[steps["Bump stamp"]]["binary_files"] == ["stamp.txt"]
    assert "stamp.txt" not in done[steps["Bump stamp"]]["diff"] and "notes.md" in done[steps["Bump stamp"]]["diff"]
    merged = {e.payload["step_id"]: (e.seq_no, e.payload) for e in log if e.kind == "LaneMerged@v1"}
    assert merged[steps["Fix add"]][1]["ok"] is True
    refused_at, refused = merged[steps["Bump stamp"]]
    assert refused["ok"] is False and refused["patch_ids"] == [] and refused["binary_files"] == ["stamp.txt"]
    assert "stamp.txt, which is not UTF-8 text" in refused["conflict"]
    assert not any(e.kind == "FailureClassified@v1" for e in log)  # nothing clashed: not a PatchMismatch
    assert any(c == "status" and "not merged" in t and "stamp.txt" in t for c, t in ui.streamed)
    lanes = {lane["step_id"]: lane for lane in agent.session_view(view["session_id"])["lanes"]["lanes"]}
    assert lanes[steps["Bump stamp"]]["state"] == "refused" and "stamp.txt" in lanes[steps["Bump stamp"]]["reason"]
    # Never half-applied: notes.md is staged once, by the step's run in the workspace after the refusal.
    notes = [e for e in log if e.kind == "PatchStaged@v1" and "notes.md" in e.payload["files"]]
    assert len(notes) == 1 and notes[0].seq_no > refused_at and not notes[0].payload["diff"].startswith("diff --git")
    # The workspace ends as the sequential run leaves it: the build ran here on the bumped stamp.
    assert (workspace / "stamp.txt").read_bytes() == b"v2\x00\xff\xfe"
    assert (workspace / "notes.md").read_text() == "# notes\n- stamp bumped to v2\n"
    assert "a + b" in (workspace / "app.py").read_text()


MODE_TEST = '''import os
from pathlib import Path

TOOL = Path(__file__).resolve().parent.parent / "tool.sh"


def test_tool_is_executable():
    if TOOL.read_text() == "echo v2\\n":  # the build makes the new tool executable
        os.chmod(TOOL, 0o755)
'''
TOOL_V2 = (diff("tool.sh", ["echo v1"], ["echo v2"]) + "\n"
           + "```diff\n--- a/notes.md\n+++ b/notes.md\n@@ -1,1 +1,2 @@\n # notes\n+- tool v2\n```")


async def test_a_lane_that_changed_a_file_mode_is_refused_whole_and_the_mode_survives(make_agent, fake_deepseek,
                                                                                      workspace):
    """Lane 2's verification makes tool.sh executable. A PatchSet carries no mode, so before, the
    lane's text change was merged and its mode dropped without a word (here the workspace's own
    verification happens to make it again; a mode made any other way was lost). Now its result is
    not merged (not even notes.md), the message names tool.sh and its modes, and the step runs in
    the workspace, where the mode is made as it is: tool.sh ends executable, as without lanes."""
    (workspace / "tool.sh").write_text("echo v1\n")
    (workspace / "notes.md").write_text("# notes\n")
    (workspace / "tests" / "test_tool.py").write_text(MODE_TEST)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Tool v2", ["tool.sh", "notes.md"]),
        verification=["python -m pytest -q tests/test_tool.py"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Tool v2"}, "content": TOOL_V2})
    fake_deepseek.add({"match": {"role": "executor", "contains": "changed the mode of tool.sh"}, "content": TOOL_V2})
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=lane_config())
    view = await agent.run("Fix add and ship tool v2")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    steps = {s["title"]: s["step_id"] for s in view["plan"]["steps"]}
    done = {e.payload["step_id"]: e.payload for e in log if e.kind == "LaneCompleted@v1"}
    assert done[steps["Tool v2"]]["mode_changes"] == ["tool.sh (100644 -> 100755)"]
    assert done[steps["Fix add"]]["mode_changes"] == []
    merged = {e.payload["step_id"]: (e.seq_no, e.payload) for e in log if e.kind == "LaneMerged@v1"}
    assert merged[steps["Fix add"]][1]["ok"] is True
    refused_at, refused = merged[steps["Tool v2"]]
    assert refused["ok"] is False and refused["patch_ids"] == []
    assert refused["mode_changes"] == ["tool.sh (100644 -> 100755)"] and refused["binary_files"] == []
    assert "changed the mode of tool.sh (100644 -> 100755)" in refused["conflict"]
    assert not any(e.kind == "FailureClassified@v1" for e in log)  # nothing clashed: not a PatchMismatch
    assert any(c == "status" and "not merged" in t and "tool.sh" in t for c, t in ui.streamed)
    lanes = {lane["step_id"]: lane for lane in agent.session_view(view["session_id"])["lanes"]["lanes"]}
    assert lanes[steps["Tool v2"]]["state"] == "refused" and "tool.sh" in lanes[steps["Tool v2"]]["reason"]
    notes = [e for e in log if e.kind == "PatchStaged@v1" and "notes.md" in e.payload["files"]]
    assert len(notes) == 1 and notes[0].seq_no > refused_at  # staged once, by the step's run here
    # The mode survived: the step's verification ran here on the new tool.
    assert (workspace / "tool.sh").read_text() == "echo v2\n"
    assert (workspace / "tool.sh").stat().st_mode & 0o777 == 0o755
    assert (workspace / "notes.md").read_text() == "# notes\n- tool v2\n"
    assert "a + b" in (workspace / "app.py").read_text()


async def test_never_drop_a_lane_whose_only_change_is_a_binary_file(make_agent, fake_deepseek, workspace):
    """Lane 2 changes stamp.txt alone and its verification turns it into binary bytes: its text diff
    is empty. Before, that was taken for "no change": the step was marked done and the bump was lost
    (the workspace kept v1). Now the result is refused and the step runs in the workspace."""
    (workspace / "stamp.txt").write_text("v1\n")
    (workspace / "tests" / "test_stamp.py").write_text(BUILD_TEST)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    bump = diff("stamp.txt", ["v1"], ["v2"])
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(
        ("Fix add", ["app.py"]), ("Bump stamp", ["stamp.txt"]),
        verification=["python -m pytest -q tests/test_stamp.py"])})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Fix add"}, "content": FIX_ADD})
    fake_deepseek.add({"match": {"role": "executor", "contains": "Step: Bump stamp"}, "content": bump})
    fake_deepseek.add({"match": {"role": "executor", "contains": "which is not UTF-8 text"}, "content": bump})
    agent = make_agent(config=lane_config())
    view = await agent.run("Fix add and bump the stamp")
    assert view["state"] == "Completed", view["state_reason"]
    log = events(agent, view["session_id"])
    steps = {s["title"]: s["step_id"] for s in view["plan"]["steps"]}
    merged = {e.payload["step_id"]: e.payload for e in log if e.kind == "LaneMerged@v1"}
    assert merged[steps["Bump stamp"]]["ok"] is False and merged[steps["Bump stamp"]]["binary_files"] == ["stamp.txt"]
    assert (workspace / "stamp.txt").read_bytes() == b"v2\x00\xff\xfe"  # bumped (and built) here

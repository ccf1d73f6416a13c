"""Rewind (agent/rewind.py): every prompt is a checkpoint; code, conversation or both go back to before
one, the person's later typing kept (3-way, as undo), an overlap refused naming the files with nothing
changed, a redo putting the rewind back, and a file an approved command wrote taken out like an apply.

The model is the fake DeepSeek server over loopback; every session is replayed afterwards by the
`make_agent` fixture (the rewind's events are re-emitted where they were).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from scenario_kit import APP, UTIL, diff, plan_json

from deepseek_ls.agent.rewind import RewindRefused, conversation_after

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
FIXED = APP.replace("return a - b", "return a + b")
TRIPLE = diff("util.py", ["    return x * 2"], ["    return x * 2", "", "", "def triple(x):", "    return x * 3"],
              start=2)
GREET_EDIT = 'return "Hi " + name'  # the person's typing: another line than the rewind restores


def _script(fake) -> None:
    fake.add({"match": {"role": "planner", "contains": "Fix add"},
              "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor", "contains": "Fix add"}, "content": FIX})
    fake.add({"match": {"role": "planner", "contains": "Add triple"}, "content": plan_json(("Add triple", ["util.py"]),
                                                                                verification=["python -m pytest -q -k add"])})
    fake.add({"match": {"role": "executor", "contains": "Add triple"}, "content": TRIPLE})


async def _two_prompts(make_agent, fake, workspace):
    _script(fake)
    agent = make_agent()
    first = await agent.run("Fix add")
    second = await agent.run("Add triple")
    assert first["state"] == second["state"] == "Completed", (first["state_reason"], second["state_reason"])
    assert (workspace / "app.py").read_text() == FIXED and "def triple" in (workspace / "util.py").read_text()
    return agent, first["session_id"], second["session_id"]


def _events(agent, sid: str, kind: str) -> list[dict]:
    return [e.payload for e in agent.store.open(sid).read() if e.kind == kind]


async def test_never_clobber_rewind_code_keeps_later_typing_and_redo_puts_it_back(make_agent, fake_deepseek, workspace):
    agent, first, second = await _two_prompts(make_agent, fake_deepseek, workspace)
    listed = {c.session_id: c for c in agent.checkpoints()}
    assert listed[first].files == ["app.py"] and listed[second].files == ["util.py"]
    # The person types in app.py after the session, on another line.
    (workspace / "app.py").write_text(FIXED.replace('return "Hello " + name', GREET_EDIT))

    result = await agent.rewind(first, "code")
    assert sorted(result.files) == ["app.py", "util.py"] and result.sessions == [first, second]
    assert (workspace / "app.py").read_text() == APP.replace('return "Hello " + name', GREET_EDIT)
    assert (workspace / "util.py").read_text() == UTIL
    [rewound] = _events(agent, first, "Rewound@v1")
    assert rewound["what"] == "code" and rewound["rewind_id"] == result.rewind_id and rewound["external"]
    assert all(c.rewound == result.rewind_id for c in agent.checkpoints() if c.session_id in (first, second))
    # A plain undo does not take the rewind for an apply.
    assert agent.patches.checkpoints.latest_unrestored() is None

    redone = await agent.redo_rewind()
    assert redone.redone and sorted(redone.files) == ["app.py", "util.py"]
    assert (workspace / "app.py").read_text() == FIXED.replace('return "Hello " + name', GREET_EDIT)
    assert "def triple" in (workspace / "util.py").read_text()
    assert _events(agent, first, "RewindRedone@v1")[0]["rewind_id"] == result.rewind_id
    assert agent.session_view(first)["rewinds"][0]["redone"] is True
    # Redone, the prompts' changes count as applied again: a second rewind of the second prompt takes util.py.
    again = await agent.rewind(second, "code")
    assert again.files == ["util.py"] and (workspace / "util.py").read_text() == UTIL
    with pytest.raises(RewindRefused, match="no rewind"):
        await agent.redo_rewind("not-a-rewind")


async def test_never_clobber_rewind_refuses_an_overlap_naming_the_files(make_agent, fake_deepseek, workspace):
    agent, first, _second = await _two_prompts(make_agent, fake_deepseek, workspace)
    mine = FIXED.replace("return a + b", "return a + b  # mine")
    (workspace / "app.py").write_text(mine)
    util_before = (workspace / "util.py").read_text()
    with pytest.raises(RewindRefused) as refused:
        await agent.rewind(first, "both")
    assert refused.value.files == ["app.py"] and "app.py" in str(refused.value)
    assert "nothing was changed" in str(refused.value)
    # Nothing at all was restored, nothing recorded, no redo left behind.
    assert (workspace / "app.py").read_text() == mine and (workspace / "util.py").read_text() == util_before
    assert _events(agent, first, "Rewound@v1") == [] and agent.checkpoints()[0].rewound is None
    with pytest.raises(RewindRefused):
        await agent.redo_rewind()


async def test_rewind_conversation_only_leaves_the_code(make_agent, fake_deepseek, workspace):
    agent, first, second = await _two_prompts(make_agent, fake_deepseek, workspace)
    result = await agent.rewind(second, "conversation")
    assert result.files == [] and result.sessions == [second]
    assert "def triple" in (workspace / "util.py").read_text()  # the code stays
    assert conversation_after([first, second], result) == [first]
    redone = await agent.redo_rewind(result.rewind_id)
    assert conversation_after([first], redone) == [first, second]
    assert [c.rewound for c in agent.checkpoints()] == [None, None]


async def test_rewind_takes_out_what_an_approved_command_wrote(make_agent, fake_deepseek, workspace):
    # The verification command (an approved, sandboxed command) writes a report and changes util.py.
    (workspace / "tests" / "conftest.py").write_text(
        "import pathlib\n"
        "root = pathlib.Path(__file__).resolve().parent.parent\n"
        "(root / 'report.txt').write_text('ran\\n')\n"
        "(root / 'util.py').write_text((root / 'util.py').read_text() + '# touched by the tests\\n')\n"
    )
    fake_deepseek.add({"match": {"role": "planner"},
                       "content": plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])})
    fake_deepseek.add({"match": {"role": "executor"}, "content": FIX})
    agent = make_agent()
    view = await agent.run("Fix add")
    sid = view["session_id"]
    assert view["state"] == "Completed", view["state_reason"]
    assert (workspace / "report.txt").is_file() and "touched" in (workspace / "util.py").read_text()
    [changed] = _events(agent, sid, "CommandChanged@v1")
    assert changed["files"] == ["report.txt", "util.py"] and changed["checkpoint_id"]
    assert agent.checkpoints()[-1].files == ["app.py", "report.txt", "util.py"]

    result = await agent.rewind(sid, "code")
    assert sorted(result.files) == ["app.py", "report.txt", "util.py"]
    assert not (workspace / "report.txt").exists()
    assert (workspace / "util.py").read_text() == UTIL and (workspace / "app.py").read_text() == APP


def _cli(workspace, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}  # the same user's key (XDG)
    return subprocess.run([sys.executable, "-m", "deepseek_ls", "sessions", *args], cwd=workspace, env=env,
                          input=stdin, capture_output=True, text=True, timeout=120)


async def test_never_clobber_rewind_from_the_cli_asks_and_no_or_no_answer_changes_nothing(
        make_agent, fake_deepseek, workspace):
    agent, first, second = await _two_prompts(make_agent, fake_deepseek, workspace)
    listed = json.loads(_cli(workspace, "--checkpoints", "--json").stdout)
    assert [(c["session_id"], c["files"]) for c in listed] == [(first, ["app.py"]), (second, ["util.py"])]
    for answer in ("n\n", ""):  # "no", and no answer at all (end of input)
        refused = _cli(workspace, "--rewind", first[:13], stdin=answer)
        assert refused.returncode == 1 and "not rewound: nothing was changed" in refused.stderr
        assert "takes back 2 prompt(s); restores app.py, util.py" in refused.stderr  # shown before asked
        assert (workspace / "app.py").read_text() == FIXED and "def triple" in (workspace / "util.py").read_text()
    assert _events(agent, first, "Rewound@v1") == []

    done = _cli(workspace, "--rewind", first[:13], "--restore", "code", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert (workspace / "app.py").read_text() == APP and (workspace / "util.py").read_text() == UTIL
    rewind_id = _events(agent, first, "Rewound@v1")[0]["rewind_id"]
    assert f"sessions --redo {rewind_id}" in done.stdout
    assert all(c["rewound"] == rewind_id for c in json.loads(_cli(workspace, "--checkpoints", "--json").stdout))

    redone = _cli(workspace, "--redo", "--json")
    assert redone.returncode == 0, redone.stderr
    assert json.loads(redone.stdout)["redone"] is True and (workspace / "app.py").read_text() == FIXED
    nothing = _cli(workspace, "--redo")
    assert nothing.returncode == 1 and "no rewind to redo" in nothing.stderr


async def test_a_code_rewind_over_hunks_accepted_in_the_editor_refuses_saying_so(make_agent, fake_deepseek, workspace):
    """Hunks the editor applied one by one have no checkpoint: the refusal says that, names the file, and
    does not claim the checkpoints were pruned."""
    _script(fake_deepseek)
    agent = make_agent()
    sid, plan = await agent.plan("Fix add")
    outcome = await agent.run_step(sid, plan.steps[0].step_id)
    ps = agent.patches.get(outcome.patch_ids[0])
    (workspace / "app.py").write_text(FIXED)  # the editor applies the hunk (workspace/applyEdit) and says so
    agent.patches.mark_applied(ps.patch_id, [h.hunk_id for h in ps.hunks])
    with pytest.raises(RewindRefused) as refused:
        await agent.rewind(sid, "code")
    said = str(refused.value)
    assert "accepted in the editor" in said and "app.py" in said and "older than" not in said
    assert refused.value.files == ["app.py"] and (workspace / "app.py").read_text() == FIXED
    assert _events(agent, sid, "Rewound@v1") == []
    # A conversation rewind restores no file, so those hunks do not stop it (seen in VS Code's
    # "Rewind to here" > Conversation after a Fix accepted from the Quick Fix menu: refused as above).
    result = await agent.rewind(sid, "conversation")
    assert (result.what, result.files, result.sessions) == ("conversation", [], [sid])
    assert (workspace / "app.py").read_text() == FIXED and len(_events(agent, sid, "Rewound@v1")) == 1

"""Undo from the CLI never clobbers: a Hetun mission applied by `deepseek-ls run --hetun` (a separate
process, against the fake DeepSeek server process) is undone by `run --undo` / `apply --undo` on disk
with the editor's in-memory 3-way plan. Edits the person made after the mission (another line of a
file the mission changed, a file the mission planned but never applied to, a file outside it) stay;
an edit overlapping the mission's change refuses the undo, names the file, exits non-zero and
writes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from scenario_kit import APP, UTIL, diff, plan_json
from test_cli_resume import cli, env_for

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
FIXED = APP.replace("return a - b", "return a + b")
GREET_EDIT = 'return "Hi " + name'  # another line of app.py than the mission's


def replies() -> list[dict]:
    return [
        {"match": {"role": "hetun.coordinator"}, "content": "SLICE|app.py\n"},
        {"match": {"role": "hetun.sub"}, "repeat": True, "content": "FINDING|0.9|app.py:6 add returns a - b\n"},
        {"match": {"role": "hetun.crosscheck"}, "repeat": True, "content": "CONFIRMED|yes"},
        # The mission plans app.py and util.py; it only ever applies to app.py.
        {"match": {"role": "planner", "contains": "Request:"},
         "content": plan_json(("Fix add", ["app.py", "util.py"]), verification=["python -m pytest -q -k add"])},
        {"match": {"role": "executor"}, "content": FIX},
    ]


def run_mission(workspace: Path, fake_deepseek_process) -> tuple[str, dict]:
    fake = fake_deepseek_process(replies())
    env = env_for(fake.base_url)
    done = subprocess.run(cli("run", "--hetun", "Fix add in app.py", "--json"), cwd=workspace, env=env,
                          input="approve\n", capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["state"] == "Completed" and (workspace / "app.py").read_text() == FIXED
    mark = view["hetun"]["checkpoint"]["checkpoint_id"]
    manifest = json.loads((workspace / ".deepseek" / "checkpoints" / mark / "manifest.json").read_text())
    assert sorted(f["path"] for f in manifest["files"]) == ["app.py", "util.py"]  # util.py: planned, never applied
    return view["session_id"], env


def person_edits(workspace: Path, *, overlap: bool = False) -> dict[str, str]:
    app = FIXED.replace('return "Hello " + name', GREET_EDIT)
    if overlap:
        app = app.replace("return a + b", "return a + b  # mine")
    edits = {"app.py": app, "util.py": UTIL + "\n\ndef triple(x):\n    return x * 3\n", "notes.md": "my notes\n"}
    for rel, text in edits.items():
        (workspace / rel).write_text(text)
    return edits


def events(workspace: Path, sid: str) -> list[dict]:
    log = workspace / ".deepseek" / "sessions" / sid / "events.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_never_clobber_cli_mission_undo_keeps_edits_made_after_the_mission(workspace, fake_deepseek_process):
    sid, env = run_mission(workspace, fake_deepseek_process)
    edits = person_edits(workspace)
    done = subprocess.run(cli("run", "--undo", "--session", sid, "--json"), cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {"session_id": sid, "restored": ["app.py"], "kept": ["util.py"], "via": "disk"}
    # The mission's change is gone, the person's edit of another line stays.
    assert (workspace / "app.py").read_text() == APP.replace('return "Hello " + name', GREET_EDIT)
    assert (workspace / "util.py").read_text() == edits["util.py"]  # in the mission's checkpoint, not clobbered
    assert (workspace / "notes.md").read_text() == edits["notes.md"]
    undone = [e["payload"] for e in events(workspace, sid) if e["kind"] == "MissionUndone@v1"]
    assert len(undone) == 1 and undone[0]["via"] == "disk" and undone[0]["kept"] == ["util.py"]
    again = subprocess.run(cli("run", "--undo", "--session", sid), cwd=workspace, env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "already undone" in again.stderr


def test_never_clobber_cli_mission_undo_overlap_refuses_and_changes_nothing(workspace, fake_deepseek_process):
    sid, env = run_mission(workspace, fake_deepseek_process)
    edits = person_edits(workspace, overlap=True)
    checkpoints = workspace / ".deepseek" / "checkpoints"
    manifests = {p: p.read_text() for p in checkpoints.glob("*/manifest.json")}
    done = subprocess.run(cli("run", "--undo", "--session", sid), cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "undo refused, nothing was changed" in done.stderr and "app.py" in done.stderr
    assert "Traceback" not in done.stderr
    for rel, text in edits.items():
        assert (workspace / rel).read_text() == text, rel
    assert {p: p.read_text() for p in checkpoints.glob("*/manifest.json")} == manifests  # nothing marked undone
    assert "MissionUndone@v1" not in [e["kind"] for e in events(workspace, sid)]
    # With the overlapping edit taken back by hand, the same undo goes through.
    (workspace / "app.py").write_text(edits["app.py"].replace("  # mine", ""))
    done = subprocess.run(cli("run", "--undo", "--session", sid), cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (workspace / "app.py").read_text() == APP.replace('return "Hello " + name', GREET_EDIT)


def test_never_clobber_cli_apply_undo_after_a_mission_keeps_edits(workspace, fake_deepseek_process):
    _, env = run_mission(workspace, fake_deepseek_process)
    edits = person_edits(workspace)
    first = subprocess.run(cli("apply", "--undo", "--json"), cwd=workspace, env=env,
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"restored": ["app.py"], "merged": ["app.py"], "kept": []}
    assert (workspace / "app.py").read_text() == APP.replace('return "Hello " + name', GREET_EDIT)
    # Next comes the mission's checkpoint, made before its first write: it restores nothing over edits.
    second = subprocess.run(cli("apply", "--undo"), cwd=workspace, env=env, capture_output=True, text=True,
                            timeout=60)
    assert second.returncode == 0, second.stderr
    assert "kept as they are" in second.stdout and "util.py" in second.stdout
    assert (workspace / "util.py").read_text() == edits["util.py"]
    assert (workspace / "app.py").read_text() == APP.replace('return "Hello " + name', GREET_EDIT)
    assert (workspace / "notes.md").read_text() == edits["notes.md"]


def test_never_clobber_cli_apply_undo_overlap_refuses(workspace, fake_deepseek_process):
    _, env = run_mission(workspace, fake_deepseek_process)
    edits = person_edits(workspace, overlap=True)
    done = subprocess.run(cli("apply", "--undo"), cwd=workspace, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "app.py" in done.stderr and "nothing was changed" in done.stderr
    for rel, text in edits.items():
        assert (workspace / rel).read_text() == text, rel

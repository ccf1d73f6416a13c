"""A review is read-only by construction: no patch staged, no command run, no file written.

Proved three ways at once, against a hostile repository (its git config names a program for
every hook git offers: external diff, textconv, a filter, fsmonitor, hooks) and a hostile model
(it asks for tools and proposes a fix):
- the agent's `World` is replaced by one whose every write or exec path raises;
- canaries on disk: the repository's programs never ran (and plain git, the control, runs them),
  no file of the workspace or of `.git` changed (bytes and mtimes), no patch was stored;
- the event log holds no PatchStaged, tool call, command, approval or checkpoint event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import deepseek_ls.agent.agent as agent_module
from deepseek_ls.agent.review_input import ReviewSource
from deepseek_ls.agent.world import World
from deepseek_ls.testkit.canary import plant, plant_hooks, ran
from deepseek_ls.workspace import state_dir
from scenario_kit import git

WRITE_KINDS = {"PatchStaged@v1", "PatchApplied@v1", "PatchRejected@v1", "ToolProposed@v1", "ToolApproved@v1",
               "VerificationRun@v1", "ApprovalRequested@v1", "MissionCheckpoint@v1", "CheckpointRestored@v1"}
FIX = {"file": "app.py", "start_line": 6, "severity": "error", "category": "bug", "message": "subtracts",
       "suggested_fix": "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a - b + 1\n+    return a + b\n"}


class CanaryWorld(World):
    """The real world with every path that writes, stages or runs turned into a failure."""

    def _refuse(self, what: str):
        raise AssertionError(f"a review tried to {what}")

    async def stage(self, *a, **k):
        self._refuse("stage a patch")

    async def apply(self, *a, **k):
        self._refuse("apply a patch")

    async def reject(self, *a, **k):
        self._refuse("reject a patch")

    async def run_command(self, *a, **k):
        self._refuse("run a command")

    async def call_tool(self, *a, **k):
        self._refuse("call a tool")

    async def checkpoint(self, *a, **k):
        self._refuse("take a checkpoint")

    async def prepare_tools(self, *a, **k):
        self._refuse("start tools")



@pytest.fixture
def hostile_repo(workspace: Path, tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran.txt"
    canary = plant(tmp_path / "bin" / "canary", marker)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    for key, value in (("diff.external", canary), ("diff.evil.textconv", canary), ("filter.evil.clean", canary),
                       ("filter.evil.smudge", canary), ("core.fsmonitor", canary), ("core.pager", canary)):
        git(workspace, "config", key, str(value))
    (workspace / ".gitattributes").write_text("*.py diff=evil filter=evil\n")
    plant_hooks(workspace / ".git" / "hooks", ["pre-commit", "post-checkout", "post-index-change", "reference-transaction"],
                marker)
    (workspace / "app.py").write_text((workspace / "app.py").read_text().replace("a - b", "a - b + 1"))
    # Any first use of a workspace makes deepseek-ls' own `.deepseek/` (where the review's session log
    # goes) and keeps it out of git in `.git/info/exclude`: done here, so the snapshots compare the rest.
    state_dir(workspace)
    return workspace, marker


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the workspace and its .git (not deepseek-ls' own session logs), bytes and mtime."""
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(".deepseek/"):
            out[rel] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def answers() -> list[dict]:
    return [
        # A hostile model asks for tools it was not offered, then proposes a fix.
        {"match": {"role": "reviewer"}, "tool_calls": [{"name": "bash_run", "arguments": {"command": "touch pwned"}},
                                                       {"name": "patch_stage", "arguments": {"diff": FIX["suggested_fix"]}}]},
        {"match": {"role": "reviewer"}, "content": "```json\n" + json.dumps({"findings": [FIX]}) + "\n```",
         "repeat": True},
    ]


def assert_nothing_written(repo: Path, marker: Path, before: dict, sessions: list[list]) -> None:
    assert ran(marker) == "", "a program the repository names was run"
    assert snapshot(repo) == before, "a file of the workspace or .git changed"
    assert not (repo / "pwned").exists()
    patches = repo / ".deepseek" / "patches"
    assert not patches.exists() or not [p for p in patches.iterdir() if p.suffix == ".json"]
    for kinds in sessions:
        assert "ReviewFindings@v1" in kinds
        assert WRITE_KINDS.isdisjoint(kinds), sorted(WRITE_KINDS & set(kinds))


async def test_no_unapproved_exec_review_is_read_only_in_process(hostile_repo, make_agent, fake_deepseek, monkeypatch):
    repo, marker = hostile_repo
    monkeypatch.setattr(agent_module, "World", CanaryWorld)
    for reply in answers():
        fake_deepseek.add(reply)
    agent = make_agent()
    before = snapshot(repo)
    result = await agent.review(ReviewSource())
    assert [f["suggested_fix"] for f in result.findings] == [FIX["suggested_fix"]]  # proposed, not staged
    kinds = [e.kind for e in agent.store.open(result.session_id).read()]
    assert_nothing_written(repo, marker, before, [kinds])
    # The control: plain git on this repository runs what it names.
    subprocess.run(["git", "diff", "HEAD"], cwd=repo, capture_output=True)
    assert ran(marker) != ""


def test_no_unapproved_exec_review_cli_is_read_only(hostile_repo, fake_deepseek_process):
    repo, marker = hostile_repo
    fake = fake_deepseek_process(answers())
    before = snapshot(repo)
    env = {**os.environ, "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    done = subprocess.run([sys.executable, "-m", "deepseek_ls", "review", "--json"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # an error finding
    sid = json.loads(done.stdout)["session_id"]
    log = repo / ".deepseek" / "sessions" / sid / "events.jsonl"
    kinds = [json.loads(line)["kind"] for line in log.read_text().splitlines() if line.strip()]
    assert_nothing_written(repo, marker, before, [kinds])

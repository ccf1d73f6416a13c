"""git.* and patch.* tools."""

from __future__ import annotations

from pathlib import Path

from tools_helpers import build_host

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.patch import SafetyGate
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI

DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 'hello'\n+    return 'hi'\n"


async def test_git_status_diff_and_show(host: ToolHost, workspace: Path) -> None:
    (workspace / "src" / "app.py").write_text("changed\n")
    status = (await host.call("git.status", {})).value
    assert {"path": "src/app.py", "index": " ", "worktree": "M"} in status["entries"] and not status["clean"]
    diff = (await host.call("git.diff", {"paths": ["src/app.py"]})).value["diff"]
    assert "-def main():" in diff and "+changed" in diff
    shown = (await host.call("git.show", {"rev": "HEAD", "path": "src/app.py"})).value
    assert shown["content"].startswith("def main():")


async def test_git_tools_refuse_bad_revisions_and_paths(host: ToolHost) -> None:
    flag = await host.call("git.show", {"rev": "--output=/tmp/x", "path": "src/app.py"})
    assert not flag.ok and "not an acceptable revision" in flag.error
    secret = await host.call("git.show", {"rev": "HEAD", "path": ".env"})
    assert not secret.ok and "deny-list" in secret.error
    missing = await host.call("git.show", {"rev": "HEAD", "path": "nope.py"})
    assert not missing.ok and "does not exist at HEAD" in missing.error


async def test_repo_info_outside_git(tmp_path: Path, sink: ListSink) -> None:
    host = build_host(tmp_path, sink=sink, ui=AutoApproveUI())
    info = (await host.call("repo.info", {})).value
    assert info["git"] is False and info["root"] == str(tmp_path.resolve())
    status = await host.call("git.status", {})
    assert not status.ok and "not a git repository" in status.error


async def test_stage_then_apply_with_approval_naming_files_and_hunks(workspace: Path, sink: ListSink) -> None:
    ui = AutoApproveUI("allow_once")
    host = build_host(workspace, sink=sink, ui=ui)
    staged = (await host.call("patch.stage", {"diff": DIFF})).value
    assert (workspace / "src" / "app.py").read_text().startswith("def main():\n    return 'hello'")
    hunk_id = staged["hunks"][0]["hunk_id"]
    applied = await host.call("patch.apply", {"patch_id": staged["patch_id"]})
    assert applied.ok and applied.value["applied"] == [hunk_id]
    request = ui.approvals[0]
    assert (request.kind, request.files, request.hunk_ids, request.patch_id) == ("patch.apply", ["src/app.py"], [hunk_id], staged["patch_id"])
    assert "return 'hi'" in (workspace / "src" / "app.py").read_text()


async def test_denied_apply_leaves_the_file_alone(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI("deny"))
    staged = (await host.call("patch.stage", {"diff": DIFF})).value
    out = await host.call("patch.apply", {"patch_id": staged["patch_id"]})
    assert not out.ok and "denied" in out.error
    assert "hello" in (workspace / "src" / "app.py").read_text()


async def test_safety_gate_asks_even_in_auto_mode(workspace: Path, sink: ListSink) -> None:
    ui = AutoApproveUI("allow_once")
    host = build_host(workspace, sink=sink, ui=ui, policy=PolicyConfig(approval_mode="auto"))
    host.patches.gate = SafetyGate(max_loc_without_approval=1)
    staged = (await host.call("patch.stage", {"diff": DIFF})).value
    assert staged["approval_required"]
    assert (await host.call("patch.apply", {"patch_id": staged["patch_id"]})).ok
    assert len(ui.approvals) == 1  # asked despite auto mode


async def test_stage_reports_bad_diffs_readably(host: ToolHost) -> None:
    out = await host.call("patch.stage", {"diff": "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def nope():\n-    x\n+    y\n"})
    assert not out.ok and "nearest candidate" in out.error

"""A directory the sandbox was to cover vanishes between building its command line and bwrap's start.

The sandbox hides the runtime directory and every directory a Unix socket lies in (a `--tmpfs` over
each). When such a directory is removed after the scan (a daemon exiting, a test's scratch cleaned
up on another worker), bwrap cannot make the mount point in the read-only view and fails before the
program runs: "Can't mkdir parents for …: Read-only file system". Nothing ran, so the command is
started once more with a command line built afresh; a failure that is not such a race is still
reported as it was, and a race without a way to rebuild is reported as a clear "could not start".
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, committed_repo, requires_sandbox, visible_scratch

from deepseek_ls.config_models import Config
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.launch import ProgramNotRun, sandbox_failure
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.tools.proc import run_bounded

PRINT = [sys.executable, "-c", "print('ran')"]


def _vanishing_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Sandbox, Path, Path]:
    """A sandbox whose runtime directory lies in a visible (read-only) place, and that place."""
    scratch = Path(tempfile.mkdtemp(prefix="vanish-", dir=visible_scratch(40)))
    runtime = scratch / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    root = tmp_path / "ws"
    root.mkdir()
    return Sandbox(root, deny_paths=Config().policy.deny_paths), root, scratch


@requires_sandbox
async def test_always_answers_a_covered_directory_removed_before_the_start_is_started_again(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sandbox, root, scratch = _vanishing_runtime(monkeypatch, tmp_path)
    argv = sandbox.wrap(PRINT)
    assert str(scratch / "runtime") in argv  # the premise: the runtime directory is covered
    shutil.rmtree(scratch)
    rebuilt: list[list[str]] = []

    def rewrap() -> list[str]:
        rebuilt.append(sandbox.wrap(PRINT))
        return rebuilt[-1]

    out = await run_bounded(argv, cwd=root, env=None, timeout=60, max_output_bytes=10_000, sandboxed=True,
                            rewrap=rewrap)
    assert (out.exit_code, out.stdout.strip()) == (0, b"ran"), out
    assert len(rebuilt) == 1 and str(scratch / "runtime") not in rebuilt[0]


@requires_sandbox
async def test_always_answers_without_a_rebuild_the_race_is_said_not_hidden(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sandbox, root, scratch = _vanishing_runtime(monkeypatch, tmp_path)
    argv = sandbox.wrap(PRINT)
    shutil.rmtree(scratch)
    with pytest.raises(ProgramNotRun) as raised:
        await run_bounded(argv, cwd=root, env=None, timeout=60, max_output_bytes=10_000, sandboxed=True)
    assert raised.value.raced
    assert "the OS sandbox could not start it" in str(raised.value) and str(scratch) in str(raised.value)


@requires_sandbox
async def test_always_answers_a_failure_that_is_no_race_is_not_tried_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    calls: list[int] = []

    def rewrap() -> list[str]:
        calls.append(1)
        return Sandbox(root).wrap(PRINT)

    # bwrap refuses an option it does not know: a failure of the command line itself, every time.
    argv = Sandbox(root).wrap(PRINT)
    argv.insert(1, "--no-such-option")
    with pytest.raises(ProgramNotRun) as raised:
        await run_bounded(argv, cwd=root, env=None, timeout=60, max_output_bytes=10_000, sandboxed=True,
                          rewrap=rewrap)
    assert not raised.value.raced and calls == []


@pytest.mark.parametrize(("said", "raced"), [
    pytest.param("Can't mkdir parents for {gone}/runtime: Read-only file system", True, id="mkdir-parents"),
    pytest.param("Can't find source path {gone}: No such file or directory", True, id="bound-source-gone"),
    pytest.param("Can't bind mount /oldroot{gone} on /newroot{gone}: No such file or directory", True,
                 id="bwrap-root-prefixes"),
    pytest.param("Can't mkdir parents for {here}/x y: Permission denied", False, id="path-still-there"),
    pytest.param("setting up uid map: Permission denied", False, id="no-path"),
    pytest.param("No permissions to create new namespace", False, id="no-namespaces"),
])
def test_a_race_is_told_from_a_lasting_failure(tmp_path: Path, said: str, raced: bool) -> None:
    (tmp_path / "x y").mkdir()
    text = "bwrap: " + said.format(gone=tmp_path / "gone dir", here=tmp_path)
    failure = sandbox_failure("git", 1, b"", text.encode())
    assert failure is not None and failure.raced is raced and failure.during("search").raced is raced


@requires_sandbox
@pytest.mark.parametrize(("tool", "args"), [
    pytest.param("git.diff", {}, id="git"),
    pytest.param("fs.search_rg", {"query": "int(a)", "fixed_strings": True}, id="search"),
])
async def test_always_answers_a_tool_whose_sandbox_start_races_answers(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tool: str, args: dict) -> None:
    """The race as the tools meet it (the CI failure: a git read during another worker's clean-up)."""
    _, _, scratch = _vanishing_runtime(monkeypatch, tmp_path)
    root = committed_repo(tmp_path / "repo", {"app.py": "def add(a, b):\n    return a + b\n"})
    (root / "app.py").write_text("def add(a, b):\n    return int(a) + int(b)\n")
    host = ToolHost(root, Config(), sink=ListSink(), ui=RecordingUI(), overlay=DocumentOverlay(root))
    real_wrap, built = host.sandbox.wrap, []

    def wrap_then_vanish(argv: list[str], **kwargs) -> list[str]:
        built.append(real_wrap(argv, **kwargs))
        shutil.rmtree(scratch, ignore_errors=True)  # removed after the scan, before bwrap starts
        return built[-1]

    monkeypatch.setattr(host.sandbox, "wrap", wrap_then_vanish)
    result = await host.call(tool, args)
    assert result.ok, result.error
    assert "int(a) + int(b)" in json.dumps(result.value)
    # The first command line covered the vanished directory; the one tried again (and any later) does not.
    assert len(built) >= 2 and str(scratch / "runtime") in built[0]
    assert not any(str(scratch / "runtime") in argv for argv in built[1:])

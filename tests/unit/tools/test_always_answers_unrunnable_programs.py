"""No tool fails silently: a read tool or a verification whose program cannot run says so.

Each read tool (`fs.search_rg`: rg; `git.*`, `repo.info`, `fs.list`: git), `bash.run` and a
plan's verification (`Verifier` -> `World.run_command`) is run through the real tool registry with
its program made unrunnable — missing from PATH, present but not executable, a directory of that
name, garbage bytes (exec format error), a `#!` line naming an interpreter that does not exist,
hidden by the OS sandbox, killed by a signal, stopped by a timeout — with and without the sandbox.
The answer must be an error naming what happened (a verification: `not_run`, not a failure the
model is asked to fix), never an empty match list, status, diff or listing. The controls at the end
are the same tools with a real empty result: they still answer "nothing there".
"""

from __future__ import annotations

import shutil
import stat
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from tools_helpers import build_host

from deepseek_ls.agent.hetun import runner
from deepseek_ls.agent.verify import Verifier
from deepseek_ls.agent.world import World
from deepseek_ls.config_models import (
    Config,
    HetunHelperConfig,
    McpConfig,
    McpServerConfig,
    PolicyConfig,
    SandboxConfig,
)
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import ListSink
from deepseek_ls.tools import search
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec
from deepseek_ls.ui_port import AutoApproveUI

BWRAP = shutil.which("bwrap")
SANDBOX = Sandbox(Path("/"), config=SandboxConfig(bwrap_path=BWRAP)).status()
REAL_RG = search.rg_binary()
REAL_GIT = shutil.which("git")
SLEEP = shutil.which("sleep")
needs_sandbox = pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")

# -- how a program is made unrunnable (each makes `path`) ---------------------------------------------


def _script(path: Path, body: str, mode: int = 0o755) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(mode)


def _working(path: Path) -> None:
    """A program that works here (so only the sandbox can stop it)."""
    if path.name == "rg":
        path.symlink_to(REAL_RG)
    elif path.name == "git":
        _script(path, f'exec {REAL_GIT} "$@"')
    else:
        _script(path, "exit 0")


def _timeout_program(path: Path) -> None:
    # git answers the configuration read (done before every git tool) and hangs on the tool's own command.
    passthrough = f'case " $* " in *" config "*) exec {REAL_GIT} "$@";; esac\n' if path.name == "git" else ""
    _script(path, passthrough + f"exec {SLEEP} 30")


BREAK: dict[str, tuple[Callable[[Path], object], str]] = {
    "missing": (lambda p: None, "not installed"),
    "not-executable": (lambda p: _script(p, "exit 0", 0o644), "is not executable"),
    "directory": (lambda p: p.mkdir(), "is a directory"),
    "exec-format": (lambda p: (p.write_bytes(b"\x00\x01\x02garbage\xff" * 8), p.chmod(0o755)),
                    "not a program this machine can run"),
    "bad-interpreter": (lambda p: (p.write_text("#!/nonexistent/python3\n"), p.chmod(0o755)),
                        "interpreter /nonexistent/python3"),
    "hidden-by-sandbox": (_working, "sandbox hides"),
    "killed": (lambda p: _script(p, "kill -KILL $$"), "killed by SIGKILL"),
    "timeout": (_timeout_program, "took more than"),
}

# tool -> (program, arguments)
TOOLS = {
    "fs.search_rg": ("rg", {"query": "def main"}),
    "git.status": ("git", {}),
    "git.diff": ("git", {}),
    "git.show": ("git", {"rev": "HEAD", "path": "src/app.py"}),
    "repo.info": ("git", {}),
    "fs.list": ("git", {}),
    "bash.run": ("checkit", {"cmd": "checkit"}),
    "verification": ("checkit", None),
}


@dataclass(frozen=True)
class Case:
    tool: str
    breakage: str
    sandboxed: bool
    in_workspace: bool = False  # the program lies in the workspace, which the sandbox shows (rg only)


def _cases() -> list:
    out = []
    cannot_start = ("missing", "not-executable", "directory", "exec-format", "bad-interpreter")
    for tool in TOOLS:
        for breakage in cannot_start:
            out.append(Case(tool, breakage, sandboxed=False))
            # Sandboxed, the same pre-flight answers (git tools read the config unsandboxed first).
            if TOOLS[tool][0] != "git" and breakage != "exec-format":
                out.append(Case(tool, breakage, sandboxed=True))
        if tool != "fs.list":  # fs.list runs git outside the sandbox
            out.append(Case(tool, "hidden-by-sandbox", sandboxed=True))
        if tool not in ("bash.run", "verification"):  # their killed / stopped commands: below
            out.append(Case(tool, "killed", sandboxed=False))
            if tool != "fs.list":  # its git ls-files waits 60 s
                out.append(Case(tool, "timeout", sandboxed=False))
    # A program the sandbox shows (in the workspace) that cannot be exec'd there, or dies there.
    for breakage in ("exec-format", "killed", "timeout"):
        out.append(Case("fs.search_rg", breakage, sandboxed=True, in_workspace=True))
    return [pytest.param(c, id=f"{c.tool}-{c.breakage}-{'sandbox' if c.sandboxed else 'host'}"
                         + ("-in-workspace" if c.in_workspace else ""),
                         marks=[needs_sandbox] if c.sandboxed else []) for c in out]


@dataclass
class Answer:
    error: str | None  # the error result (a verification's `not_run`)
    value: object = None


async def _ask(case: Case, workspace: Path, config: Config, sink: ListSink) -> Answer:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI("allow_once"), policy=config.policy)
    if case.tool == "verification":
        world = World(workspace, host.config, sink=sink, overlay=host.overlay, patches=host.patches, tools=host)
        outcome = await Verifier(world, sink, timeout=30, fingerprint_lines=20).verify(["checkit"])
        assert not outcome.ok and outcome.refused is None
        if outcome.not_run is not None:
            assert outcome.fingerprint is None  # nothing for the failure classifier: not the code's fault
        return Answer(outcome.not_run, outcome)
    outcome = await host.call(case.tool, TOOLS[case.tool][1])
    return Answer(None if outcome.ok else outcome.error, outcome.value)


def _setup(case: Case, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    program = TOOLS[case.tool][0]
    fakebin = workspace / "bin" if case.in_workspace else tmp_path / "fakebin"
    fakebin.mkdir()
    make, _ = BREAK[case.breakage]
    make(fakebin / program)
    # Our own programs are looked up on PATH (git, checkit) or beside the interpreter (rg): only fakebin.
    monkeypatch.setenv("PATH", str(fakebin))
    monkeypatch.setattr(search, "bundled_rg", lambda: None)  # no `ripgrep` package installed it
    monkeypatch.setattr(search, "sys", types.SimpleNamespace(executable=str(fakebin / "python")))
    monkeypatch.setattr(search, "SEARCH_TIMEOUT_SECONDS", 0.5)
    sandbox = SandboxConfig(mode="auto" if case.sandboxed else "off", bwrap_path=BWRAP,
                            masked_paths=[str(fakebin)] if case.breakage == "hidden-by-sandbox" else [])
    policy = PolicyConfig(allowlist=["checkit"], command_timeout_seconds=0.5, sandbox=sandbox)
    return Config(policy=policy)


@pytest.mark.parametrize("case", _cases())
async def test_always_answers_when_the_program_cannot_run(case: Case, workspace: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    config = _setup(case, workspace, tmp_path, monkeypatch)
    sink = ListSink()
    answer = await _ask(case, workspace, config, sink)
    expected = BREAK[case.breakage][1]
    if case.tool == "fs.list":
        # The files are still listed (walked, with the workspace's .gitignore files), saying why.
        assert answer.error is None and "src/app.py" in answer.value["files"]
        assert expected in answer.value["note"] and "walking the workspace" in answer.value["note"]
        return
    assert answer.error is not None, f"{case.tool} answered as if its program ran: {answer.value!r}"
    assert expected in answer.error
    program = TOOLS[case.tool][0]
    assert program in answer.error
    if case.tool == "fs.search_rg":
        assert answer.error.startswith("search failed: ")
    if case.tool == "verification":
        run = [p for k, p in sink.events if k == "VerificationRun@v1"]
        assert run[-1]["exit_code"] is None and run[-1]["output"].startswith("[not run] ")


# -- a command that ran and was killed: its own answer, saying so -----------------------------------


@pytest.mark.parametrize("tool", ["bash.run", "verification"])
async def test_a_killed_command_says_it_was_killed(tool: str, workspace: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The command ran (a test run killed by the OOM killer may be the code's doing): a result, which
    names the signal."""
    config = _setup(Case(tool, "killed", sandboxed=False), workspace, tmp_path, monkeypatch)
    answer = await _ask(Case(tool, "killed", sandboxed=False), workspace, config, ListSink())
    assert answer.error is None
    if tool == "bash.run":
        assert answer.value["killed_by"] == "SIGKILL" and answer.value["exit_code"] == -9
    else:
        assert answer.value.fingerprint and answer.value.output.endswith("[killed by SIGKILL]")


# -- controls: a real empty result is still "nothing there" ----------------------------------------


def _control_config(sandboxed: bool) -> Config:
    sandbox = SandboxConfig(mode="auto" if sandboxed else "off", bwrap_path=BWRAP)
    return Config(policy=PolicyConfig(allowlist=["false", "true"], sandbox=sandbox))


CONTROLS = [
    pytest.param("fs.search_rg", {"query": "no such text anywhere 31337"}, lambda v: v["matches"] == [], id="search"),
    pytest.param("git.diff", {}, lambda v: v["diff"] == "", id="git-diff"),
    pytest.param("git.show", {"rev": "HEAD", "path": "README.md"}, lambda v: v["content"] == "# Demo\n", id="git-show"),
    pytest.param("fs.list", {"glob": "*.nothing"}, lambda v: v["files"] == [] and "note" not in v, id="list"),
    pytest.param("bash.run", {"cmd": "false"}, lambda v: v["exit_code"] == 1 and v["killed_by"] is None, id="bash-false"),
]


@pytest.mark.parametrize("sandboxed", [pytest.param(False, id="host"), pytest.param(True, id="sandbox", marks=needs_sandbox)])
@pytest.mark.parametrize("tool, args, empty", CONTROLS)
async def test_always_answers_nothing_there_when_there_is_nothing(tool, args, empty, sandboxed, workspace: Path) -> None:
    host = build_host(workspace, sink=ListSink(), ui=AutoApproveUI("allow_once"), policy=_control_config(sandboxed).policy)
    outcome = await host.call(tool, args)
    assert outcome.ok, outcome.error
    assert empty(outcome.value), outcome.value


@pytest.mark.parametrize("sandboxed", [pytest.param(False, id="host"), pytest.param(True, id="sandbox", marks=needs_sandbox)])
async def test_a_failing_verification_is_still_the_codes_failure(sandboxed: bool, workspace: Path) -> None:
    sink = ListSink()
    host = build_host(workspace, sink=sink, ui=AutoApproveUI("allow_once"), policy=_control_config(sandboxed).policy)
    world = World(workspace, host.config, sink=sink, overlay=host.overlay, patches=host.patches, tools=host)
    verifier = Verifier(world, sink, timeout=30, fingerprint_lines=20)
    failed = await verifier.verify(["true", "false"])
    assert not failed.ok and failed.command == "false" and failed.not_run is None and failed.refused is None
    assert failed.fingerprint is not None
    assert (await verifier.verify(["true"])).ok


# -- the Hetun helper block's child: our own interpreter ---------------------------------------------


class _NoHelpers:
    async def serve(self, name, args, kwargs):
        raise ValueError(f"{name} refused")


@pytest.mark.parametrize("breakage", ["hidden-by-sandbox", "not-executable"])
@needs_sandbox
async def test_always_answers_when_the_helper_block_cannot_start(breakage: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The child runs our interpreter: hidden by the sandbox (before, it "ended without an answer
    (exit 1)"), or not executable, the helper block says it could not start and why."""
    masked: list[str] = []
    if breakage == "hidden-by-sandbox":
        masked = [str(Path(runner.child_argv()[0]).parent)]
    else:
        python = tmp_path / "python3"
        _script(python, "exit 0", 0o644)
        monkeypatch.setattr(runner, "child_argv", lambda: [str(python), "-I", "-S", "-B", str(runner.CHILD)])
    box = Sandbox(tmp_path, config=SandboxConfig(bwrap_path=BWRAP, masked_paths=masked))
    config = HetunHelperConfig(timeout_seconds=20)
    run = await runner.run_block("result(1)", _NoHelpers(), config, sandbox=box)
    assert not run.ok and run.error.startswith("the helper block could not start: ")
    assert BREAK[breakage][1] in run.error


# -- an MCP server's command ----------------------------------------------------------------------


@pytest.mark.parametrize("breakage", ["missing", "not-executable", "directory", "bad-interpreter"])
async def test_always_answers_when_an_mcp_server_cannot_start(breakage: str, tmp_path: Path) -> None:
    command = tmp_path / "bin" / "mcp-server-x"
    command.parent.mkdir()
    BREAK[breakage][0](command)
    servers = McpServerSet({"x": McpServerSpec("x", McpServerConfig(command=str(command)), "test", "user")})
    manager = McpManager(tmp_path, servers, McpConfig(restart_backoff_seconds=0.05, max_restarts=0))
    try:
        tools, problems = await manager.list_tools()
    finally:
        await manager.aclose()
    assert tools == [] and len(problems) == 1
    assert "mcp-server-x" in problems[0] and BREAK[breakage][1].replace("not installed", "does not exist") in problems[0]

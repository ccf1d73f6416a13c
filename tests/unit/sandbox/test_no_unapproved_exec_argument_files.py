"""Bypass corpus, argument files: `pytest @args.txt` reads more arguments from a file.

pytest (8.2+) and mypy expand an argument `@FILE` into the lines of FILE (argparse's
`fromfile_prefix_chars`). The command policy checks the arguments it sees; the ones in the
file it never sees. A file in the repository (or one a patch just wrote) saying
`--junitxml=src/app.py` or `-p evil` would turn a safe-looking `pytest -q @args.txt` — which
runs unprompted as a verification command — into a refused option: a user file overwritten,
a plugin loaded. Such arguments are refused, in every mode, before anything runs.

Each case goes through `bash.run` in `auto` mode and through plan verification in `suggest`
mode with a UI that denies everything; canaries: the user's `src/app.py` byte-identical, no
marker outside the workspace, `.git/` and `.deepseek/` unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, make_workspace

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

# What the argument file says: options each refused on the command line.
ARGS_FILE = "--junitxml=src/app.py\n-p\nno:cacheprovider\n"
MYPY_ARGS_FILE = "--junit-xml=src/app.py\n"

ATTACKS = [
    pytest.param("pytest @args.txt", id="pytest-args-file"),
    pytest.param("pytest -q @args.txt", id="pytest-q-args-file"),
    pytest.param("pytest tests @args.txt", id="pytest-after-a-path"),
    pytest.param("pytest -k @args.txt", id="pytest-as-an-option-value"),
    pytest.param("python -m pytest -q @args.txt", id="python-m-pytest-args-file"),
    pytest.param("python -m pytest @src/app.py", id="python-m-pytest-any-file"),
    pytest.param("mypy @mypy-args.txt", id="mypy-args-file"),
    pytest.param("mypy src @mypy-args.txt", id="mypy-after-a-path"),
]


def _setup(tmp_path: Path, mode: str):
    root, canaries = make_workspace(tmp_path)
    (root / "args.txt").write_text(ARGS_FILE)
    (root / "mypy-args.txt").write_text(MYPY_ARGS_FILE)
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode=mode, allowlist=[*PolicyConfig().allowlist]))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    return root, canaries, ui, host, config, sink


@pytest.mark.parametrize("line", ATTACKS)
def test_no_unapproved_exec_argument_file_is_refused_by_policy(line: str) -> None:
    with pytest.raises(PolicyViolation) as refused:
        CommandPolicy().inspect(line)
    assert refused.value.rule == "argument_file"
    assert "@" in refused.value.reason


@pytest.mark.parametrize("line", ATTACKS)
async def test_no_unapproved_exec_argument_file_bash_run(tmp_path: Path, line: str) -> None:
    """`bash.run` in auto mode: a safe shape would run unasked; the file's arguments must not."""
    root, canaries, ui, host, _, _ = _setup(tmp_path, "auto")
    app = (root / "src" / "app.py").read_bytes()
    try:
        out = await host.call("bash.run", {"cmd": line})
        assert not out.ok and "policy refused" in out.error, out
        assert "argument" in out.error and ui.approvals == []
        assert (root / "src" / "app.py").read_bytes() == app, "the argument file's --junitxml overwrote a user file"
        canaries.assert_intact()
    finally:
        canaries.cleanup()


@pytest.mark.parametrize("line", ATTACKS)
async def test_no_unapproved_exec_argument_file_verification(tmp_path: Path, line: str) -> None:
    """A plan-authored verification command in suggest mode (which runs a safe shape unprompted)."""
    root, canaries, ui, host, config, sink = _setup(tmp_path, "suggest")
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    app = (root / "src" / "app.py").read_bytes()
    try:
        with pytest.raises(PolicyViolation):
            await world.run_command(line, 60)
        assert ui.approvals == []
        assert (root / "src" / "app.py").read_bytes() == app, "the argument file's --junitxml overwrote a user file"
        canaries.assert_intact()
    finally:
        canaries.cleanup()


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("pytest -q -k 'a or b'", id="pytest-k-expression"),
        pytest.param("rg -n @decorator src", id="rg-pattern-with-at"),  # rg reads no argument files
        pytest.param("git log -n 3 --oneline", id="git-log"),
    ],
)
def test_argument_file_check_leaves_other_programs_alone(line: str) -> None:
    checked = CommandPolicy().inspect(line)
    assert checked.review == ()

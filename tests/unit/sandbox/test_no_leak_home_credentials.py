"""Repository code that runs unprompted cannot read the person's shell histories or tool credentials.

`pytest -q` is a safe shape and runs as verification without a prompt; the repository's
`conftest.py` runs with it, inside the sandbox, which binds the whole system read-only, gives it
an empty home directory (only the toolchains on PATH bound back) and masks the deny-listed
entries of what is shown. What it prints goes to the model. Shell and REPL
histories hold what people typed (`export OPENAI_API_KEY=...`, `mysql -p...`), and build tools
keep registry passwords in their own files (`~/.m2/settings.xml`, `~/.gradle/gradle.properties`,
pip's `index-url` with a password); none of them has a format redaction knows. The canary is a
plain word; the conftest reports each file it could read. One home holds them all, each with
its own canary, and one run tries them all; each case checks its own file in that run's output.
The home lies where the sandbox shows it but for the home's hiding, and a control file beside it
must be read in the same run (sandbox_kit.scratch_home).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_kit import NO_PLUGIN_AUTOLOAD, SANDBOX, Canaries, RecordingUI, ScratchHome, make_workspace, scratch_home

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.paths import PathPolicy
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

HOME_FILES = [
    ".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history",
    ".node_repl_history", ".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history",
    ".irb_history", ".lesshst", ".viminfo", ".local/share/fish/fish_history",
    ".m2/settings.xml", ".gradle/gradle.properties", ".config/pip/pip.conf", ".pip/pip.conf",
    ".composer/auth.json", ".config/composer/auth.json", ".config/rclone/rclone.conf",
]

CONFTEST = """
import os
for rel in {files!r}:
    path = os.path.join(os.path.expanduser("~"), rel)
    try:
        with open(path) as fh:
            print("READ", rel, fh.read())
    except OSError as exc:
        print("HIDDEN", rel, exc.strerror)
print("CONTROL", open({control!r}).read())
"""


@dataclass
class HomeRun:
    """One unprompted `python -m pytest -q -s` whose conftest tried every file of a home holding
    them all, each with its own canary word."""
    home: Path
    scratch: ScratchHome
    canaries: dict[str, str]
    output: str
    approvals: list
    workspace_canaries: Canaries


@pytest.fixture(scope="module")
def home_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HomeRun]:
    # One sandboxed run for the whole corpus (a pytest start is seconds): each case below still
    # checks its own file, canary and line of the output.
    # Not under /tmp or /var/tmp, which the sandbox hides whole: there the test could not fail.
    scratch = scratch_home()
    home = scratch.home
    try:
        canaries = {}
        for rel in HOME_FILES:
            canaries[rel] = "canary" + uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")) + "zebra"
            target = home / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"mysql -u root -p{canaries[rel]}\n")
        root, workspace_canaries = make_workspace(tmp_path_factory.mktemp("home-run"))
        (root / "conftest.py").write_text(CONFTEST.format(files=HOME_FILES, control=str(scratch.control)))
        ui = RecordingUI("deny")
        with pytest.MonkeyPatch.context() as env:
            env.setenv("HOME", str(home))
            env.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
            env.setenv(*NO_PLUGIN_AUTOLOAD)
            sink = ListSink()
            config = Config(policy=PolicyConfig(approval_mode="suggest"))
            host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
            world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
            result = asyncio.run(world.run_command("python -m pytest -q -s", 60))
        yield HomeRun(home, scratch, canaries, result.output, ui.approvals, workspace_canaries)
    finally:
        scratch.cleanup()


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
@pytest.mark.parametrize("rel", HOME_FILES)
def test_no_leak_home_file_to_unprompted_verification(home_run: HomeRun, rel: str) -> None:
    assert home_run.approvals == []  # it ran unprompted: the sandbox is the layer that must hold
    output = home_run.output
    home_run.scratch.assert_control_read(output)  # the home's place is visible: the home's hiding hid it
    assert f"HIDDEN {rel}" in output or f"READ {rel} \n" in output, output
    assert (home_run.home / rel).exists()  # there on the host: the sandbox hid it (masked, or absent from its empty home)
    assert home_run.canaries[rel] not in output, f"{rel} was read: {output}"
    home_run.workspace_canaries.assert_intact()


@pytest.mark.parametrize("rel", HOME_FILES)
def test_no_leak_home_file_names_are_denied_in_the_workspace(tmp_path: Path, rel: str) -> None:
    assert not PathPolicy(tmp_path, Config().policy.deny_paths).is_allowed(rel)


@pytest.mark.parametrize("rel", ["src/order_history.py", "order_history/models.py", "docs/history.md",
                                 "settings.xml", "gradle.properties", "pip.conf.example"])
def test_ordinary_project_files_are_not_denied(tmp_path: Path, rel: str) -> None:
    assert PathPolicy(tmp_path, Config().policy.deny_paths).is_allowed(rel)

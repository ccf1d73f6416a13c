"""Repository code that runs unprompted cannot read the person's shell histories or tool credentials.

`pytest -q` is a safe shape and runs as verification without a prompt; the repository's
`conftest.py` runs with it, inside the sandbox, which binds the whole system read-only, gives it
an empty home directory (only the toolchains on PATH bound back) and masks the deny-listed
entries of what is shown. What it prints goes to the model. Shell and REPL
histories hold what people typed (`export OPENAI_API_KEY=...`, `mysql -p...`), and build tools
keep registry passwords in their own files (`~/.m2/settings.xml`, `~/.gradle/gradle.properties`,
pip's `index-url` with a password); none of them has a format redaction knows. The canary is a
plain word; the conftest reports each file it could read.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, RecordingUI, make_workspace

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
"""


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
@pytest.mark.parametrize("rel", HOME_FILES)
async def test_no_leak_home_file_to_unprompted_verification(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            request: pytest.FixtureRequest, rel: str) -> None:
    # Not under /tmp, which the sandbox replaces with an empty tmpfs: a real home stays visible.
    home = Path(tempfile.mkdtemp(prefix="dsls-home-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    canary = "canary" + uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")) + "zebra"
    target = home / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"mysql -u root -p{canary}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    root, canaries = make_workspace(tmp_path)
    (root / "conftest.py").write_text(CONFTEST.format(files=[rel]))
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    result = await world.run_command("python -m pytest -q -s", 60)
    assert ui.approvals == []  # it ran unprompted: the sandbox is the layer that must hold
    assert f"HIDDEN {rel}" in result.output or f"READ {rel} \n" in result.output, result.output
    assert target.exists()  # there on the host: the sandbox hid it (masked, or absent from its empty home)
    assert canary not in result.output
    canaries.assert_intact()


@pytest.mark.parametrize("rel", HOME_FILES)
def test_no_leak_home_file_names_are_denied_in_the_workspace(tmp_path: Path, rel: str) -> None:
    assert not PathPolicy(tmp_path, Config().policy.deny_paths).is_allowed(rel)


@pytest.mark.parametrize("rel", ["src/order_history.py", "order_history/models.py", "docs/history.md",
                                 "settings.xml", "gradle.properties", "pip.conf.example"])
def test_ordinary_project_files_are_not_denied(tmp_path: Path, rel: str) -> None:
    assert PathPolicy(tmp_path, Config().policy.deny_paths).is_allowed(rel)

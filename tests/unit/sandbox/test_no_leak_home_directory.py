"""Repository code that runs unprompted cannot read anything under the home directory but the
toolchains it runs with.

`pytest -q` is a safe shape and runs as verification without a prompt; the repository's
`conftest.py` runs with it, inside the sandbox, and what it prints goes to the model. The
deny-list masks known secret names at the top of the home; it cannot know another project's
`.env` two levels down, or a token in a file with an ordinary name. So the home is an empty
tmpfs in the sandbox, with only the toolchains on PATH bound back (policy/sandbox_home.py).
Each case plants a canary word under a fake HOME and the conftest prints what it can read. The
home lies where the sandbox shows it but for the home's hiding (not under /tmp or /var/tmp, which
it hides whole: a home there would prove nothing), and a control file beside it must be read in
the same run (sandbox_kit.scratch_home).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, RecordingUI, ScratchHome, make_workspace, scratch_home

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig, SandboxConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.sink import ListSink
from deepseek_ls.testkit.canary import plant_secret
from deepseek_ls.tools.host import ToolHost

requires_bwrap = pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")

# Files the deny-list does not mask (nested, or with ordinary names), each holding a canary.
SECRETS = [
    pytest.param("other-project/.env", id="sibling-project-dotenv"),
    pytest.param("code/other-project/.env.local", id="sibling-of-the-workspace-dotenv"),
    pytest.param("code/other-project/config/settings.py", id="sibling-project-settings"),
    pytest.param("notes/accounts.txt", id="plain-notes"),
    pytest.param(".config/gh/hosts.yml", id="gh-cli-token"),
    pytest.param(".kube/config", id="kubeconfig"),
    pytest.param(".cargo/credentials.toml", id="cargo-token-beside-a-toolchain-on-path"),
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
print("WORKSPACE", open("src/app.py").read().split()[1])
print("CONTROL", open({control!r}).read())
"""


@pytest.fixture
def scratch(request: pytest.FixtureRequest) -> ScratchHome:
    scratch = scratch_home()
    request.addfinalizer(scratch.cleanup)
    return scratch


@pytest.fixture
def home(scratch: ScratchHome, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = scratch.home
    monkeypatch.setenv("HOME", str(home))
    # A toolchain under the home on PATH (rustup's layout): it must stay usable.
    tool = home / ".cargo" / "bin" / "cargo-canary-tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho TOOL-RAN\n")
    tool.chmod(0o755)
    path = os.pathsep.join([str(tool.parent), os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)
    return home


@requires_bwrap
@pytest.mark.parametrize("rel", SECRETS)
async def test_no_leak_home_files_to_unprompted_verification(tmp_path: Path, scratch: ScratchHome, home: Path,
                                                             rel: str) -> None:
    word = plant_secret(home / rel)
    root, canaries = make_workspace(home / "code")  # the workspace lives in the home, as usual
    (root / "conftest.py").write_text(CONFTEST.format(files=[rel], control=str(scratch.control)))
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    result = await world.run_command("python -m pytest -q -s", 60)
    assert ui.approvals == []  # it ran unprompted: the sandbox is the layer that must hold
    assert "WORKSPACE add(a," in result.output, result.output  # it ran, in the workspace
    scratch.assert_control_read(result.output)  # the home's place is visible: the home's hiding hid it
    assert f"HIDDEN {rel}" in result.output or f"READ {rel} \n" in result.output, result.output
    assert word not in result.output
    assert word in (home / rel).read_text()  # still there on the host: hidden, not gone
    canaries.assert_intact()


def _run(sandbox: Sandbox, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(sandbox.wrap(["sh", "-c", script]), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@requires_bwrap
def test_toolchains_under_the_home_stay_usable(tmp_path: Path, scratch: ScratchHome, home: Path) -> None:
    word = plant_secret(home / "other-project" / ".env")
    root, _ = make_workspace(home / "code")
    out = _run(Sandbox(root, deny_paths=Config().policy.deny_paths),
               f"cargo-canary-tool; {shlex.quote(sys.executable)} -c 'print(\"PY-RAN\")'; cat src/app.py; "
               f"cat ~/other-project/.env {shlex.quote(str(scratch.control))}; "
               "echo scratch > ~/.cache-file && echo HOME-WRITABLE")
    assert "TOOL-RAN" in out.stdout and "PY-RAN" in out.stdout, out  # PATH toolchain and our interpreter
    assert "def add" in out.stdout
    scratch.assert_control_read(out.stdout)
    assert "HOME-WRITABLE" in out.stdout  # a scratch home: tools may write their caches
    assert word not in out.stdout + out.stderr
    assert not (home / ".cache-file").exists()  # ... and nothing of it reaches the real home


@requires_bwrap
def test_toolchains_under_tmp_stay_usable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv activated under /tmp (`PATH=/tmp/…/venv/bin:…`): the sandbox's own /tmp must not hide it,
    nor show what lies beside it. On the old code: `sh: 1: venv-canary-tool: not found`."""
    venv = tmp_path / "tools" / "venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool = venv / "bin" / "venv-canary-tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho TOOL-RAN\n")
    tool.chmod(0o755)
    word = plant_secret(tmp_path / "tools" / "notes.txt")
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    root, _ = make_workspace(tmp_path)
    out = _run(Sandbox(root), f"venv-canary-tool; cat {shlex.quote(str(tmp_path / 'tools' / 'notes.txt'))}; "
                              f"echo x > {shlex.quote(str(venv / 'planted'))} || echo READ-ONLY")
    assert "TOOL-RAN" in out.stdout and "READ-ONLY" in out.stdout, out
    assert word not in out.stdout + out.stderr
    assert not (venv / "planted").exists()


@requires_bwrap
def test_readable_paths_show_more_of_the_home(tmp_path: Path, scratch: ScratchHome, home: Path) -> None:
    # Not a default build cache (~/.m2/repository is: test_no_leak_build_tool_credentials.py).
    cache = home / ".ivy2" / "cache" / "lib.jar"
    cache.parent.mkdir(parents=True)
    cache.write_text("JAR")
    root, _ = make_workspace(home / "code")
    hidden = _run(Sandbox(root), f"cat ~/.ivy2/cache/lib.jar {shlex.quote(str(scratch.control))}")
    shown = _run(Sandbox(root, config=SandboxConfig(readable_paths=["~/.ivy2/cache"])),
                 "cat ~/.ivy2/cache/lib.jar; echo x > ~/.ivy2/cache/new || echo READ-ONLY")
    scratch.assert_control_read(hidden.stdout)
    assert "JAR" not in hidden.stdout
    assert "JAR" in shown.stdout and "READ-ONLY" in shown.stdout, shown
    assert not (cache.parent / "new").exists()


@pytest.mark.parametrize(("rel", "want"), [
    pytest.param(".pyenv/shims", [".pyenv"], id="pyenv-shims"),
    pytest.param(".cargo/bin", [".cargo", ".rustup"], id="cargo-and-rustups-toolchains"),
    pytest.param("go/bin", ["go"], id="go-path-with-its-module-cache"),
    pytest.param(".nvm/versions/node/v20/bin", [".nvm/versions/node/v20"], id="nvm-node-version"),
    pytest.param(".local/bin", [".local/bin", ".local/lib"], id="pip-user-site-only"),
    pytest.param("miniconda3/bin", ["miniconda3"], id="conda-install-with-lib"),
    pytest.param("projects/bin", ["projects/bin"], id="a-bin-dir-among-projects-alone"),
    pytest.param("bin", ["bin"], id="home-bin"),
])
def test_no_leak_toolchain_prefixes_stop_at_the_installation(tmp_path: Path, rel: str, want: list[str]) -> None:
    from deepseek_ls.policy.sandbox_home import exposed

    home = tmp_path / "home"
    for d in [rel, ".local/lib", "miniconda3/lib", "projects/other/.git", ".rustup/toolchains", "go/pkg/mod"]:
        (home / d).mkdir(parents=True, exist_ok=True)
    shown = exposed([home], root=tmp_path / "ws", env={"PATH": f"{home / rel}:/usr/bin"})
    assert shown == [home / w for w in want]

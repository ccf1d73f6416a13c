"""The OS sandbox (bubblewrap) confines what a command can reach, whatever the command does.

Each test runs a real program inside the real sandbox and proves one property by its effect:
network off, writes outside the workspace refused, `.git/` and `.deepseek/` untouched, secret
files masked, nothing surviving the timeout (a setsid / double-fork child included), a
scrubbed environment. Without a sandbox, every command needs an explicit approval.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, make_workspace, requires_sandbox, visible_scratch

from deepseek_ls.config_models import Config, PolicyConfig, SandboxConfig
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.tools import shell
from deepseek_ls.tools.host import ToolHost

PY = sys.executable


def sandbox_for(root: Path, **kw) -> Sandbox:
    return Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig(**kw))


async def run(root: Path, argv: list[str], *, timeout: float = 60, sandbox: Sandbox | None = None) -> shell.CommandResult:
    return await shell.run_command(argv, cwd=root, timeout=timeout, max_output_bytes=64_000,
                                   sandbox=sandbox or sandbox_for(root))


def py(code: str) -> list[str]:
    return [PY, "-c", code]


@requires_sandbox
async def test_sandbox_works_here(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    status = await sandbox_for(root).astatus()
    assert status.available, status.reason
    result = await run(root, ["true"])
    assert result.exit_code == 0


@requires_sandbox
async def test_no_unapproved_exec_network_is_off(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    # A server on the host's loopback: reachable from outside the sandbox, not from inside.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[bool] = []
    threading.Thread(target=lambda: (server.settimeout(20), accepted.append(bool(_accept(server)))), daemon=True).start()
    code = (f"import socket\ns=socket.socket()\ns.settimeout(5)\n"
            f"try:\n    s.connect(('127.0.0.1', {port})); print('CONNECTED')\n"
            f"except OSError as e:\n    print('REFUSED', e)\n")
    result = await run(root, py(code))
    assert "REFUSED" in result.stdout and "CONNECTED" not in result.stdout
    # The same program outside the sandbox does connect (the test can fail).
    outside = await shell.run_command(py(code), cwd=root, timeout=30, max_output_bytes=10_000, sandbox=None)
    assert "CONNECTED" in outside.stdout
    server.close()
    ifaces = await run(root, ["cat", "/proc/net/dev"])
    assert [line.split(":")[0].strip() for line in ifaces.stdout.splitlines()[2:]] == ["lo"]


def _accept(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
        conn.close()
        return True
    except OSError:
        return False


@requires_sandbox
async def test_no_unapproved_exec_writes_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    root, canaries = make_workspace(tmp_path)
    targets = [*canaries.markers, Path.home() / f".dsls-canary-{os.getpid()}", Path(PY).parent / "dsls-canary"]
    code = "import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'w').write('x'); print('WROTE', p)\n    except OSError as e:\n        print('REFUSED', p, e.strerror)\n"
    result = await run(root, [PY, "-c", code, *map(str, targets), "inside.txt"])
    assert (root / "inside.txt").read_text() == "x"  # the workspace itself is writable
    for target in targets:
        assert not target.exists(), f"{target} was written from inside the sandbox"
    assert "WROTE inside.txt" in result.stdout
    canaries.assert_intact()


@requires_sandbox
async def test_no_unapproved_exec_git_and_state_dirs_are_read_only(tmp_path: Path) -> None:
    root, canaries = make_workspace(tmp_path)
    code = (
        "import os\n"
        "for p in ['.git/hooks/pre-commit', '.git/config', '.deepseek/config.toml', '.deepseek/new.toml', '.git/HEAD']:\n"
        "    try:\n        open(p, 'a').write('#evil\\n'); print('WROTE', p)\n"
        "    except OSError as e:\n        print('REFUSED', p, e.strerror)\n"
        "for p in ['.git', '.deepseek']:\n"
        "    try:\n        os.rename(p, p + '.moved'); print('MOVED', p)\n"
        "    except OSError as e:\n        print('REFUSED', p, e.strerror)\n"
    )
    result = await run(root, py(code))
    assert "WROTE" not in result.stdout and "MOVED" not in result.stdout, result.stdout
    assert result.stdout.count("REFUSED") == 7
    canaries.assert_intact()


@requires_sandbox
async def test_no_unapproved_exec_git_command_cannot_plant_a_hook(tmp_path: Path) -> None:
    root, canaries = make_workspace(tmp_path)
    result = await run(root, ["git", "config", "core.hooksPath", "/tmp/evil"])
    assert result.exit_code != 0
    result = await run(root, ["git", "commit", "--allow-empty", "-m", "x"])
    assert result.exit_code != 0
    canaries.assert_intact()


def _nested_repository(root: Path) -> list[str]:
    from sandbox_kit import git

    (root / "vendor" / "lib").mkdir(parents=True)
    git(root / "vendor" / "lib", "init", "-q")
    return ["vendor/lib/.git/config", "vendor/lib/.git/hooks/post-checkout"]


def _gitfile_into_the_workspace(root: Path) -> list[str]:
    import shutil

    shutil.move(str(root / ".git"), str(root / ".hidden-git"))
    (root / ".git").write_text("gitdir: .hidden-git\n")
    return [".hidden-git/config", ".hidden-git/hooks/pre-commit", ".git"]


@requires_sandbox
@pytest.mark.parametrize("plant", [pytest.param(_nested_repository, id="nested-repository"),
                                   pytest.param(_gitfile_into_the_workspace, id="gitfile-into-the-workspace")])
async def test_no_unapproved_exec_other_git_dirs_are_read_only(tmp_path: Path, plant) -> None:
    """A hook or config planted in any git directory in the workspace would run the next time the
    person uses git there: a nested repository's `.git/`, a `.git` file's git directory."""
    root, _ = make_workspace(tmp_path)
    targets = plant(root)
    code = (
        f"for p in {targets!r}:\n"
        "    try:\n        open(p, 'a').write('[core]\\n\\tfsmonitor = /tmp/evil\\n'); print('WROTE', p)\n"
        "    except OSError as e:\n        print('REFUSED', p, e.strerror)\n"
    )
    before = {t: (root / t).read_bytes() if (root / t).is_file() else None for t in targets}
    result = await run(root, py(code))
    assert "WROTE" not in result.stdout and result.stdout.count("REFUSED") == len(targets), result.stdout
    assert {t: (root / t).read_bytes() if (root / t).is_file() else None for t in targets} == before


@requires_sandbox
async def test_no_leak_secret_files_are_masked(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    (root / "config").mkdir()
    (root / "config" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\ncanary-pem\n")
    (root / ".env.local").write_text("DB=canary-env-local\n")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("canary-ssh-key\n")
    (home / ".netrc").write_text("machine x password canary-netrc\n")
    sandbox = Sandbox(root, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig(), home=home)
    files = [".env", ".env.local", "config/server.pem", str(home / ".ssh" / "id_ed25519"), str(home / ".netrc")]
    code = ("import sys\nfor p in sys.argv[1:]:\n    try:\n        print(p, repr(open(p).read()))\n"
            "    except OSError as e:\n        print(p, 'ERR', e.strerror)\n")
    result = await run(root, [PY, "-c", code, *files], sandbox=sandbox)
    assert "canary" not in result.stdout, result.stdout
    # Masked, not deleted: the real files are untouched and readable outside.
    assert "canary-env-secret" in (root / ".env").read_text()
    # The masks are read-only: writing through them changes nothing.
    await run(root, [PY, "-c", "open('.env','w').write('overwritten')"], sandbox=sandbox)
    assert "canary-env-secret" in (root / ".env").read_text()


@requires_sandbox
async def test_no_leak_other_processes_environment_is_invisible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = make_workspace(tmp_path)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-canary-parent-env")
    code = ("import os\nfound = []\nfor pid in os.listdir('/proc'):\n    if pid.isdigit():\n"
            "        try:\n            found.append(open(f'/proc/{pid}/environ','rb').read())\n"
            "        except OSError:\n            pass\nprint(len(found), b'sk-canary' in b''.join(found))\n")
    result = await run(root, py(code))
    assert result.stdout.split()[1] == "False"
    assert "sk-canary" not in result.stdout + result.stderr


@requires_sandbox
async def test_no_leak_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = make_workspace(tmp_path)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-canary-env")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_canary")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    result = await run(root, ["env"])
    assert "HARMLESS_SETTING=visible" in result.stdout
    assert "canary" not in result.stdout


@requires_sandbox
async def test_always_answers_timeout_kills_setsid_and_double_fork_children(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    # The workspace is shared with the host: a child that outlives the sandbox could still write here.
    code = (
        "import os, subprocess, time\n"
        "subprocess.Popen(['setsid', 'sh', '-c', 'sleep 4; echo alive > late-setsid.txt'])\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(4); open('late-fork.txt', 'w').write('alive'); os._exit(0)\n"
        "    os._exit(0)\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    # Long enough for bwrap and Python to start the children and print on a loaded runner (else
    # "started" is missing), well short of the children's 4 s sleep.
    result = await run(root, py(code), timeout=2.0)
    assert result.timed_out and "started" in result.stdout
    # Nothing is left: wait longer than the children would have slept.
    await _settle(5.0)
    assert not (root / "late-setsid.txt").exists() and not (root / "late-fork.txt").exists()


@requires_sandbox
async def test_always_answers_background_child_dies_with_the_command(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    code = "import subprocess\nsubprocess.Popen(['setsid', 'sh', '-c', 'sleep 2; echo alive > late.txt'])\nprint('done')\n"
    result = await run(root, py(code))
    assert result.exit_code == 0 and not result.timed_out
    await _settle(3.0)
    assert not (root / "late.txt").exists()


async def _settle(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


async def test_without_a_working_sandbox_every_command_needs_explicit_approval(tmp_path: Path) -> None:
    root, canaries = make_workspace(tmp_path)
    ui = RecordingUI("deny")
    policy = PolicyConfig(approval_mode="auto", sandbox=SandboxConfig(bwrap_path=str(tmp_path / "no-bwrap")))
    host = ToolHost(root, Config(policy=policy), ui=ui)
    status = host.sandbox.status()
    assert not status.available and "no OS sandbox" in status.describe()
    out = await host.call("bash.run", {"cmd": "git status"})  # auto mode and a safe shape, yet asked
    assert not out.ok and "denied" in out.error
    assert len(ui.approvals) == 1 and "no OS sandbox" in ui.approvals[0].detail
    ui.answer = "always_allow"
    # The same command again in the same action: the person's "no" stands, nothing is asked.
    again = await host.call("bash.run", {"cmd": "git status"})
    assert not again.ok and "not asked again" in again.error and len(ui.approvals) == 1
    host.approvals.new_action()  # the person's next request: what they refused may be asked again
    assert (await host.call("bash.run", {"cmd": "git status"})).ok
    assert (await host.call("bash.run", {"cmd": "git status"})).ok
    assert len(ui.approvals) == 3  # "always allow" does not stick without a sandbox
    canaries.assert_intact()


async def test_sandbox_off_is_said_and_asks(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    status = sandbox_for(root, mode="off").status()
    assert not status.available and "policy.sandbox.mode" in status.reason


@requires_sandbox
async def test_writable_paths_setting_opens_only_that_path(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    # The path and its sibling where the sandbox shows them (under /var/tmp, hidden whole, a write
    # beside the path could never reach the host, whatever the sandbox opened).
    parent = Path(tempfile.mkdtemp(prefix="dsls-writable-", dir=visible_scratch()))
    cache, other = parent / "cache", parent / "other"
    cache.mkdir()
    try:
        sandbox = sandbox_for(root, writable_paths=[str(cache)])
        result = await run(root, ["sh", "-c", f"touch {shlex.quote(str(cache / 'ok'))}; touch {shlex.quote(str(other))}"],
                           sandbox=sandbox)
        assert (cache / "ok").exists(), result
        assert "Read-only file system" in result.stdout + result.stderr and not other.exists(), result
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@requires_sandbox
async def test_no_leak_secret_created_after_an_earlier_command_is_masked(tmp_path: Path) -> None:
    """The workspace walk is cached per directory mtime: a secret file created between two commands
    (in a directory the first command already saw) is masked for the second."""
    root, _ = make_workspace(tmp_path)
    sandbox = sandbox_for(root)
    assert (await run(root, ["cat", "src/app.py"], sandbox=sandbox)).exit_code == 0
    (root / "src" / ".env.production").write_text("TOKEN=canary-late-secret\n")
    (root / "src" / "deep").mkdir()
    (root / "src" / "deep" / "id_rsa").write_text("canary-late-key\n")
    result = await run(root, ["cat", "src/.env.production", "src/deep/id_rsa"], sandbox=sandbox)
    assert "canary" not in result.stdout


@requires_sandbox
async def test_no_leak_home_secrets_stay_masked_when_the_workspace_is_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("canary-home-key\n")
    (home / "project.py").write_text("x = 1\n")
    sandbox = Sandbox(home, deny_paths=PolicyConfig().deny_paths, config=SandboxConfig(), home=home)
    result = await run(home, ["cat", ".ssh/id_rsa", "project.py"], sandbox=sandbox)
    assert "x = 1" in result.stdout and "canary" not in result.stdout


@requires_sandbox
@pytest.mark.parametrize("with_git", [pytest.param(False, id="plain-directory"), pytest.param(True, id="git-repository")])
async def test_never_clobber_read_only_wrap_creates_nothing_in_the_directory(tmp_path: Path, with_git: bool) -> None:
    """A read-only wrap (the Hetun helper block) of a directory with no `.deepseek/` leaves it exactly
    as it was: nothing created by wrapping, nothing writable from inside."""
    from sandbox_kit import git, tree_digest

    root = tmp_path / "ro"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    if with_git:
        git(root, "init", "-q")
    before = tree_digest(root)
    sandbox = sandbox_for(root)
    argv = sandbox.wrap(py("import os\n"
                           "for p in ['new.txt', '.deepseek/config.toml', 'src/a.py']:\n"
                           "    try:\n        open(p, 'a').write('x'); print('WROTE', p)\n"
                           "    except OSError as e:\n        print('REFUSED', p)\n"
                           "try:\n    os.mkdir('.deepseek'); print('WROTE .deepseek')\n"
                           "except OSError:\n    print('REFUSED .deepseek')\n"), read_only=True)
    assert tree_digest(root) == before and not (root / ".deepseek").exists()  # wrapping alone made nothing
    result = await shell.run_command(argv, cwd=root, timeout=60, max_output_bytes=64_000)
    assert "WROTE" not in result.stdout and result.stdout.count("REFUSED") == 4, result.stdout + result.stderr
    assert tree_digest(root) == before


@requires_sandbox
async def test_no_unapproved_exec_missing_state_dir_cannot_be_planted(tmp_path: Path) -> None:
    """A writable wrap of a workspace without `.deepseek/` still keeps it out of the command's reach."""
    root, _ = make_workspace(tmp_path)
    import shutil

    shutil.rmtree(root / ".deepseek")
    result = await run(root, py("import os\n"
                                "try:\n    os.makedirs('.deepseek', exist_ok=True)\n"
                                "    open('.deepseek/config.toml', 'w').write('[policy]\\n'); print('WROTE')\n"
                                "except OSError as e:\n    print('REFUSED', e.strerror)\n"))
    assert "REFUSED" in result.stdout, result.stdout + result.stderr
    assert not (root / ".deepseek" / "config.toml").exists()

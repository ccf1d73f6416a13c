"""Sandboxed code cannot talk to a Unix socket of the machine: an ssh-agent, a daemon, a bus.

`--unshare-net` stops TCP, and abstract socket names belong to the network namespace; a socket
bound to a path is reachable by anyone who can name the path, read-only mount or not. Each case
listens on a real socket (stream or datagram) where such sockets live outside the places the
sandbox replaces (`/tmp`, `/run`): under `/var/tmp`, in the workspace, under the home, named by
`SSH_AUTH_SOCK`. The sandboxed program tries to connect and send; the listener must receive
nothing. Only the abstract case held before (kept as a guard of the namespace doing it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, make_workspace
from socket_kit import PROBE, Listener

from deepseek_ls.config_models import Config
from deepseek_ls.policy.sandbox import Sandbox
from deepseek_ls.policy.sandbox_sockets import bound_socket_paths

pytestmark = pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")

# (where, relative path, socket type); where: "var-tmp", "workspace", "home", "abstract"
SOCKETS = [
    pytest.param("var-tmp", "agent.1234/agent.sock", socket.SOCK_STREAM, id="ssh-agent-under-var-tmp"),
    pytest.param("var-tmp", "log/dev-log", socket.SOCK_DGRAM, id="datagram-socket"),
    pytest.param("workspace", ".devenv/state/daemon.sock", socket.SOCK_STREAM, id="socket-in-the-workspace"),
    pytest.param("workspace", ".git/fsmonitor--daemon.ipc", socket.SOCK_STREAM, id="git-fsmonitor-daemon"),
    pytest.param("home", ".local/share/app/ipc.sock", socket.SOCK_STREAM, id="app-socket-under-home"),
    pytest.param("abstract", "", socket.SOCK_STREAM, id="abstract-socket"),
]

@pytest.mark.parametrize(("where", "rel", "kind"), SOCKETS)
def test_no_unapproved_exec_through_a_unix_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  request: pytest.FixtureRequest, where: str, rel: str,
                                                  kind: int) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="dsls-sock-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    home = scratch / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root, canaries = make_workspace(tmp_path)
    if where == "abstract":
        path = f"@dsls-test-{uuid.uuid4().hex[:12]}"
        address = "\0" + path[1:]
    else:
        base = {"var-tmp": scratch, "workspace": root, "home": home}[where]
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        path = address = str(target)
    monkeypatch.setenv("SSH_AUTH_SOCK", path)
    listener = Listener(address, kind)
    request.addfinalizer(listener.close)
    if where != "abstract":
        assert Path(path) in bound_socket_paths()  # the kernel lists it: the sandbox can know of it
    probe = root / "probe.py"
    probe.write_text(PROBE)
    argv = Sandbox(root, deny_paths=Config().policy.deny_paths).wrap([sys.executable, str(probe), path, str(kind)])
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "BLOCKED" in out.stdout and "CONNECTED" not in out.stdout, (out.stdout, out.stderr)
    assert listener.received == []
    # Control: outside the sandbox the same probe does get through.
    direct = subprocess.run([sys.executable, str(probe), path, str(kind)], capture_output=True, text=True, timeout=60)
    assert "CONNECTED" in direct.stdout, direct
    canaries.assert_intact()


def test_bound_socket_paths_reads_the_kernel_table(tmp_path: Path) -> None:
    table = tmp_path / "unix"
    sock = tmp_path / "with space.sock"
    listener = Listener(str(sock), socket.SOCK_STREAM)
    try:
        table.write_text(
            "Num       RefCount Protocol Flags    Type St Inode Path\n"
            f"0000000000000000: 00000002 00000000 00010000 0001 01 1 {sock}\n"
            "0000000000000000: 00000002 00000000 00010000 0001 01 2 @abstract-name\n"
            f"0000000000000000: 00000002 00000000 00010000 0001 01 3 {tmp_path}/deleted.sock\n"
            "0000000000000000: 00000003 00000000 00000000 0001 03 4\n")
        assert bound_socket_paths(table) == [sock]
    finally:
        listener.close()

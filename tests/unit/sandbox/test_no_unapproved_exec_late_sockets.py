"""A Unix socket bound *after* the sandbox's command line was built is not reachable either.

The per-socket covers (`/proc/net/unix` read when the argv is built) miss a socket bound between
building the argv and the command's start, or later while it runs: an ssh-agent started meanwhile,
a daemon binding a second socket in its directory, a session's `$XDG_RUNTIME_DIR` filling up.
Whole directories are hidden now: `/var/tmp` (anyone may bind there), `$XDG_RUNTIME_DIR`, and the
directory of every socket the kernel lists (outside the workspace and what is bound back).

Each case builds the argv first, then binds a real listener, then runs the probe in the sandbox:
the listener must receive nothing. A control connects from outside the sandbox.
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
from sandbox_kit import make_workspace, requires_sandbox
from socket_kit import PROBE, Listener

import deepseek_ls
from deepseek_ls.config_models import Config
from deepseek_ls.policy.sandbox import Sandbox

# A place that neither /tmp, /run nor the home is: beside the checkout (the sandbox shows it read-only).
CHECKOUT = Path(deepseek_ls.__file__).resolve().parents[1]

# (where, relative path, an existing socket in the same directory at build time)
LATE = [
    pytest.param("var-tmp", "agent.5678/agent.sock", False, id="new-ssh-agent-under-var-tmp"),
    pytest.param("scratch", "daemon/second.sock", True, id="second-socket-in-a-socket-directory"),
    pytest.param("scratch", "daemon/api.sock", "same", id="daemon-restarted-same-path"),
    pytest.param("xdg", "bus", False, id="session-bus-in-xdg-runtime-dir"),
    pytest.param("xdg", "app/ipc.sock", False, id="app-socket-in-xdg-runtime-dir"),
    pytest.param("home", ".app/ipc.sock", False, id="socket-under-the-home"),
    pytest.param("abstract", "", False, id="abstract-socket"),
]


@requires_sandbox
@pytest.mark.parametrize(("where", "rel", "earlier"), LATE)
def test_no_unapproved_exec_through_a_socket_bound_after_the_argv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  request: pytest.FixtureRequest, where: str,
                                                                  rel: str, earlier: bool | str) -> None:
    base = "/var/tmp" if where == "var-tmp" else str(CHECKOUT)
    scratch = Path(tempfile.mkdtemp(prefix=".dsls-late-sock-", dir=base))
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    runtime = scratch / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    root, canaries = make_workspace(tmp_path)
    if where == "abstract":
        path = f"@dsls-late-{uuid.uuid4().hex[:12]}"
        address = "\0" + path[1:]
    else:
        target = {"var-tmp": scratch, "scratch": scratch, "xdg": runtime, "home": home}[where] / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        path = address = str(target)
    first = None
    if earlier:
        first = Listener(str(Path(path).parent / "api.sock"), socket.SOCK_STREAM)
        request.addfinalizer(first.close)
    probe = root / "probe.py"
    probe.write_text(PROBE)
    argv = Sandbox(root, deny_paths=Config().policy.deny_paths).wrap(
        [sys.executable, str(probe), path, str(socket.SOCK_STREAM)])
    if earlier == "same":  # the daemon restarts: a new socket at the same path
        first.close()
        os.unlink(path)
    listener = Listener(address, socket.SOCK_STREAM)  # bound after the argv was built
    request.addfinalizer(listener.close)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert "BLOCKED" in out.stdout and "CONNECTED" not in out.stdout, (out.stdout, out.stderr)
    assert listener.received == []
    direct = subprocess.run([sys.executable, str(probe), path, str(socket.SOCK_STREAM)], capture_output=True,
                            text=True, timeout=60)
    assert "CONNECTED" in direct.stdout, direct
    canaries.assert_intact()

"""Sandboxed code cannot reach a container daemon's Unix socket in the home directory.

`pytest -q` runs unprompted and runs the repository's `conftest.py` inside the sandbox. No
network (`--unshare-net`) and a read-only system do not stop `connect()` to a Unix socket: it
is a path, and a read-only mount does not make a socket unwritable. Docker Desktop, Colima,
Lima, Rancher Desktop and OrbStack keep theirs under the home directory, and talking to a
docker daemon is running anything as root (`docker run -v /:/host`). Each case listens on a
real socket at such a place; the conftest tries to connect and send a request. The home lies
where the sandbox shows it but for the home's hiding (under /var/tmp, hidden whole, the test
could not fail), and the conftest must read a control file beside it (sandbox_kit.scratch_home).
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, RecordingUI, make_workspace, scratch_home

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

SOCKETS = [
    pytest.param(".docker/run/docker.sock", id="docker-desktop"),
    pytest.param(".docker/desktop/docker.sock", id="docker-desktop-backend"),
    pytest.param(".colima/default/docker.sock", id="colima"),
    pytest.param(".lima/default/sock/docker.sock", id="lima"),
    pytest.param(".rd/docker.sock", id="rancher-desktop"),
    pytest.param(".orbstack/run/docker.sock", id="orbstack"),
    pytest.param(".local/share/containers/podman/podman.sock", id="podman"),
]

CONFTEST = """
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({path!r})
    s.sendall(b"POST /containers/create")
    print("CONNECTED")
except OSError as exc:
    print("BLOCKED", exc.strerror)
print("CONTROL", open({control!r}).read())
"""


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
@pytest.mark.parametrize("rel", SOCKETS)
async def test_no_unapproved_exec_through_a_daemon_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          rel: str) -> None:
    # Not under /tmp or /var/tmp, which the sandbox hides whole: there the test could not fail.
    scratch = scratch_home(room=len(rel) + 1)
    # Removed when this worker exits, not after the test: a sandbox starting on another worker may
    # have seen this socket (it is where the sandbox shows it) and bwrap then covers a path that is gone.
    atexit.register(scratch.cleanup)
    home = scratch.home
    path = home / rel
    path.parent.mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            received.append(conn.recv(100))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    root, canaries = make_workspace(tmp_path)
    (root / "conftest.py").write_text(CONFTEST.format(path=str(path), control=str(scratch.control)))
    ui = RecordingUI("deny")
    sink = ListSink()
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    try:
        result = await world.run_command("python -m pytest -q -s", 60)
    finally:
        stop.set()
        thread.join(5)
        server.close()
    assert ui.approvals == []  # it ran unprompted: the sandbox is what must hold
    scratch.assert_control_read(result.output)  # the home's place is visible: the sandbox hid the socket
    assert "BLOCKED" in result.output and "CONNECTED" not in result.output, result.output
    assert received == []
    canaries.assert_intact()

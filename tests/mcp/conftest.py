"""Real third-party MCP servers for the MCP tests: installed by `scripts/setup.sh --mcp` (or `--all`).

- `mcp-server-time`, `mcp-server-git`: PyPI console scripts in the venv (test extras);
- `@modelcontextprotocol/server-everything`: npm, in `.tools/mcp`, over stdio and streamable HTTP;
- `@modelcontextprotocol/server-filesystem`: npm, in `.tools/mcp`, over stdio.
A missing server is a failed set-up, reported as such, never a skipped test.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING_JS = ROOT / ".tools" / "mcp" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
BIN = Path(sys.executable).parent


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/mcp/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.mcp)


def _need(path: Path, what: str) -> str:
    if not path.exists():
        pytest.fail(f"{what} is not installed at {path}: run scripts/setup.sh --mcp", pytrace=False)
    return str(path)


@pytest.fixture(scope="session")
def time_server() -> str:
    return _need(BIN / "mcp-server-time", "mcp-server-time")


@pytest.fixture(scope="session")
def git_server() -> str:
    return _need(BIN / "mcp-server-git", "mcp-server-git")


@pytest.fixture(scope="session")
def everything_js() -> str:
    if shutil.which("node") is None:
        pytest.fail("node is required for server-everything", pytrace=False)
    return _need(EVERYTHING_JS, "@modelcontextprotocol/server-everything")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def everything_http(everything_js: str, tmp_path: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a loopback port; yields its /mcp URL."""
    port = _free_port()
    log = (tmp_path / "everything-http.log").open("w")
    proc = subprocess.Popen(["node", everything_js, "streamableHttp"], env={**os.environ, "PORT": str(port)},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server-everything exited: {(tmp_path / 'everything-http.log').read_text()}", pytrace=False)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("server-everything did not listen within 30 s", pytrace=False)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


FILESYSTEM_JS = ROOT / ".tools" / "mcp" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"


@pytest.fixture(scope="session")
def filesystem_js() -> str:
    if shutil.which("node") is None:
        pytest.fail("node is required for server-filesystem", pytrace=False)
    return _need(FILESYSTEM_JS, "@modelcontextprotocol/server-filesystem")

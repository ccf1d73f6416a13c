"""The VS Code end-to-end harness: code-server with the built .vsix installed (once per
process, see install_extension) and a fresh user-data-dir per window, and the
playwright-core driver (drive.mjs)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "vscode-client"
CODE_SERVER = REPO / ".tools" / "code-server" / "node_modules" / ".bin" / "code-server"
ARTIFACTS = REPO / "test-artifacts" / "vscode"
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")


@dataclass
class Tools:
    code_server: Path
    chromium: str
    vsix: Path
    server_command: Path
    # An extensions dir the .vsix is already installed in, shared by the windows of one process
    # (one at a time); None: each CodeServer installs into its own.
    extensions: Path | None = None


def run_checked(argv: list[str], cwd: Path, timeout: float) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def vsix_is_current() -> bool:
    """Whether the built .vsix is newer than every source of the extension (else it is packaged again)."""
    vsix = CLIENT / "deepseek-ls.vsix"
    if not vsix.exists():
        return False
    built = vsix.stat().st_mtime
    skip = {"node_modules", "out", "test-artifacts"}
    for path in CLIENT.rglob("*"):
        if skip.intersection(path.relative_to(CLIENT).parts) or path == vsix or not path.is_file():
            continue
        if path.stat().st_mtime > built:
            return False
    return True


def built_vsix(into: Path) -> Path:
    """The extension's .vsix for this process alone, in `into`. The pytest-xdist workers and the
    VS Code bench share vscode-client/: a .vsix packaged while another process installs it is a
    torn zip (every test of that process then fails at its install). So the set-up and packaging
    run under one lock across processes, only when a source is newer than the .vsix, and each
    process installs from its own copy."""
    key = hashlib.sha1(str(CLIENT).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"deepseek-ls-vsix-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run_checked(["bash", str(REPO / "scripts" / "setup-vscode.sh")], REPO, timeout=900)
        if not vsix_is_current():  # packaging takes most of a minute
            run_checked(["npm", "run", "--silent", "package"], CLIENT, timeout=300)
        into.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(CLIENT / "deepseek-ls.vsix", into / "deepseek-ls.vsix"))


def install_extension(code_server: Path, vsix: Path, extensions: Path) -> Path:
    """Install `vsix` into `extensions` (a code-server run of several seconds, more under load).
    Done once per process and shared: the extension's state lives in each window's own
    user-data-dir, and no test installs or removes extensions."""
    scratch = extensions.parent / f"{extensions.name}-install-data"
    run_checked([str(code_server), "--extensions-dir", str(extensions), "--user-data-dir", str(scratch),
                 "--install-extension", str(vsix), "--force"], extensions.parent, timeout=120)
    return extensions


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CodeServer:
    """code-server with the built .vsix installed, in a fresh user-data-dir."""

    def __init__(self, tools: Tools, workspace: Path, home: Path, env: dict[str, str], log: Path,
                 settings: dict | None = None) -> None:
        self.tools = tools
        self.workspace = workspace
        self.home = home
        # The extension gallery points at a closed loopback port, so code-server never looks online.
        self.env = {**os.environ, "EXTENSIONS_GALLERY": json.dumps({"serviceUrl": "http://127.0.0.1:9/gallery"}), **env}
        self.log = log
        self.extra_settings = settings or {}
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def settings_file(self) -> Path:
        return self._dirs()[1] / "User" / "settings.json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.workspace}"

    def _dirs(self) -> tuple[Path, Path]:
        return self.tools.extensions or self.home / "extensions", self.home / "user-data"

    def start(self, timeout: float = 60.0) -> "CodeServer":
        extensions, data = self._dirs()
        (data / "User").mkdir(parents=True, exist_ok=True)
        settings = {
            "deepseek.server.command": [str(self.tools.server_command)],
            "deepseek.trace.server": "messages",
            "workbench.startupEditor": "none",
            "security.workspace.trust.enabled": False,
            "telemetry.telemetryLevel": "off",
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "update.mode": "none",
            "workbench.tips.enabled": False,
            "chat.disableAIFeatures": True,
            "editor.codeLens": True,
            "files.autoSave": "off",
            "git.enabled": False,
            # Nothing may leave the machine: no gallery, experiments, schema or package look-ups.
            "extensions.ignoreRecommendations": True,
            "workbench.enableExperiments": False,
            "workbench.settings.enableNaturalLanguageSearch": False,
            "json.schemaDownload.enable": False,
            "npm.fetchOnlinePackageInfo": False,
            **self.extra_settings,
        }
        self.settings_file.write_text(json.dumps(settings, indent=2))
        base = [str(self.tools.code_server), "--extensions-dir", str(extensions), "--user-data-dir", str(data)]
        if self.tools.extensions is None:
            install_extension(self.tools.code_server, self.tools.vsix, extensions)
        config = self.home / "code-server.yaml"
        config.write_text("auth: none\ncert: false\n")
        argv = [*base, "--config", str(config), "--auth", "none", "--bind-addr", f"127.0.0.1:{self.port}",
                "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
                "--disable-getting-started-override", str(self.workspace)]
        with self.log.open("wb") as out:
            # Own process group: stop() ends code-server, its extension host and our server by PID.
            self.proc = subprocess.Popen(argv, cwd=self.home, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"code-server exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        pytest.fail(f"code-server did not answer within {timeout}s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        try:
            self._stop_processes()
        finally:
            self._keep_logs()

    def _keep_logs(self) -> None:
        """Copy the extension's output channels and the extension host log next to the screenshots."""
        logs = self.home / "user-data" / "logs"
        out = self.log.parent / "logs"
        for pattern in ("*DeepSeek*.log", "exthost.log"):
            for found in logs.rglob(pattern):
                out.mkdir(exist_ok=True)
                shutil.copyfile(found, out / found.name.replace(" ", "_"))

    def _stop_processes(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        pgid = self.proc.pid  # leader of its own session/group
        os.killpg(pgid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(pgid, signal.SIGKILL)
            self.proc.wait()
        try:  # children still alive in the group (extension host, language server)
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@dataclass
class DriveResult:
    returncode: int
    output: str
    result: dict

    def step_names(self) -> list[str]:
        return [s["name"] for s in self.result.get("steps", [])]


def drive(tools: Tools, cs: CodeServer, artifacts: Path, scenario: str, *, timeout: float = 170, **extra) -> DriveResult:
    """Run tests/vscode/drive.mjs (playwright-core + Chromium) against `cs`."""
    config = {
        "url": cs.url,
        "chromium": tools.chromium,
        "artifacts": str(artifacts),
        "scenario": scenario,
        "nodeModulesFrom": str(CLIENT),
        "settingsFile": str(cs.settings_file),
        "timeoutMs": 60000,
        **extra,
    }
    cfg = artifacts / "drive.json"
    cfg.write_text(json.dumps(config))
    done = subprocess.run(["node", str(Path(__file__).with_name("drive.mjs")), str(cfg)],
                          capture_output=True, text=True, timeout=timeout)
    output = done.stdout + done.stderr
    result: dict = {}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
    (artifacts / "result.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return DriveResult(done.returncode, output, result)

"""Emacs in batch mode as a real LSP client of the real server: eglot, configured by the snippet in
docs/editors.md, connects to `deepseek-ls serve --stdio` from this venv (by absolute path), and
eglot_driver.el turns `EmacsSession.ask(...)` into what a person does in that Emacs (open a file,
pick a code action from eglot's menu, answer its prompt). One Emacs per test file: a module fixture.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DRIVER = HERE / "eglot_driver.el"
EDITORS_DOC = REPO / "docs" / "editors.md"
SERVER = Path(sys.executable).parent / "deepseek-ls"
# The whole Emacs may live this long (a wall-clock bound, so a hung Emacs fails the file, never hangs it).
LIFETIME_S = 600
ANSWER_S = 150  # one request (its own waits are bounded at 60 s inside Emacs)


def eglot_snippet() -> str:
    """The eglot set-up docs/editors.md gives, verbatim but for the server's name: this venv's
    `deepseek-ls` by absolute path (the suite does not rely on PATH)."""
    doc = EDITORS_DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- eglot-snippet -->\s*```emacs-lisp\n(.*?)```", doc, re.S)
    assert found, "docs/editors.md has no eglot snippet (<!-- eglot-snippet --> then an emacs-lisp block)"
    snippet = found.group(1)
    assert snippet.count('"deepseek-ls"') == 1, "the snippet names the server once"
    return snippet.replace('"deepseek-ls"', json.dumps(str(SERVER)))


def find_emacs() -> str | None:
    return shutil.which("emacs")


class EmacsError(AssertionError):
    """A request that failed inside Emacs, or an Emacs that stopped answering."""


class EmacsSession:
    """One `emacs --batch` with eglot, answering requests on stdin (see eglot_driver.el)."""

    def __init__(self, emacs: str, root: Path, tmp: Path, env: dict[str, str]) -> None:
        self.root = root
        snippet = tmp / "init-deepseek.el"
        snippet.write_text(eglot_snippet(), encoding="utf-8")
        self.log = tmp / "emacs-stderr.log"
        home = tmp / "home"
        home.mkdir(exist_ok=True)
        argv = ["timeout", "--kill-after=5", str(LIFETIME_S), emacs, "--batch",
                "-l", str(DRIVER), "-l", str(snippet), "-f", "dsls--serve"]
        self._stderr = self.log.open("wb")
        self.proc = subprocess.Popen(
            argv, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env={**env, "HOME": str(home), "DSLS_ROOT": str(root)}, text=True, encoding="utf-8",
            start_new_session=True)  # its own process group: `close` can end Emacs, not only `timeout`
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("DSLS "):
                self._lines.put(line[5:])
        self._lines.put(None)

    def ask(self, fn: str, *args: Any) -> Any:
        """Run the driver's `dsls-FN` with ARGS; its value, or EmacsError with Emacs's message and log."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"fn": fn, "args": list(args)}) + "\n")
        self.proc.stdin.flush()
        try:
            line = self._lines.get(timeout=ANSWER_S)
        except queue.Empty:
            raise EmacsError(f"Emacs did not answer {fn}{args} within {ANSWER_S}s\n{self.tail()}") from None
        if line is None:
            raise EmacsError(f"Emacs exited (status {self.proc.poll()}) during {fn}{args}\n{self.tail()}")
        answer = json.loads(line)
        if not answer["ok"]:
            raise EmacsError(f"{fn}{args} failed in Emacs: {answer['error']}\n{self.tail()}")
        return answer["value"]

    def tail(self, lines: int = 40) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        text = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
        return "--- emacs stderr (tail) ---\n" + "\n".join(text)

    def close(self) -> None:
        """End of stdin: the driver's loop ends and Emacs exits, shutting eglot's server down."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a hung Emacs: `timeout` and Emacs both (the server then reads EOF)
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._stderr.close()


def emacs_env(xdg: Path, extra: dict[str, str]) -> dict[str, str]:
    """The environment of Emacs, so of the server it starts: isolated XDG directories (the test's
    user), without the venv's bin on PATH (the server is named by absolute path)."""
    venv_bin = str(SERVER.parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env = {**os.environ, "PATH": path or "/usr/bin:/bin", "DEEPSEEK_API_KEY": "test-key", **extra}
    for var, folder in (("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"),
                        ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data")):
        env[var] = str(xdg / folder)
    return env

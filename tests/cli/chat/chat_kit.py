"""`deepseek-ls chat` in a pseudo-terminal, read as a person sees it.

The chat runs as its own process (the console script's module, as installed) in a
pty opened by pexpect; what it writes is fed to pyte, a terminal emulator, so a
test asks what is *on the screen* (after rich's redraws and prompt_toolkit's cursor
moves), never what bytes went by. Waits are on conditions (text on the screen, the
process ending), bounded as hang guards. A plain module, imported by name.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pexpect
import pyte

ROWS, COLS = 40, 110
WAIT = 60.0  # hang guard for one condition (the machine may be busy)

APP = '''def greet(name):
    return "Hello " + name


def add(a, b):
    return a - b
'''
TEST_APP = '''from app import add


def test_add():
    assert add(2, 3) == 5
'''
UTIL = '''def double(x):
    return x * 2
'''

# Keys as a terminal sends them.
ESC, CTRL_C, CTRL_D, TAB, UP, ENTER = "\x1b", "\x03", "\x04", "\t", "\x1b[A", "\r"


def make_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "util.py").write_text(UTIL)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_app.py").write_text(TEST_APP)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n")
    return root


def plan_reply(title: str = "Fix add", files: tuple[str, ...] = ("app.py",)) -> dict:
    import json

    plan = {"goal": "make add add", "assumptions": [], "steps": [{"title": title, "intent": "edit", "files": list(files)}],
            "verification": ["python -m pytest -q"], "risk_notes": [], "confidence": 0.9}
    return {"match": {"role": "planner"}, "content": "```json\n" + json.dumps(plan) + "\n```"}


ADD_FIX = {"match": {"role": "executor"},
           "content": "```diff\n--- a/app.py\n+++ b/app.py\n@@ -5,2 +5,2 @@\n def add(a, b):\n"
                      "-    return a - b\n+    return a + b\n```"}


class ChatTerminal:
    """One `deepseek-ls chat` process in a pty, its screen kept by pyte."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        environment = dict(os.environ if env is None else env)
        # No cursor-position answers come from pexpect's pty: prompt_toolkit must not wait for one.
        environment.update(TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS=str(COLS), LINES=str(ROWS))
        self.child = pexpect.spawn(sys.executable, ["-m", "deepseek_ls", "chat", *args], cwd=str(workspace),
                                   env=environment, dimensions=(ROWS, COLS), timeout=WAIT)
        self.ended = False

    # -- reading the screen ---------------------------------------------------------------

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display).rstrip()

    def prompt_line(self) -> str:
        """The last line showing the chat's prompt (mode, model, ›) and what is typed after it."""
        lines = [line for line in self.text().splitlines() if "›" in line]
        return lines[-1] if lines else ""

    def _pump(self, timeout: float) -> None:
        try:
            self.stream.feed(self.child.read_nonblocking(65536, timeout=timeout))
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            self.ended = True

    def wait_for(self, condition, what: str, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if self.ended or time.monotonic() > deadline:
                raise AssertionError(f"{what} ({'the chat ended' if self.ended else f'{timeout:g} s'}); screen:\n"
                                     f"{self.text()}")
            self._pump(0.2)

    def wait(self, text: str, timeout: float = WAIT) -> None:
        """Until `text` is on the screen."""
        self.wait_for(lambda: text in self.text(), f"{text!r} never showed", timeout)

    def wait_prompt(self, timeout: float = WAIT) -> None:
        """Until the empty prompt is the last line on the screen: the chat waits for a message.
        (Without cursor-position answers prompt_toolkit shows no bottom toolbar, so nothing is below it.)"""

        def idle() -> bool:
            lines = [line for line in self.text().splitlines() if line.strip()]
            return bool(lines) and "›" in lines[-1] and lines[-1].endswith("›")

        self.wait_for(idle, "the prompt never came back", timeout)

    # -- typing ---------------------------------------------------------------------------

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def type_line(self, text: str) -> None:
        self.send(text + ENTER)

    def leave(self) -> int:
        """/exit, then the exit status."""
        self.type_line("/exit")
        self.wait_for(lambda: self.ended, "the chat did not leave on /exit")
        self.child.wait()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)

"""Ctrl-C stops a command whichever of its threads the kernel hands the SIGINT to (cli/interrupt.py).

Each case runs in a child process (it sets signal handlers): a command's event
loop asleep with nothing due (as while the server holds a model answer, or a
prompt waits for input) and a SIGINT caught by another thread of the process.
Without the wakeup the main thread would sleep on and the child would hang:
the `timeout` only bounds that failure, nothing here is timed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from deepseek_ls.testkit.signals import as_a_foreground_command

CHILD = textwrap.dedent('''
    import asyncio, os, signal, sys, threading, time
    from deepseek_ls.cli import interrupt

    def asleep(tid):
        """Whether the main thread sleeps in the kernel (epoll_wait, where only a wakeup reaches it)."""
        try:
            with open(f"/proc/self/task/{tid}/wchan") as f:
                wchan = f.read().strip()
            if wchan not in ("", "0"):
                return "epoll" in wchan
            with open(f"/proc/self/task/{tid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "S"
        except OSError:
            return True

    def catch_ctrl_c_here(main_tid):
        # Another thread catches the SIGINT once the loop sleeps with nothing scheduled.
        while not asleep(main_tid):
            time.sleep(0.01)
        time.sleep(0.05)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    async def main():
        threading.Thread(target=catch_ctrl_c_here, args=(threading.get_native_id(),), daemon=True).start()
        try:
            await asyncio.Event().wait()  # nothing else will ever wake this loop
        except asyncio.CancelledError:
            print("cancelled", flush=True)
            raise

    try:
        {runner}
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
''')


def run_child(runner: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD.replace("{runner}", runner)], capture_output=True, text=True,
                          timeout=60, preexec_fn=as_a_foreground_command)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads' kernel state is read from /proc")
@pytest.mark.parametrize("runner, said", [
    pytest.param("interrupt.run(main)", "interrupted", id="runner"),
    # plan, run, autopilot and ask go through _drive: it pauses and says so
    pytest.param("from deepseek_ls.cli.agent_cmd import _drive; _drive(main)", "", id="agent-commands"),
])
def test_ctrl_c_caught_by_another_thread_still_stops_the_command(runner, said):
    done = run_child(runner)
    assert done.returncode == 130, done.stderr
    assert done.stdout.split() == ["cancelled", *([said] if said else [])]  # the work was cancelled first
    if not said:
        assert "deepseek-ls: interrupted; the session is paused" in done.stderr


def test_an_ignored_sigint_stays_ignored():
    """A background job started with SIGINT ignored keeps ignoring it (the shell's convention)."""
    code = textwrap.dedent('''
        import asyncio, os, signal
        from deepseek_ls.cli import interrupt

        async def main():
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(0)
            return "went on"

        print(interrupt.run(main))
    ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "went on"


# -- Ctrl-C during start-up, before any event loop ------------------------------------------------

# On PYTHONPATH as `sitecustomize`: the child sends itself SIGINT the moment it starts importing
# the module named in $DSLS_TEST_SIGINT_AT, so the KeyboardInterrupt lands exactly there.
SIGINT_AT_IMPORT = textwrap.dedent('''
    import os, signal, sys

    class SigintAt:
        def __init__(self, name):
            self.name = name

        def find_spec(self, fullname, path=None, target=None):
            if fullname == self.name:
                sys.meta_path.remove(self)
                os.kill(os.getpid(), signal.SIGINT)
            return None

    if os.environ.get("DSLS_TEST_SIGINT_AT"):
        sys.meta_path.insert(0, SigintAt(os.environ["DSLS_TEST_SIGINT_AT"]))
''')


def console_script() -> list[str]:
    """The code pip writes for the `deepseek-ls` console script, for the entry point pyproject.toml names
    (a venv installed before the entry point changed still has the old launcher)."""
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    module, func = tomllib.loads(pyproject.read_text())["project"]["scripts"]["deepseek-ls"].split(":")
    return [sys.executable, "-c", f"import sys; from {module} import {func}; sys.exit({func}())"]


@pytest.mark.parametrize("launcher", [
    pytest.param("script", id="console-script"),
    pytest.param("module", id="python-m"),
])
@pytest.mark.parametrize("args, module", [
    pytest.param(["sessions"], "deepseek_ls.cli", id="importing-the-cli"),
    pytest.param(["sessions"], "argparse", id="building-the-parser"),
    pytest.param(["config", "show"], "deepseek_ls.cli.show_cache", id="config-show-fast-path"),
    pytest.param(["sessions"], "deepseek_ls.cli.sessions_cmd", id="importing-a-command"),
    pytest.param(["models"], "deepseek_ls.config", id="loading-the-config"),  # (sessions loads it only to price calls)
])
def test_ctrl_c_during_start_up_says_interrupted_and_exits_130(tmp_path, cli_env, empty_dir, launcher, args,
                                                               module):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SIGINT_AT_IMPORT)
    argv = console_script() if launcher == "script" else [sys.executable, "-m", "deepseek_ls"]
    env = {**cli_env, "PYTHONPATH": str(hook), "DSLS_TEST_SIGINT_AT": module}
    done = subprocess.run([*argv, *args], cwd=empty_dir, env=env, capture_output=True, text=True, timeout=60,
                          preexec_fn=as_a_foreground_command)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "deepseek-ls: interrupted\n"  # one line, no traceback
    # the hook is real: without it the same command runs through
    del env["DSLS_TEST_SIGINT_AT"]
    ok = subprocess.run([*argv, *args], cwd=empty_dir, env=env, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr

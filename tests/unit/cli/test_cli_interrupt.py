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
                          timeout=60)


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

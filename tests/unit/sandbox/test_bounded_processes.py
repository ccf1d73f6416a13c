"""Every subprocess wait is bounded: `rg` stopped early is killed, drained and reaped; a child that
keeps the output pipe open cannot hold a command past its grace period; nothing is left behind."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from deepseek_ls.config_models import Config
from deepseek_ls.tools import proc
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI


def _children(kind: str) -> list[int]:
    """Live (not zombie) descendants of this process whose command name is `kind`."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if comm == kind and fields[0] != "Z" and _descends(int(pid)):
            found.append(int(pid))
    return found


def _descends(pid: int) -> bool:
    me = os.getpid()
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
        if pid == me:
            return True
    return False


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for i in range(1500):
        d = root / f"pkg{i // 100}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"m{i}.py").write_text("import os\n" * 40 + "def f():\n    return os.getcwd()\n" * 20)
    return root


async def test_always_answers_search_rg_stopping_early_never_hangs(corpus: Path) -> None:
    """The issue-13 hang: a frequent pattern, a small limit, query after query."""
    host = ToolHost(corpus, Config(), ui=AutoApproveUI())
    for query in ["import", "os", "def", "return", "getcwd", "import os", "f", "o"] * 2:
        out = await host.call("fs.search_rg", {"query": query, "limit": 5})
        assert out.ok, out.error
        assert len(out.value["matches"]) == 5 and out.value["truncated"]
    assert _children("rg") == [] and _children("bwrap") == []


async def test_always_answers_search_rg_to_the_end_reports_everything(corpus: Path) -> None:
    host = ToolHost(corpus, Config(), ui=AutoApproveUI())
    out = await host.call("fs.search_rg", {"query": "^def f", "limit": 2000, "globs": ["pkg0/**"]})
    assert out.ok and len(out.value["matches"]) == 2000 and not out.value["truncated"]  # 100 files x 20
    out = await host.call("fs.search_rg", {"query": "no-such-text-anywhere", "limit": 10})
    assert out.ok and out.value["matches"] == [] and not out.value["truncated"]


async def test_always_answers_a_child_holding_the_pipe_cannot_hold_the_command(tmp_path: Path, monkeypatch) -> None:
    """Unsandboxed (the sandbox would kill it): the command exits at once, a setsid grandchild keeps
    stdout open for a minute; the run returns after the grace period, with the output it had."""
    monkeypatch.setattr(proc, "KILL_GRACE_SECONDS", 0.5)
    code = "import subprocess\nsubprocess.Popen(['setsid', 'sleep', '60'])\nprint('parent done', flush=True)\n"
    out = await proc.run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=30, max_output_bytes=1000)
    assert out.exit_code == 0 and b"parent done" in out.stdout
    for pid in _children("sleep"):
        os.kill(pid, 9)


async def test_always_answers_timeout_kills_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(60)\n"
    # The timeout must leave the child time to start and print even on a loaded runner, else
    # "up" is missing and the test fails for a reason that is not the product's.
    out = await proc.run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=2, max_output_bytes=1000)
    assert out.timed_out and out.exit_code is None and b"up" in out.stdout


async def test_output_is_bounded_in_memory_keeping_head_and_tail(tmp_path: Path) -> None:
    code = "import sys\nsys.stdout.write('HEAD' + 'x' * 5_000_000 + 'TAIL')\n"
    out = await proc.run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=60, max_output_bytes=1000)
    assert len(out.stdout) == 1000 and out.stdout.startswith(b"HEAD") and out.stdout.endswith(b"TAIL")
    assert out.stdout_omitted == 5_000_008 - 1000


async def test_cancelling_a_run_kills_the_process(tmp_path: Path) -> None:
    marker = tmp_path / "late"
    code = f"import time\ntime.sleep(3)\nopen({str(marker)!r}, 'w').write('x')\n"
    task = asyncio.ensure_future(
        proc.run_bounded([sys.executable, "-c", code], cwd=tmp_path, env=None, timeout=60, max_output_bytes=1000))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(4)
    assert not marker.exists()

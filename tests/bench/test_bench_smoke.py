"""Benchmarks stay alive: every `bench/` script runs at its smoke size (`--smoke`) and exits 0.

Each script is a subprocess with a timeout, started as its own user would start it (our
interpreter, the bench directory on its path, a scratch working directory). A product change that
breaks a bench (an API it calls, a default it relies on, a mode it runs in) fails here instead of
rotting until someone measures. A smoke run measures nothing and judges no speed target; what the
bench checks itself (a session completes as scripted, results are right) still fails it.

The scripts run two at a time (CI has two cores): the module starts the selected ones when it
begins, the heaviest first, and each test waits for its own. A new script under bench/ is picked up
by itself; one without `--smoke` fails (argparse refuses the option).
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
HELPERS = {"benchstats.py"}  # imported by the scripts, not one
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name not in HELPERS)
# Started first: they take longest (code-server and Chromium; a language server started three times).
HEAVY = ("vscode_startup.py", "bench_lsp.py", "bench_lanes.py", "bench_index.py")
MARKS = {"vscode_startup.py": [pytest.mark.vscode], "nvim_hunk_render.py": [pytest.mark.nvim],
         "nvim_plugin_load.py": [pytest.mark.nvim]}
TIMEOUT = {"vscode_startup.py": 600.0}
DEFAULT_TIMEOUT = 240.0


def _run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    timeout = TIMEOUT.get(script, DEFAULT_TIMEOUT)
    try:
        return subprocess.run([sys.executable, str(BENCH / script), "--smoke"], cwd=cwd, env=env, text=True,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return subprocess.CompletedProcess(exc.cmd, -1, out, f"timed out after {timeout:g} s")


@pytest.fixture(scope="module")
def smoke_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The selected scripts' runs, started now, two at a time."""
    selected = [item.callspec.params["script"] for item in request.session.items
                if item.module is request.module and hasattr(item, "callspec") and "script" in item.callspec.params]
    order = sorted(dict.fromkeys(selected), key=lambda s: (s not in HEAVY, HEAVY.index(s) if s in HEAVY else 0, s))
    env = dict(os.environ)  # this run's own XDG directories (testkit/home_guard.py), never the user's
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="bench-smoke")
    runs: dict[str, Future] = {}
    for script in order:
        cwd = tmp_path_factory.mktemp(script.removesuffix(".py"))
        runs[script] = pool.submit(_run, script, cwd, env)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


# A test may wait for the runs queued before its own: each is bounded by its subprocess timeout.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("script", [pytest.param(s, id=s.removesuffix(".py"), marks=MARKS.get(s, [])) for s in SCRIPTS])
def test_bench_runs_at_smoke_size(script: str, smoke_runs: dict[str, Future]) -> None:
    done = smoke_runs[script].result()
    said = f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
    assert done.returncode == 0, f"bench/{script} --smoke exited {done.returncode}\n{said}"
    assert "# smoke run" in done.stdout, f"bench/{script} did not run at its smoke size\n{said}"


def test_every_bench_script_is_run() -> None:
    """The glob above is what CI runs: the bench directory holds no script it would miss."""
    assert len(SCRIPTS) >= 16 and "bench_prompt_cache.py" in SCRIPTS
    assert not [p for p in BENCH.rglob("*.py") if p.parent != BENCH and p.name.startswith("bench_")]

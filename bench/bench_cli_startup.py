"""CLI start-up time: what a shell user (and an editor starting `serve`) waits before work begins.

    .venv/bin/python bench/bench_cli_startup.py [--runs 20] [--smoke]

Baseline measured in the same run, interleaved with ours (one run of every case per
round, so all see the same load): `python -c pass` with the same interpreter. Each line
prints ours / baseline / ratio (medians) and our p95.

- `--help` lists the commands from a table (no command module imported);
- `config show (warm)` prints from its cache (cli/show_cache.py): nothing changed since
  the last run;
- `config show (cold)` starts with an empty cache every time, as right after an edit:
  `(cold, edited user config)` with a user config setting plain values (served without
  pydantic by cli/show_fast.py), `(cold, edited workspace cfg)` with an untrusted
  `.deepseek/config.toml` (one setting kept, one that loosens policy dropped with a
  warning; also without pydantic), `(cold, models table)` with a `[models.NAME]` registry
  entry (left to the full pydantic validation, like every non-plain value: the slowest case);
- `config show --config FILE (cold, same edit: pydantic)`: the edit of `(cold, edited user config)`
  given with `--config`, which the fast path leaves to the pydantic models: the same values
  through the one validator with its lazy imports (what `config show` would cost without
  cli/show_fast.py, the figure that decides whether that module earns its keep);
- `sessions` lists a workspace's sessions: `(empty workspace)`, `(3 sessions, no model call)` and
  `(3 sessions, priced calls)`. The config (pydantic, the model registry) is loaded only for the
  price book, when a listed session has a model call to price (cli/sessions_cmd.py); the event
  store itself still imports pydantic (its summary and event models).

Target (issue 17): `--help` and `config show` <= 3x the baseline.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import add_smoke_option, smoke_sizes

DS = [sys.executable, "-m", "deepseek_ls"]
PLAIN_EDIT = "[router]\nthreshold_high = 0.8\n[policy]\ncommand_timeout_seconds = 30\nallowlist = ['pytest', 'make']\n"
MODELS_EDIT = "[models.local]\npreset = 'deepseek-v4-flash'\nbase_url = 'http://127.0.0.1:8080/v1'\n"
# An untrusted workspace file: its looser settings are dropped (with a warning), the rest apply.
WORKSPACE_EDIT = "[router]\nthreshold_high = 0.6\n[policy]\napproval_mode = 'auto'\n"
# (label, argv, user config text or None, workspace config text or None, cold)
CASES = [
    ("python -c pass (baseline)", [sys.executable, "-c", "pass"], None, None, False),
    ("deepseek-ls --version", [*DS, "--version"], None, None, False),
    ("deepseek-ls --help", [*DS, "--help"], None, None, False),
    ("config show (warm)", [*DS, "config", "show"], None, None, False),
    ("config show --json (warm)", [*DS, "config", "show", "--json"], None, None, False),
    ("config show (cold, no config)", [*DS, "config", "show"], None, None, True),
    ("config show (cold, edited user config)", [*DS, "config", "show"], PLAIN_EDIT, None, True),
    ("config show --json (cold, edited)", [*DS, "config", "show", "--json"], PLAIN_EDIT, None, True),
    ("config show (cold, edited workspace cfg)", [*DS, "config", "show"], None, WORKSPACE_EDIT, True),
    ("config show --config FILE (cold, same edit: pydantic)", [*DS, "--config", "@PLAIN_EDIT", "config", "show"],
     None, None, True),
    ("config show (cold, models table)", [*DS, "config", "show"], MODELS_EDIT, None, True),
    ("sessions (empty workspace)", [*DS, "sessions"], None, None, False),
    ("sessions (3 sessions, no model call)", [*DS, "sessions"], None, None, False),
    ("sessions (3 sessions, priced calls)", [*DS, "sessions"], None, None, False),
]
# The workspaces of the `sessions` cases that hold sessions: label -> whether they record model calls.
SESSIONS = {"sessions (3 sessions, no model call)": False, "sessions (3 sessions, priced calls)": True}


def make_sessions(root: Path, with_calls: bool) -> None:
    """Three sessions sealed with the bench user's key (XDG_CONFIG_HOME is set before this runs)."""
    from deepseek_ls.store.sessions import SessionStore

    store = SessionStore(root / ".deepseek")
    for n in range(3):
        with store.create(root, "agent", f"task {n}") as log:
            log.append("TurnAdded@v1", {"role": "user", "content": f"task {n}"})
            if with_calls:
                log.append("LLMCall@v1", {"call_id": f"c{n}", "role": "planner", "profile": "fast",
                                          "model": "deepseek-v4-flash", "request_hash": f"h{n}", "started_at": "2026-01-05T12:00:00+00:00",
                                          "usage": {"prompt_tokens": 1000, "completion_tokens": 200,
                                                    "prompt_cache_hit_tokens": 600,
                                                    "prompt_cache_miss_tokens": 400}})



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", default="", help="run only the cases whose label holds this text (and the baseline)")
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, runs=1)
    with tempfile.TemporaryDirectory() as tmp:
        base = {k: v for k, v in os.environ.items() if not k.startswith("DEEPSEEK")}
        base["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg")
        base["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # warm cases: the first run fills it
        os.environ["XDG_CONFIG_HOME"] = base["XDG_CONFIG_HOME"]  # the sessions made here are that user's
        os.environ.pop("DEEPSEEK_LS_USER_CONFIG", None)
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        plain_edit = Path(tmp) / "plain-edit.toml"
        plain_edit.write_text(PLAIN_EDIT)
        cases = [(label, [str(plain_edit) if a == "@PLAIN_EDIT" else a for a in argv], *rest)
                 for label, argv, *rest in CASES if label == CASES[0][0] or args.only in label]
        envs, cwds = {}, {}
        for i, (label, _, user_config, workspace_config, _) in enumerate(cases):
            cwds[label] = workspace
            if workspace_config is not None:
                cwds[label] = Path(tmp) / f"ws-{i}"
                (cwds[label] / ".deepseek").mkdir(parents=True)
                (cwds[label] / ".deepseek" / "config.toml").write_text(workspace_config)
            if label in SESSIONS:
                cwds[label] = Path(tmp) / f"ws-{i}"
                cwds[label].mkdir()
                make_sessions(cwds[label], SESSIONS[label])
            env = dict(base)
            if user_config is not None:
                path = Path(tmp) / f"user-{i}.toml"
                path.write_text(user_config)
                env["DEEPSEEK_LS_USER_CONFIG"] = str(path)
            envs[label] = env
        print(f"# CLI start-up, {args.runs} runs each, interleaved; load {os.getloadavg()[0]:.1f}; "
              f"median ms: ours / python -c pass / ratio (p95 ours)")
        samples: dict[str, list[float]] = {label: [] for label, *_ in cases}
        for _ in range(args.runs):
            for label, argv, _, _, cold in cases:
                env = envs[label]
                if cold:  # an empty cache of its own, as after an edit
                    cache = Path(tmp) / "cold-cache"
                    shutil.rmtree(cache, ignore_errors=True)
                    env = {**env, "XDG_CACHE_HOME": str(cache)}
                t = time.perf_counter()
                subprocess.run(argv, cwd=cwds[label], env=env, capture_output=True, check=True)
                samples[label].append((time.perf_counter() - t) * 1000)
        baseline = statistics.median(samples[CASES[0][0]])
        for label, *_ in cases:
            med = statistics.median(samples[label])
            p95 = sorted(samples[label])[min(args.runs - 1, int(0.95 * args.runs))]
            print(f"  {label:<52} {med:7.1f} / {baseline:5.1f} ms = {med / baseline:5.2f}x   (p95 {p95:6.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

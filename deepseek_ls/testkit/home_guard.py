"""Pytest plugin: tests never read or write the real user's deepseek-ls state.

The server and CLI keep state outside the workspace: the user config (`config.toml`, the trust
list, `state.key`, the HMAC key that seals checkpoints, patches and sessions) and caches such as
`config show`'s. A test that let them fall back to the real `~/.config` and `~/.cache` would
create a key in the tester's home, or read the tester's own config and trust list.

So, from the start of the run (before collection, so module- and session-scoped servers inherit
it), `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME` and `XDG_DATA_HOME` point into a
temporary directory, and each test gets its own under its `tmp_path` (`xdg-config`, `xdg-cache`,
...). Subprocesses inherit them: servers, the CLI, nvim and code-server started with
`os.environ` as their base. `DEEPSEEK_LS_USER_CONFIG` is removed.

And a guard: the real deepseek-ls directories (as the environment named them when pytest
started) are snapshotted before each test and compared after it; a test that changed them fails,
naming what changed, and the run fails if they changed outside any test (a module fixture).
Under pytest-xdist the workers inherit the controller's temporary directories, so the controller
hands each worker the environment it started with (in the worker's `workerinput`) and they watch
the same real directories.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

APP = "deepseek-ls"
ENV_USER_CONFIG = "DEEPSEEK_LS_USER_CONFIG"
ORIGIN_KEY = "deepseek_ls_origin_env"  # an xdist worker's input: the controller's starting environment
# Each XDG base directory, its default under $HOME, and the per-test folder name under tmp_path.
XDG_DIRS = {
    "XDG_CONFIG_HOME": (".config", "xdg-config"),
    "XDG_CACHE_HOME": (".cache", "xdg-cache"),
    "XDG_STATE_HOME": (".local/state", "xdg-state"),
    "XDG_DATA_HOME": (".local/share", "xdg-data"),
}

Snapshot = dict[str, tuple[int, int, int]]

_watched: list[tuple[Path, bool]] = []  # (directory, recursive)
_session_base: str | None = None
_session_owner: object | None = None  # the config that set it (an in-process pytester run is another)
_session_before: Snapshot = {}
_origin: dict[str, str] = {}


def real_state_dirs(env: dict[str, str] | os._Environ[str]) -> list[tuple[Path, bool]]:
    """The directories deepseek-ls would keep the user's state in under `env`: each XDG base's
    `deepseek-ls` folder (from the variable, and its default under $HOME), recursively, and the
    folder of an explicit `DEEPSEEK_LS_USER_CONFIG` (its direct entries: `state.key` lives there)."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    found: dict[Path, bool] = {}
    for var, (default, _) in XDG_DIRS.items():
        for base in (env.get(var), str(home / default)):
            if base:
                found[Path(base) / APP] = True
    if env.get(ENV_USER_CONFIG):
        found.setdefault(Path(env[ENV_USER_CONFIG]).expanduser().parent, False)
    return list(found.items())


def snapshot(dirs: list[tuple[Path, bool]]) -> Snapshot:
    """Every entry under `dirs` with its (mode, size, mtime); a missing directory has none."""
    out: Snapshot = {}
    for root, recursive in dirs:
        try:
            st = root.lstat()
        except OSError:
            continue
        out[str(root)] = (st.st_mode, 0, st.st_mtime_ns)
        entries = root.rglob("*") if recursive else root.iterdir()
        try:
            for path in entries:
                try:
                    st = path.lstat()
                except OSError:
                    continue
                out[str(path)] = (st.st_mode, st.st_size, st.st_mtime_ns)
        except OSError:
            continue
    return out


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What differs between two snapshots, one line per path."""
    lines = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return lines


def _point_at(base: Path, setenv) -> None:
    for var, (_, name) in XDG_DIRS.items():
        setenv(var, str(base / name))


def pytest_configure(config: pytest.Config) -> None:
    global _session_base, _session_before, _session_owner
    if _session_base is not None:
        return
    _session_owner = config
    handed = getattr(config, "workerinput", {}).get(ORIGIN_KEY)
    names = ("HOME", ENV_USER_CONFIG, *XDG_DIRS)
    _origin.clear()
    _origin.update(handed or {name: os.environ[name] for name in names if os.environ.get(name)})
    _watched[:] = real_state_dirs(_origin)
    _session_before = snapshot(_watched)
    _session_base = tempfile.mkdtemp(prefix="deepseek-ls-tests-")
    _point_at(Path(_session_base), os.environ.__setitem__)
    os.environ.pop(ENV_USER_CONFIG, None)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist, in the controller: a worker watches the directories the controller watches."""
    node.workerinput[ORIGIN_KEY] = dict(_origin)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _session_base
    if _session_base is not None and config is _session_owner:
        shutil.rmtree(_session_base, ignore_errors=True)
        _session_base = None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config is not _session_owner:
        return
    found = changes(_session_before, snapshot(_watched))
    if found:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "the test run changed the real deepseek-ls state directories:\n  " + "\n  ".join(found)
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's XDG directories (under its `tmp_path`), for it and every process it starts;
    fails the test if it changed the real user's deepseek-ls directories. Yields the config home."""
    _point_at(tmp_path, monkeypatch.setenv)
    monkeypatch.delenv(ENV_USER_CONFIG, raising=False)
    before = snapshot(_watched)
    yield tmp_path / XDG_DIRS["XDG_CONFIG_HOME"][1]
    found = changes(before, snapshot(_watched))
    if found:
        pytest.fail("this test changed the real user's deepseek-ls state (a process it started did not get "
                    "the test's XDG_* directories):\n  " + "\n  ".join(found), pytrace=False)

"""Tests run as a throwaway user: the state deepseek-ls keeps beside the user config (the seal
key) lands in the test's own XDG directories, and a test that reaches the real ones fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.store import seal
from deepseek_ls.testkit.home_guard import XDG_DIRS

INNER_CONFTEST = 'pytest_plugins = ["deepseek_ls.testkit.home_guard"]\n'


def test_every_test_has_its_own_user_dirs(tmp_path: Path) -> None:
    for var, (_, name) in XDG_DIRS.items():
        assert os.environ[var] == str(tmp_path / name)
    assert "DEEPSEEK_LS_USER_CONFIG" not in os.environ
    assert seal.key_path() == tmp_path / "xdg-config" / "deepseek-ls" / "state.key"


def test_a_subprocess_seals_with_the_tests_key(tmp_path: Path) -> None:
    # A test that never asked for `user_config_home` and starts a process with the inherited env.
    code = "from deepseek_ls.store import seal; seal._key(); print(seal.key_path())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert Path(out.strip()) == tmp_path / "xdg-config" / "deepseek-ls" / "state.key"
    assert (tmp_path / "xdg-config" / "deepseek-ls" / "state.key").stat().st_size >= 32


@pytest.mark.parametrize("leak", [
    pytest.param("os.environ.pop('XDG_CONFIG_HOME'); seal._key()", id="key-in-default-config"),
    pytest.param("subprocess.run([sys.executable, '-c', 'from deepseek_ls.store import seal; seal._key()'],"
                 " env={'HOME': os.environ['HOME'], 'PATH': os.environ['PATH']}, check=True)",
                 id="subprocess-with-a-fresh-env"),
    pytest.param("d = Path(os.environ['HOME'], '.cache', 'deepseek-ls'); d.mkdir(parents=True); "
                 "(d / 'x').write_text('1')", id="cache-under-home"),
])
def test_never_touch_real_user_state_fails_the_test(pytester: pytest.Pytester, tmp_path: Path, leak: str) -> None:
    # The inner run's "real" home is a scratch one: its guard must catch the write there.
    home = tmp_path / "home"
    home.mkdir()
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(test_leak=f"""
import os, subprocess, sys
from pathlib import Path
from deepseek_ls.store import seal

def test_clean():
    seal._key()

def test_leaks():
    {leak}
""")
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env["HOME"] = str(home)
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(pytester.path)],
                            cwd=pytester.path, env=env, capture_output=True, text=True)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "2 passed, 1 error" in out, out  # test_leaks passes its call, fails its teardown
    assert "test_leaks" in out and "changed the real user's deepseek-ls state" in out, out
    assert "deepseek-ls" in "".join(p.name for p in home.rglob("*"))

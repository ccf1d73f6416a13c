"""`config show` served from its cache (cli/show_cache.py): never stale, never an error replayed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_ls.cli import show_cache

# Runs `config show` in a fresh interpreter and says on stderr how it was answered: CACHED
# (replayed by show_cache), FAST (read and checked without pydantic, show_fast) or PYDANTIC.
PROBE = (
    "import sys\n"
    "from deepseek_ls.cli import main, show_cache\n"
    "served = []\n"
    "replay = show_cache.serve\n"
    "show_cache.serve = lambda *a, **k: served.append(replay(*a, **k)) or served[-1]\n"
    "try:\n"
    "    rc = main(sys.argv[1:])\n"
    "except SystemExit as exit:\n"
    "    rc = exit.code\n"
    "how = 'CACHED' if served and served[0] else 'PYDANTIC' if 'pydantic' in sys.modules else 'FAST'\n"
    "print(how, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


@pytest.fixture
def show(cli_env, empty_dir):
    def run(*extra: str, env: dict[str, str] | None = None):
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, "config", "show", *extra],
            cwd=empty_dir, env={**cli_env, **(env or {})}, capture_output=True, text=True, timeout=60,
        )
        return proc.returncode, proc.stdout, proc.stderr.strip().splitlines()[-1]

    return run


def _same_stat_rewrite(path: Path, text: str) -> None:
    """Rewrite a file keeping its size and mtime: only its content tells it changed."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_the_second_run_prints_the_same_without_importing_pydantic(show):
    rc1, out1, how1 = show()
    rc2, out2, how2 = show()
    assert (rc1, how1) == (0, "FAST")
    assert (rc2, how2) == (0, "CACHED")
    assert out2 == out1 and "router.threshold_high = 0.72" in out2
    _, json1, _ = show("--json")
    _, json2, how = show("--json")
    assert json2 == json1 and how == "CACHED"


def test_never_stale_a_changed_workspace_config_is_read_again(show, empty_dir):
    config = empty_dir / ".deepseek" / "config.toml"
    config.parent.mkdir()
    config.write_text("[router]\nthreshold_high = 0.61\n")
    assert "threshold_high = 0.61" in show()[1]
    assert show()[2] == "CACHED"
    _same_stat_rewrite(config, "[router]\nthreshold_high = 0.62\n")
    rc, out, how = show()
    assert (rc, how) == (0, "FAST") and "threshold_high = 0.62" in out


def test_never_stale_a_new_user_config_is_read(show, cli_env):
    show()
    user = Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[router]\nthreshold_high = 0.55\n")
    _, out, how = show()
    assert how == "FAST" and "threshold_high = 0.55" in out


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"DEEPSEEK_LS_ROUTER__THRESHOLD_HIGH": "0.5"}, "threshold_high = 0.5", id="config-variable"),
        pytest.param({"DEEPSEEK_API_KEY": "sk-verysecretvalue9876"}, "set (...9876)", id="api-key"),
    ],
)
def test_never_stale_a_changed_environment_is_validated_again(show, env, expected):
    show()
    _, out, how = show(env=env)
    assert how == "FAST" and expected in out
    assert show(env=env)[2] == "CACHED"


def test_a_custom_api_key_variable_is_compared_through_its_mask(show, cli_env):
    user = Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[llm]\napi_key_env = "MY_KEY"\n')
    show(env={"MY_KEY": "sk-firstsecretvalue1111"})
    _, out, how = show(env={"MY_KEY": "sk-secondsecretvalue2222"})
    assert how == "FAST" and "set (...2222)" in out
    assert "sk-secondsecretvalue2222" not in out


def test_no_leak_the_cache_holds_the_masked_key_only(show, cli_env):
    secret = "sk-verysecretvalue4321"
    show(env={"DEEPSEEK_API_KEY": secret})
    entries = list(Path(show_cache.cache_dir(cli_env)).glob("*.json"))
    assert entries and all(secret not in p.read_text() for p in entries)
    assert all(p.stat().st_mode & 0o077 == 0 for p in entries)


def test_a_bad_config_is_reported_every_time_never_cached(show, empty_dir, cli_env):
    (empty_dir / ".deepseek").mkdir()
    (empty_dir / ".deepseek" / "config.toml").write_text("[router]\nthreshold_high = 'high'\n")
    for _ in range(2):
        rc, out, how = show()
        assert rc != 0 and out == "" and how == "PYDANTIC"
    # The same in the user config (always trusted, read by the fast path first).
    (empty_dir / ".deepseek" / "config.toml").unlink()
    user = Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[router]\nthreshold_high = -1\n")
    for _ in range(2):
        rc, out, how = show()
        assert rc == 2 and out == "" and how == "PYDANTIC"


def test_other_command_lines_take_the_slow_path():
    assert show_cache._options(["config", "show", "--json", "--profile", "x"]) == {"--json": "", "--profile": "x"}
    assert show_cache._options(["--workspace=/w", "config", "show"]) == {"--workspace": "/w"}
    for argv in (["config", "show", "--help"], ["config", "path"], ["config", "show", "-v"], ["config", "show", "--profile"]):
        assert show_cache._options(argv) is None


def test_an_edited_package_file_is_a_miss(tmp_path, monkeypatch):
    (tmp_path / "config.py").write_text("A = 1\n")
    monkeypatch.setattr(show_cache, "_PACKAGE", str(tmp_path))
    monkeypatch.setattr(show_cache, "_stamps", {})
    before = show_cache._key({}, {})
    (tmp_path / "config.py").write_text("A = 22\n")
    monkeypatch.setattr(show_cache, "_stamps", {})  # a new process (the walk is once per process)
    assert show_cache._key({}, {}) != before


def test_the_copies_without_heavy_imports_agree_with_the_originals(tmp_path, monkeypatch):
    from deepseek_ls import trust
    from deepseek_ls.cli.common import resolve_root
    from deepseek_ls.config import mask_secret

    assert show_cache.TRUSTED_FILES == trust.TRUSTED_FILES
    for value in (None, "", "short", "sk-0123456789abcdef"):
        assert show_cache._mask(value) == mask_secret(value)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "repo" / "sub")
    assert show_cache._root({}) == str(resolve_root(argparse.Namespace(workspace=None)))
    assert show_cache._root({"--workspace": ".."}) == str(resolve_root(argparse.Namespace(workspace="..")))

"""A plain `git diff` — no `--no-ext-diff` from the caller — works on a hostile repository and runs
none of its programs.

Git has no setting that switches an external diff off: it runs whatever `diff.external` holds, the
emptied value of our overrides included ("cannot run"). So every git we start gets the options with
the overrides: `SafeGit.run("diff")` and a hardened `git diff` command print git's own diff — the
same as plain git on a clean copy — while the canary the repository names never runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deepseek_ls.policy.git_safety import harden_command, prepare
from deepseek_ls.testkit import canary

HOSTILE = [
    pytest.param("[diff]\n\texternal = {evil}\n", "", id="diff-external"),
    pytest.param('[diff "evil"]\n\tcommand = {evil}\n', "*.txt diff=evil\n", id="diff-driver-command"),
    pytest.param('[diff "evil"]\n\ttextconv = {evil}\n', "*.txt diff=evil\n", id="diff-textconv"),
]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    return env


def _git(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.fixture
def clean(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository with a committed `a.txt` changed in the work tree."""
    (tmp_path / "home").mkdir()
    env = _env(tmp_path / "home")
    root = tmp_path / "clean"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    for args in (("init", "-q", "-b", "main"), ("add", "a.txt"), ("commit", "-qm", "one")):
        assert _git(root, env, *args).returncode == 0
    (root / "a.txt").write_text("one\n2\n")
    return root, env


def _hostile(clean: Path, tmp_path: Path, config: str, attributes: str) -> tuple[Path, Path]:
    root = tmp_path / "hostile"
    shutil.copytree(clean, root, symlinks=True)
    marker = tmp_path / "outside" / "ran"
    evil = canary.plant(tmp_path / "evil.sh", marker)
    with open(root / ".git" / "config", "a") as fh:
        fh.write(config.format(evil=evil))
    if attributes:
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "attributes").write_text(attributes)
    return root, marker


@pytest.mark.parametrize(("config", "attributes"), HOSTILE)
def test_no_unapproved_exec_plain_git_diff_works_on_a_hostile_repository(clean, tmp_path: Path, config: str,
                                                                        attributes: str) -> None:
    clean_root, env = clean
    expected = _git(clean_root, env, "diff")
    assert expected.returncode == 0 and "-two\n+2\n" in expected.stdout, expected.stderr
    root, marker = _hostile(clean_root, tmp_path, config, attributes)

    safe = prepare(root, env)
    assert safe is not None
    done = safe.run("diff")  # what a caller writes: no --no-ext-diff of its own
    assert done.stdout.decode() == expected.stdout
    argv, hardened_env = harden_command(["git", "diff"], root, env)
    command = subprocess.run(argv, cwd=root, env=hardened_env, capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    assert command.returncode == 0 and command.stdout == expected.stdout, command.stderr
    assert canary.ran(marker) == "", f"the repository's diff program ran: {canary.ran(marker)}"

    _git(root, env, "diff")
    assert canary.ran(marker), "control: plain git diff did not run the canary; the case tests nothing"


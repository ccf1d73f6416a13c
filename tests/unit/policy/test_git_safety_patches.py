"""A git command that prints a patch, run through `harden_command`, answers with git's own diff.

The hardening empties `diff.external` and every textconv driver (`-c key=`), and git then tries
to run the empty program and stops ("cannot run") unless the subcommand is also given
`--no-ext-diff` / `--no-textconv`. Each case runs the real git on a small repository with a
branch, a tag and a stash whose configuration names a canary script as external diff or as a
textconv driver: the hardened command succeeds, prints exactly what plain git prints on a clean
copy of the same repository, and the canary never runs. Where plain git on the hostile copy does
run the canary, a control run proves the case is live.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from deepseek_ls.policy.git_safety import harden_command

HOSTILE = {
    "diff-external": ("[diff]\n\texternal = {canary}\n", ""),
    "textconv": ('[diff "evil"]\n\ttextconv = {canary}\n', "*.txt diff=evil\n"),
}

# (git arguments, the hostile kinds whose canary plain git runs for them: the control)
TC, BOTH = ("textconv",), ("diff-external", "textconv")
COMMANDS = [
    pytest.param(["stash", "show", "-p"], (), id="stash-show-p"),
    pytest.param(["stash", "show", "-p", "stash@{0}"], (), id="stash-show-p-named"),
    pytest.param(["stash", "show"], (), id="stash-show-default-stat"),
    pytest.param(["stash", "show", "--stat"], (), id="stash-show-stat"),
    pytest.param(["stash", "show", "--patch-with-stat"], (), id="stash-show-patch-with-stat"),
    pytest.param(["stash", "list"], (), id="stash-list"),
    pytest.param(["stash", "list", "-p"], TC, id="stash-list-p"),
    pytest.param(["reflog"], (), id="reflog"),
    pytest.param(["format-patch", "-1", "--stdout"], (), id="format-patch"),
    pytest.param(["reflog", "-p", "-2"], TC, id="reflog-p"),
    pytest.param(["reflog", "show", "-p", "-2"], TC, id="reflog-show-p"),
    pytest.param(["log", "-p", "-1"], TC, id="log-p"),
    pytest.param(["show", "v2"], TC, id="show"),
    pytest.param(["diff", "HEAD~1"], BOTH, id="diff"),
    pytest.param(["whatchanged", "-p", "-1"], TC, id="whatchanged"),
    pytest.param(["blame", "a.txt"], TC, id="blame"),  # textconv only
    pytest.param(["-C", ".", "stash", "show", "-p"], (), id="global-option-before"),
]


def _git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A clean repository `clean` (branch `side`, tag `v2`, a stash) and its environment."""
    base = tmp_path_factory.mktemp("git-patches")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(base / "home"), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", GIT_AUTHOR_NAME="a",
               GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    (base / "home").mkdir()
    root = base / "clean"
    root.mkdir()
    # (content of a.txt written first, or None; git arguments)
    steps = [(None, ("init", "-q", "-b", "main")), ("one\ntwo\n", ("add", "a.txt")), (None, ("commit", "-qm", "one")),
             ("one\n2\n", ("commit", "-qam", "two")), (None, ("tag", "v2")),
             (None, ("checkout", "-q", "-b", "side", "HEAD~1")), ("uno\ntwo\n", ("commit", "-qam", "side")),
             (None, ("checkout", "-q", "main")), ("one\nthree\n", ("stash", "-q"))]
    for content, step in steps:
        if content is not None:
            (root / "a.txt").write_text(content)
        done = _git(root, env, *step)
        assert done.returncode == 0, done.stderr
    assert _git(root, env, "stash", "list").stdout.strip(), "no stash made"
    return root, env


def _hostile_copy(repos: tuple[Path, dict[str, str]], tmp_path: Path, kind: str) -> tuple[Path, Path]:
    clean, _ = repos
    root = tmp_path / "hostile"
    shutil.copytree(clean, root, symlinks=True)
    marker = tmp_path / "CANARY-RAN"
    canary = tmp_path / "canary.sh"
    canary.write_text(f"#!/bin/sh\necho ran >> '{marker}'\ncat \"$1\" 2>/dev/null\nexit 0\n")
    canary.chmod(0o755)
    config, attributes = HOSTILE[kind]
    with open(root / ".git" / "config", "a") as f:
        f.write(config.format(canary=canary))
    if attributes:
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "attributes").write_text(attributes)
    return root, marker


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize(("args", "live"), COMMANDS)
def test_no_unapproved_exec_patch_commands_give_gits_own_diff(repos, tmp_path: Path, kind: str, args: list[str],
                                                             live: tuple[str, ...]) -> None:
    if args[0] == "blame" and kind != "textconv":
        pytest.skip("blame has no external diff")
    clean, env = repos
    root, marker = _hostile_copy(repos, tmp_path, kind)
    expected = _git(clean, env, *args)
    assert expected.returncode == 0 and expected.stdout, expected.stderr

    argv, hardened_env = harden_command(["git", *args], root, env)
    done = subprocess.run(argv, cwd=root, env=hardened_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{argv}: {done.stderr}"
    assert done.stdout == expected.stdout
    assert not marker.exists(), f"the repository's {kind} ran: {marker.read_text()}"

    if kind in live:
        _git(root, env, *args)
        assert marker.exists(), "control: plain git did not run the canary; the case tests nothing"


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_no_unapproved_exec_range_diff(repos, tmp_path: Path, kind: str) -> None:
    """range-diff takes the options for its own diff, not for the `git log` it runs inside: with an
    external diff configured it answers like plain git; with a textconv driver it stops ("cannot run",
    git 2.39) — and nothing runs."""
    clean, env = repos
    root, marker = _hostile_copy(repos, tmp_path, kind)
    args = ["range-diff", "main~1..main", "side~1..side"]
    argv, hardened_env = harden_command(["git", *args], root, env)
    assert argv[argv.index("range-diff") + 1:][:2] == ["--no-ext-diff", "--no-textconv"]
    done = subprocess.run(argv, cwd=root, env=hardened_env, capture_output=True, text=True, timeout=60)
    if kind == "diff-external" or done.returncode == 0:  # (a later git may pass the options on)
        assert done.returncode == 0, done.stderr
        assert done.stdout == _git(clean, env, *args).stdout
    else:
        assert "cannot run" in done.stderr, done.stderr
    assert not marker.exists(), f"the repository's {kind} ran: {marker.read_text()}"


@pytest.mark.parametrize(("args", "expected"), [
    pytest.param(["stash", "show", "-p"], ["stash", "show", "--no-ext-diff", "--no-textconv", "-p"], id="stash-show"),
    pytest.param(["stash", "list", "-p"], ["stash", "list", "--no-ext-diff", "--no-textconv", "-p"], id="stash-list"),
    pytest.param(["stash", "show"], ["stash", "show"], id="stash-show-no-options-keeps-its-default-stat"),
    pytest.param(["stash", "show", "stash@{1}"], ["stash", "show", "stash@{1}"], id="stash-show-ref-only"),
    pytest.param(["stash", "-p"], ["stash", "-p"], id="stash-push-interactive-unchanged"),
    pytest.param(["stash", "pop"], ["stash", "pop"], id="stash-pop-unchanged"),
    pytest.param(["reflog"], ["reflog", "--no-ext-diff", "--no-textconv"], id="reflog-default-is-show"),
    pytest.param(["reflog", "expire", "--all"], ["reflog", "expire", "--all"], id="reflog-expire-unchanged"),
    pytest.param(["reflog", "exists", "HEAD"], ["reflog", "exists", "HEAD"], id="reflog-exists-unchanged"),
    pytest.param(["format-patch", "-1"], ["format-patch", "--no-ext-diff", "--no-textconv", "-1"], id="format-patch"),
    pytest.param(["add", "-p"], ["add", "-p"], id="add-p-unchanged"),
    pytest.param(["diff", "stash"], ["diff", "--no-ext-diff", "--no-textconv", "stash"], id="diff-of-a-ref-named-stash"),
])
def test_patch_subcommands_get_the_options_after_their_words(tmp_path: Path, args: list[str],
                                                             expected: list[str]) -> None:
    argv, _ = harden_command(["git", *args], tmp_path, {"PATH": os.environ["PATH"]})
    assert [a for a in argv[1:] if a != "-c" and "=" not in a] == expected


def test_reflog_subcommands_without_diff_options_still_run(repos, tmp_path: Path) -> None:
    """The real git rejects diff options on `reflog exists`: the hardened command must not add them."""
    root, _ = _hostile_copy(repos, tmp_path, "diff-external")
    _, env = repos
    argv, hardened_env = harden_command(["git", "reflog", "exists", "HEAD"], root, env)
    done = subprocess.run(argv, cwd=root, env=hardened_env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

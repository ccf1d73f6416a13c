"""A hostile repository never makes a teammate lane run one of its programs.

Each case plants a program-running setting that names a canary script — a filter
(clean / smudge / process) or diff driver selected by `.gitattributes`, textconv, an
external diff, pagers, fsmonitor, hooks (in `.git/hooks`, through `core.hooksPath`), the
same through `include.path` or an `includeIf` that only matches inside a lane (its
branch, its git directory), and `GIT_*` variables in the server's environment. Then a
whole lane runs on it for real: repository check, worktree made from the workspace's
current state (uncommitted and untracked files, an unsaved buffer), base commit, the
lane's edits, its result diff, removal, and the clean-up at the next start. The canary
never appears, and the lane still gives the right diff. A submodule's own configuration
(which git reads when `status` looks inside it) is part of the corpus too.

On the lanes' former git (its own `git()` with three `-c` settings and the caller's
whole environment) the filter, textconv, `includeIf`, exec-path and config-environment
cases ran their canary.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from deepseek_ls.agent.lanes import worktree as wt
from deepseek_ls.testkit import canary

EVIL = "@EVIL@"  # replaced by the canary script's path
DENY = [".env", ".env.*"]
HOOKS = ("post-checkout", "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction",
         "post-index-change", "pre-auto-gc", "fsmonitor-watchman", "post-rewrite")


@dataclass(frozen=True)
class Attack:
    config: str = ""  # appended to .git/config
    attributes: str = ""  # .gitattributes (committed)
    extra: tuple[tuple[str, str], ...] = ()  # (path relative to the workspace, content) written before the lane
    env: tuple[tuple[str, str], ...] = ()  # variables in the server's environment
    hooks_in: str = ""  # a directory (relative to the workspace) filled with canary hooks
    submodule_config: str = ""  # a submodule `sub/` (changed in the work tree) whose own config gets this


FILTER = '[filter "evil"]\n\tclean = @EVIL@\n\tsmudge = @EVIL@\n'
INC = (("evil.inc", FILTER),)
ATTACKS = [
    pytest.param(Attack('[filter "evil"]\n\tsmudge = @EVIL@\n', "*.txt filter=evil\n"), id="filter-smudge-on-checkout"),
    pytest.param(Attack('[filter "evil"]\n\tclean = @EVIL@\n', "*.txt filter=evil\n"), id="filter-clean-on-add"),
    pytest.param(Attack('[filter "evil"]\n\tprocess = @EVIL@\n', "*.txt filter=evil\n"), id="filter-process"),
    pytest.param(Attack('[filter "evil"]\n\tclean = @EVIL@\n\trequired = true\n', "*.txt filter=evil\n"),
                 id="filter-required"),
    pytest.param(Attack(FILTER, extra=((".git/info/attributes", "*.txt filter=evil\n"),)), id="filter-by-info-attributes"),
    pytest.param(Attack('[diff "evil"]\n\ttextconv = @EVIL@\n', "*.txt diff=evil\n"), id="diff-textconv-on-result"),
    pytest.param(Attack('[diff "evil"]\n\tcommand = @EVIL@\n', "*.txt diff=evil\n"), id="diff-driver-command"),
    pytest.param(Attack("[diff]\n\texternal = @EVIL@\n"), id="diff-external"),
    pytest.param(Attack("[core]\n\tpager = @EVIL@\n[pager]\n\tdiff = @EVIL@\n\tstatus = @EVIL@\n"), id="pagers"),
    pytest.param(Attack("[core]\n\tfsmonitor = @EVIL@\n"), id="core-fsmonitor"),
    pytest.param(Attack(hooks_in=".git/hooks"), id="hooks-in-git-dir"),
    pytest.param(Attack("[core]\n\thooksPath = hooks-evil\n", hooks_in="hooks-evil"), id="core-hookspath"),
    pytest.param(Attack("[include]\n\tpath = ../evil.inc\n", "*.txt filter=evil\n", extra=INC), id="include-path-filter"),
    pytest.param(Attack('[includeIf "onbranch:lane/**"]\n\tpath = ../evil.inc\n', "*.txt filter=evil\n",
                        extra=(("evil.inc", FILTER + '[diff "evil"]\n\ttextconv = @EVIL@\n'),)),
                 id="includeif-onbranch-lane-only"),
    pytest.param(Attack('[includeIf "gitdir:**/worktrees/**"]\n\tpath = @WS@/evil.inc\n', "*.txt filter=evil\n",
                        extra=INC), id="includeif-gitdir-lane-only"),
    pytest.param(Attack("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
                        "*.txt filter=evil\n", extra=((".git/config.worktree", FILTER),)), id="worktree-config-filter"),
    pytest.param(Attack(submodule_config=FILTER), id="submodule-own-config-filter"),
    pytest.param(Attack(submodule_config="[core]\n\tfsmonitor = @EVIL@\n"), id="submodule-own-config-fsmonitor"),
    pytest.param(Attack(env=(("GIT_EXEC_PATH", "@EXEC@"),)), id="env-git-exec-path"),
    pytest.param(Attack(attributes="*.txt filter=evil\n",
                        env=(("GIT_CONFIG_PARAMETERS", "'filter.evil.clean'='@EVIL@' 'filter.evil.smudge'='@EVIL@'"),)),
                 id="env-git-config-parameters"),
    pytest.param(Attack(attributes="*.txt filter=evil\n",
                        env=(("GIT_CONFIG_COUNT", "1"), ("GIT_CONFIG_KEY_0", "filter.evil.clean"),
                             ("GIT_CONFIG_VALUE_0", "@EVIL@"))), id="env-git-config-count"),
    pytest.param(Attack(env=(("GIT_EXTERNAL_DIFF", "@EVIL@"), ("GIT_PAGER", "@EVIL@"))), id="env-external-diff-pager"),
]


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, timeout=60, env=env).stdout


def _hostile_workspace(tmp_path: Path, attack: Attack) -> tuple[Path, Path, dict[str, str]]:
    """The workspace (committed, then changed in the work tree), the canary's path, the environment to set."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "notes.txt").write_text("first\n")
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    if attack.attributes:
        (root / ".gitattributes").write_text(attack.attributes)
    git(root, "init", "-q", "-b", "main")
    if attack.submodule_config:
        _add_submodule(tmp_path, root)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    marker = tmp_path / "outside" / "ran"
    evil = canary.plant(tmp_path / "evil.sh", marker)
    exec_dir = tmp_path / "exec-path"  # a `git` that tells, then does the real work
    exec_dir.mkdir()
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    (exec_dir / "git").write_text(f"#!/bin/sh\necho \"git $*\" >> {marker}\nexec {real_git} \"$@\"\n")
    (exec_dir / "git").chmod(0o755)

    def fill(text: str) -> str:
        return text.replace(EVIL, str(evil)).replace("@WS@", str(root)).replace("@EXEC@", str(exec_dir))

    if attack.hooks_in:
        canary.plant_hooks(root / attack.hooks_in, HOOKS, marker)
    for rel, content in attack.extra:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(fill(content))
    with open(root / ".git" / "config", "a") as fh:
        fh.write(fill(attack.config))
    if attack.submodule_config:  # git's status of the workspace would look inside with the submodule's config
        with open(root / ".git" / "modules" / "sub" / "config", "a") as fh:
            fh.write(fill(attack.submodule_config))
        (root / "sub" / "inner.txt").write_text("INNER\n")  # same size: git must hash it to tell
        os.utime(root / "sub" / "inner.txt", (946684800, 946684800))
    # Uncommitted and untracked work, with an old mtime: git must hash the file (a clean filter's moment).
    (root / "src" / "notes.txt").write_text("second\n")
    os.utime(root / "src" / "notes.txt", (946684800, 946684800))
    (root / "src" / "new.txt").write_text("untracked\n")
    return root, marker, {k: fill(v) for k, v in attack.env}


def _add_submodule(tmp_path: Path, root: Path) -> None:
    source = tmp_path / "sub-source"
    source.mkdir()
    (source / "inner.txt").write_text("inner\n")
    (source / ".gitattributes").write_text("*.txt filter=evil\n")
    git(source, "init", "-q", "-b", "main")
    git(source, "add", ".")
    git(source, "commit", "-q", "-m", "sub")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")


def _run_a_lane(root: Path) -> str:
    """Everything a lane does with git, start to end; returns its result diff."""
    state = root / ".deepseek"
    assert wt.repo_problem(root) is None
    tree = wt.create(root, state, "l1", "lane/s/l1", buffers={"src/buffer.txt": "unsaved\n"}, deny_paths=DENY)
    try:
        assert (tree.root / "src" / "notes.txt").read_text() == "second\n"  # the workspace as it is now
        assert (tree.root / "src" / "new.txt").read_text() == "untracked\n"
        assert (tree.root / "src" / "buffer.txt").read_text() == "unsaved\n"
        (tree.root / "src" / "notes.txt").write_text("third, by the lane\n")
        (tree.root / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
        (tree.root / "src" / "made.txt").write_text("made by the lane\n")
        diff = wt.result_diff(tree, ["src/notes.txt", "src/app.py", "src/made.txt"]).diff
    finally:
        wt.remove(tree)
    wt.cleanup_stale(root, state)
    assert not tree.tree.exists()
    return diff


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_unapproved_exec_lane_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: Attack) -> None:
    root, marker, env = _hostile_workspace(tmp_path, attack)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    error: Exception | None = None
    try:
        diff = _run_a_lane(root)
    except Exception as exc:  # noqa: BLE001 - the canary is checked first: a program that ran, then broke git
        error = exc
    ran = canary.ran(marker)
    assert ran == "", f"the repository's setting ran a program during a lane: {ran}"
    if error is not None:
        raise error
    # The lane still works: its real change, unconverted, against the workspace's current state.
    assert "-second\n+third, by the lane\n" in diff
    assert "-    return a - b\n+    return a + b\n" in diff
    assert "+++ b/src/made.txt" in diff and "new file mode" in diff
    assert "lane/" not in git(root, "branch", "--list")
    assert (root / "src" / "notes.txt").read_text() == "second\n"  # the workspace untouched


def test_no_unapproved_exec_lane_the_attacks_are_live(tmp_path: Path) -> None:
    """Control: plain git on such a repository does run the canary (the cases test something)."""
    root, marker, _ = _hostile_workspace(tmp_path, Attack('[filter "evil"]\n\tclean = @EVIL@\n', "*.txt filter=evil\n"))
    git(root, "add", "-A")
    assert marker.exists()
    root2, marker2, _ = _hostile_workspace(tmp_path / "2", Attack(hooks_in=".git/hooks"))
    git(root2, "worktree", "add", "-q", "-b", "lane/x", str(tmp_path / "2" / "wt"))
    assert "post-checkout" in marker2.read_text()
    root3, marker3, _ = _hostile_workspace(tmp_path / "3", Attack(submodule_config=FILTER))
    git(root3, "status", "--porcelain")
    assert marker3.exists()

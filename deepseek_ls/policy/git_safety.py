"""Running git on a repository someone else wrote, without running their programs.

A repository's own configuration can name programs git runs as a side effect of
read-only commands: `core.fsmonitor` (run by `status`, `diff`, `ls-files`),
clean/smudge/process filters named in `.gitattributes` (run when a work-tree file is
hashed), diff textconv and external diff drivers, `core.pager`, hooks,
`core.sshCommand` / credential helpers / upload-pack programs (transports), and any
of these through `include.path`. A `.git` file or a `commondir` can also point git at
another repository of the person's (whose history would then be read and sent).

Every git process we start goes through here:

- `locate(root)` finds the repository the way git would (a `.git` directory, file or
  symlink in `root` or a parent) and refuses a git directory outside the work tree
  unless it points back at it (a linked worktree's `gitdir` file, a submodule's
  `core.worktree`);
- `git_env()` gives git a fixed `GIT_DIR` / `GIT_WORK_TREE` (so `core.worktree` cannot
  move the work tree), no system config, no pager, no prompts, no optional locks, and
  none of the caller's `GIT_*` variables that redirect it;
- `config_overrides()` turns every program-valued setting off with `-c` (the command
  line wins over every config file): a fixed list, plus every `filter.*` / `diff.*` /
  `merge.*` driver the repository's config defines (read with `git config -l`, which
  runs nothing), so a driver name chosen by `.gitattributes` finds no program (a
  name with `=` in it, which `-c` cannot address, makes it `UnsafeRepository`);
- `run_git()` runs it bounded: a timeout, output capped; a git that could not run or was killed
  is `ProgramNotRun`, never an answer (`policy/launch.py`).

What runs git: the `git.*` tools (`tools/git.py`, also inside the OS sandbox when it
works), the index's `git ls-tree` / `ls-files` / `diff` / `cat-file --batch`
(`index/sources.py`, `index/reader.py`), `fs.list`, the 3-way merge and the teammate
lanes (`agent/lanes/worktree.py`: the workspace's repository and each lane's linked
worktree are prepared separately, since a setting may apply only inside a lane), and
a command whose program is git — a plan's verification `git status`, a `bash.run`
`git diff` — which `tools/shell.py` runs through `harden_command()` (overrides right
after `git`, git's environment, `--no-ext-diff --no-textconv` for subcommands that can
print a patch; an `UnsafeRepository` refuses the command). A shell line cannot be
hardened: it always asks, and says so when it contains git (`policy/commands.py`).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from deepseek_ls.policy.env import host_exec_path
from deepseek_ls.policy.launch import ProgramNotRun, check_program, exec_error, killed_by

# Every wait on git is bounded; listing a large repository takes seconds, not minutes.
GIT_TIMEOUT_SECONDS = 120.0
# Output of one bounded git run that is parsed (listings, config): far above any real repository's.
MAX_GIT_OUTPUT_BYTES = 256 * 1024 * 1024

# Settings that name a program (or make git run one), turned off for every git we start.
STATIC_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.askPass", ""),
    ("core.editor", "false"),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("uploadpack.packObjectsHook", ""),
    ("sequence.editor", "false"),
    ("gpg.program", "false"),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),  # no transport at all: ssh, ext::, file:// helpers
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "all"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("core.untrackedCache", "false"),
)
# Per-driver settings the repository names (filter.<name>.clean, diff.<name>.textconv, ...).
_DRIVER_KEY = re.compile(
    r"^(?P<key>(?:filter|diff|merge)\..+\.(?:clean|smudge|process|textconv|command|driver|required|cachetextconv))$",
    re.IGNORECASE,
)
# Other per-name settings that run programs (transports are off anyway; emptied for the record).
_NAMED_PROGRAM_KEY = re.compile(
    r"^(?P<key>(?:remote\..+\.(?:uploadpack|receivepack|vcs)|pager\..+|alias\..+|"
    r"credential\..+\.helper|gpg\..+\.program))$",
    re.IGNORECASE,
)
# Variables of the caller's environment that would redirect git or make it run something.
_DROP_ENV = re.compile(
    r"^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|"
    r"CONFIG|CONFIG_PARAMETERS|CONFIG_COUNT|CONFIG_KEY_\d+|CONFIG_VALUE_\d+|CONFIG_SYSTEM|EXTERNAL_DIFF|"
    r"DIFF_OPTS|SSH|SSH_COMMAND|PROXY_COMMAND|ASKPASS|EDITOR|SEQUENCE_EDITOR|PAGER|EXEC_PATH|TRACE\w*|"
    r"ATTR_SOURCE|REPLACE_REF_BASE|GRAFT_FILE|SHALLOW_FILE|CEILING_DIRECTORIES|DISCOVERY_ACROSS_FILESYSTEM)$"
)


class UnsafeRepository(ValueError):
    """The workspace's git directory is somewhere it should not be; git is not run on it."""


@dataclass(frozen=True)
class GitLocation:
    """A repository git may be run on: its git directory and its work tree (the top level)."""

    gitdir: Path
    worktree: Path


def locate(root: Path) -> GitLocation | None:
    """The repository `root` belongs to (`root` or the nearest parent holding `.git`), or None.

    Raises `UnsafeRepository` when its `.git` leads to a git directory outside the work tree
    that does not point back at it, or when a `commondir` borrows another repository."""
    root = Path(root).resolve()
    for top in (root, *root.parents):
        dot = top / ".git"
        if dot.is_symlink() or dot.exists():
            return _check(top, dot)
    return None


def _check(top: Path, dot: Path) -> GitLocation:
    if dot.is_file() and not dot.is_symlink():
        text = _read_small(dot)
        if not text.startswith("gitdir:"):
            raise UnsafeRepository(f"{dot} is not a git directory nor a 'gitdir:' file")
        gitdir = (top / text[len("gitdir:"):].strip()).resolve()
    else:
        gitdir = dot.resolve()
    if not gitdir.is_dir():
        raise UnsafeRepository(f"{dot} points to {gitdir}, which is not a directory")
    inside = gitdir.is_relative_to(top)
    if not inside and not _points_back(gitdir, top):
        raise UnsafeRepository(
            f"{dot} points to a git directory outside the workspace ({gitdir}) that does not belong to it; "
            "git is not run on it (it could be another of your repositories)"
        )
    commondir = gitdir / "commondir"
    if commondir.is_file():
        common = (gitdir / _read_small(commondir).strip()).resolve()
        # A linked worktree's git directory is <common>/worktrees/<name>.
        if not (gitdir.parent.name == "worktrees" and gitdir.parent.parent == common) and not common.is_relative_to(top):
            raise UnsafeRepository(
                f"{commondir} borrows another repository ({common}); git is not run on it"
            )
    return GitLocation(gitdir, top)


def _points_back(gitdir: Path, top: Path) -> bool:
    """A linked worktree's git directory names its `.git` file in `gitdir`; a submodule's
    (under the superproject's `.git/modules/`) names its work tree in `core.worktree`."""
    back = gitdir / "gitdir"
    if back.is_file():
        try:
            return Path(_read_small(back).strip()).resolve() == top / ".git"
        except OSError:
            return False
    if "modules" in gitdir.parts:
        try:
            proc = subprocess.run(
                ["git", "config", "--file", str(gitdir / "config"), "--get", "core.worktree"],
                env=base_env(None, workspace=top), capture_output=True, stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT_SECONDS,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        value = proc.stdout.decode("utf-8", "replace").strip()
        return proc.returncode == 0 and bool(value) and (gitdir / value).resolve() == top
    return False


def _read_small(path: Path, limit: int = 4096) -> str:
    with open(path, "rb") as fh:
        return fh.read(limit).decode("utf-8", "replace")


def base_env(env: Mapping[str, str] | None, *, workspace: Path | None = None) -> dict[str, str]:
    """`env` (default: this process's) for git: no redirecting `GIT_*` variables, nothing that runs a
    program, and a `PATH` on which `git` is never a file of `workspace` or any other workspace."""
    source = os.environ if env is None else env
    out = {k: v for k, v in source.items() if not _DROP_ENV.match(k)}
    out["PATH"] = host_exec_path(out.get("PATH", ""), workspace=workspace)
    out.update({
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_PROTOCOL_FROM_USER": "0",
        "LC_ALL": "C",
    })
    return out


def git_env(loc: GitLocation, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for git on `loc`: fixed repository and work tree, nothing that runs a program."""
    out = base_env(env, workspace=loc.worktree)
    out["GIT_DIR"] = str(loc.gitdir)
    out["GIT_WORK_TREE"] = str(loc.worktree)
    return out


def config_overrides(loc: GitLocation, env: Mapping[str, str] | None = None) -> list[str]:
    """`-c key=value` arguments that switch off every program the configuration names."""
    pairs = dict(STATIC_OVERRIDES)
    proc = run_git(["git", *_flatten(pairs), "config", "--list", "--name-only", "-z"], cwd=loc.worktree,
                   env=git_env(loc, env), timeout=GIT_TIMEOUT_SECONDS)
    if proc.returncode not in (0, 1):  # 1: no config at all
        raise UnsafeRepository(
            "git cannot read this repository's configuration: "
            + proc.stderr.decode("utf-8", "replace").strip()[:300]
        )
    for name in proc.stdout[:MAX_GIT_OUTPUT_BYTES].decode("utf-8", "replace").split("\0"):
        name = name.strip()
        match = _DRIVER_KEY.match(name) or _NAMED_PROGRAM_KEY.match(name)
        if not match:
            continue
        if "=" in name:
            # `-c` splits at the first '=': `-c filter.a=b.clean=` sets `filter.a`, and the driver
            # `a=b` (which `.gitattributes` can choose) would keep its program.
            raise UnsafeRepository(
                f"its configuration names {name!r}, a setting that runs a program and whose name contains '=', "
                "which git's -c cannot switch off; git is not run on it"
            )
        lowered = name.lower()
        if lowered.endswith(".required") or lowered.endswith(".cachetextconv"):
            pairs[name] = "false"
        else:
            pairs[name] = ""
    return _flatten(pairs)


def _flatten(pairs: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for key, value in pairs.items():
        out += ["-c", f"{key}={value}"]
    return out


@dataclass(frozen=True)
class SafeGit:
    """Everything needed to start git on one repository safely; build it once per operation
    (`prepare`) and use it for several git commands."""

    location: GitLocation
    env: dict[str, str]
    overrides: tuple[str, ...]
    cwd: Path  # the workspace (git's paths are relative to it)

    def argv(self, *args: str) -> list[str]:
        """`git`, the overrides, then `args` — a diff-family subcommand with `--no-ext-diff` /
        `--no-textconv` (`_no_external_programs`), so a plain `run("diff")` prints git's own diff."""
        return ["git", *self.overrides, *_no_external_programs(list(args))]

    def run(self, *args: str, check: bool = True, timeout: float = GIT_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[bytes]:
        """Run git to completion, bounded by `timeout` (raises `GitError` when it takes longer or,
        with `check`, fails)."""
        try:
            proc = run_git(self.argv(*args), cwd=self.cwd, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GitError(f"git {' '.join(args)} took more than {timeout:g} s") from None
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()[:500]}")
        return proc


class GitError(RuntimeError):
    """A git command failed or took too long."""


def run_git(argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    """`subprocess.run` of a git command line, output captured, no stdin; raises `ProgramNotRun`
    when git could not run or was killed (its status would otherwise read as an answer: exit 1 of
    `git config --list` is "no configuration")."""
    check_program(argv[0], env.get("PATH"))
    try:
        proc = subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=timeout)
    except OSError as error:
        if isinstance(error, FileNotFoundError) and not Path(cwd).is_dir():
            raise
        raise exec_error(argv[0], error) from None
    signal = killed_by(proc.returncode, sandboxed=False)
    if signal is not None:
        raise ProgramNotRun(argv[0], f"it was killed by {signal}", "try again")
    return proc


def prepare(root: Path, env: Mapping[str, str] | None = None) -> SafeGit | None:
    """`SafeGit` for the repository `root` is in; None when it is in none. Raises `UnsafeRepository`."""
    loc = locate(root)
    if loc is None:
        return None
    return SafeGit(loc, git_env(loc, env), tuple(config_overrides(loc, env)), Path(root).resolve())


# -- git as a command (`bash.run`, verification) -------------------------------------------------


def is_git_command(argv: list[str]) -> bool:
    """Whether `argv` runs git itself (`git status`, `/usr/bin/git diff`)."""
    return bool(argv) and os.path.basename(argv[0]) == "git"


def harden_command(argv: list[str], cwd: Path, env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment for a policy-checked command whose program is git (a plan's
    `git status`, an approved `git diff`): the same protection as every git we start ourselves —
    the repository `cwd` belongs to is located (refused as `UnsafeRepository` when its `.git`
    leads elsewhere), every program its configuration names is switched off with `-c` pairs
    right after `git`, and git gets a fixed `GIT_DIR` / `GIT_WORK_TREE` and none of `env`'s
    redirecting `GIT_*` variables. Outside any repository git finds none either; it still gets the
    fixed overrides. Blocking (reads the configuration with git): call it off the event loop."""
    args = _no_external_programs(argv[1:])
    loc = locate(cwd)
    if loc is None:
        return [argv[0], *_flatten(dict(STATIC_OVERRIDES)), *args], base_env(env, workspace=cwd)
    return [argv[0], *config_overrides(loc, env), *args], git_env(loc, env)


# Subcommands that run an external diff / textconv driver unless told not to, and the options that
# tell them. The `-c` overrides already empty those settings — but git then tries to run an empty
# program and stops ("cannot run"); with these options it gives its own diff, as with no driver.
# No setting does both: git runs whatever `diff.external` / `GIT_EXTERNAL_DIFF` holds, the empty
# string included, and `-c diff.external` without a value is an error. So the emptied settings stay
# (fail closed for whatever misses the options) and every git we start — `SafeGit.argv` and
# `harden_command` alike — gets the options.
# A subcommand of a subcommand (`stash show`, `stash list -p`, `reflog show -p`) gets them after
# both words. Each entry is checked against the real git (tests/unit/policy/test_git_safety_patches.py).
_BOTH = ("--no-ext-diff", "--no-textconv")
_NO_EXTERNAL_OPTIONS: dict[tuple[str, ...], tuple[str, ...]] = {
    **{(name,): _BOTH for name in (
        "diff", "log", "show", "whatchanged", "diff-files", "diff-index", "diff-tree", "format-patch",
        # range-diff takes them for its own diff; the `git log` it runs inside takes none, so with a
        # textconv driver configured it stops with "cannot run" (nothing runs).
        "range-diff")},
    ("stash", "show"): _BOTH,  # only when given options (below)
    ("stash", "list"): _BOTH,  # takes log's options: `stash list -p`
    ("reflog", "show"): _BOTH,
    ("blame",): ("--no-textconv",),
    ("annotate",): ("--no-textconv",),
}
# `git reflog -p` is `git reflog show -p`; these are reflog's other subcommands (no diff options).
_REFLOG_OTHER = {"expire", "delete", "exists", "list", "drop"}
# Git's global options that take their value as the next argument.
_GLOBAL_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--exec-path",
                      "--config-env", "--attr-source"}


def _no_external_programs(args: list[str]) -> list[str]:
    """`args` (after `git`) with `--no-ext-diff` / `--no-textconv` right after a diff-family subcommand."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _GLOBAL_WITH_VALUE else 1
    for words in ((*args[i:i + 2],), (*args[i:i + 1],)):
        options = _NO_EXTERNAL_OPTIONS.get(words)
        if options is None and words == ("reflog",) and (i + 1 >= len(args) or args[i + 1] not in _REFLOG_OTHER):
            options = _NO_EXTERNAL_OPTIONS[("reflog", "show")]
        if options is None:
            continue
        end = i + len(words)
        if words == ("stash", "show") and not any(a.startswith("-") for a in args[end:]):
            # With no option at all `stash show` prints what `stash.showStat`/`showPatch` say (a
            # diffstat by default); any option, these too, would turn that into a patch.
            return list(args)
        return [*args[:end], *options, *args[end:]]
    return list(args)

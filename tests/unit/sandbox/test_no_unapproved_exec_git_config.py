"""A hostile repository's git configuration never makes our git reads run a program.

Each case plants, in `.git/config` (or a file it includes, or `.gitattributes`), a setting that
names a canary script — fsmonitor, clean/smudge/process filters, textconv, external diff, pagers,
hooks, transport helpers, `include.path`, worktree config. Then every git process we start runs on
it: the `git.*` tools and `repo.info` (with the OS sandbox off, so only the hardening stands, and
on), `fs.list`, and the index (snapshot, `git cat-file --batch` over every blob, update on save).
The canary script never runs. Where plain `git` would have run it, a control run proves the case
is live.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, committed_repo, git

from deepseek_ls.config_models import Config, PolicyConfig, SandboxConfig
from deepseek_ls.index.reader import ContentReader
from deepseek_ls.index.sources import resolve_paths, take_snapshot
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.git_safety import UnsafeRepository, locate
from deepseek_ls.sink import ListSink
from deepseek_ls.testkit import canary
from deepseek_ls.tools.host import ToolHost

EVIL = "@EVIL@"  # replaced by the canary script's path


@dataclass(frozen=True)
class Case:
    config: str  # appended to .git/config
    attributes: str = ""  # .gitattributes (committed)
    extra: tuple[tuple[str, str], ...] = ()  # (path relative to the workspace, content) written before
    control: tuple[str, ...] | None = None  # a plain git command that runs the canary (None: needs a transport/tty)


CASES = [
    pytest.param(Case("[core]\n\tfsmonitor = @EVIL@\n", control=("status",)), id="core-fsmonitor"),
    pytest.param(Case('[filter "evil"]\n\tclean = @EVIL@\n', "*.txt filter=evil\n", control=("diff",)), id="filter-clean"),
    pytest.param(Case('[filter "evil"]\n\tprocess = @EVIL@\n', "*.txt filter=evil\n", control=("diff",)), id="filter-process"),
    pytest.param(Case('[filter "evil"]\n\tclean = @EVIL@\n\trequired = true\n', "*.txt filter=evil\n", control=("diff",)),
                 id="filter-required"),
    pytest.param(Case('[filter "evil"]\n\tsmudge = @EVIL@\n', "*.txt filter=evil\n"), id="filter-smudge"),
    pytest.param(Case('[diff "evil"]\n\ttextconv = @EVIL@\n', "*.txt diff=evil\n", control=("diff",)), id="diff-textconv"),
    pytest.param(Case('[diff "evil"]\n\tcommand = @EVIL@\n', "*.txt diff=evil\n", control=("diff",)), id="diff-driver-command"),
    pytest.param(Case("[diff]\n\texternal = @EVIL@\n", control=("diff",)), id="diff-external"),
    pytest.param(Case('[merge "evil"]\n\tdriver = @EVIL@\n', "*.txt merge=evil\n"), id="merge-driver"),
    pytest.param(Case("[core]\n\tpager = @EVIL@\n"), id="core-pager"),
    pytest.param(Case("[pager]\n\tdiff = @EVIL@\n\tstatus = @EVIL@\n"), id="pager-per-command"),
    pytest.param(Case("[core]\n\thooksPath = hooks-evil\n"), id="core-hookspath"),
    pytest.param(Case("[core]\n\tsshCommand = @EVIL@\n"), id="core-sshcommand"),
    pytest.param(Case("[core]\n\tgitProxy = @EVIL@\n\taskPass = @EVIL@\n"), id="core-gitproxy-askpass"),
    pytest.param(Case("[credential]\n\thelper = !@EVIL@\n"), id="credential-helper"),
    pytest.param(Case('[remote "origin"]\n\turl = ../x\n\tuploadpack = @EVIL@\n\treceivepack = @EVIL@\n'), id="remote-uploadpack"),
    pytest.param(Case("[uploadpack]\n\tpackObjectsHook = @EVIL@\n"), id="uploadpack-hook"),
    pytest.param(Case("[alias]\n\tstatus = !@EVIL@\n\tdiff = !@EVIL@\n"), id="alias-shadowing-builtins"),
    pytest.param(Case("[log]\n\tshowSignature = true\n[gpg]\n\tprogram = @EVIL@\n"), id="gpg-program"),
    pytest.param(Case("[include]\n\tpath = ../evil.inc\n", extra=(("evil.inc", "[core]\n\tfsmonitor = @EVIL@\n"),),
                      control=("status",)), id="include-path-fsmonitor"),
    pytest.param(Case("[include]\n\tpath = ../evil.inc\n", "*.txt filter=evil\n",
                      extra=(("evil.inc", '[filter "evil"]\n\tclean = @EVIL@\n'),), control=("diff",)),
                 id="include-path-filter"),
    pytest.param(Case('[includeIf "gitdir:/"]\n\tpath = ../evil.inc\n',
                      extra=(("evil.inc", "[core]\n\tfsmonitor = @EVIL@\n"),), control=("status",)), id="includeif-gitdir"),
    pytest.param(Case("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
                      extra=((".git/config.worktree", "[core]\n\tfsmonitor = @EVIL@\n"),), control=("status",)),
                 id="worktree-config-fsmonitor"),
    pytest.param(Case('[filter "evil"]\n\tclean = @EVIL@\n', extra=((".git/info/attributes", "*.txt filter=evil\n"),),
                      control=("diff",)), id="info-attributes-filter"),
    pytest.param(Case("[core]\n\tfsmonitor = @EVIL@\n\tuntrackedCache = true\n[status]\n\tshowUntrackedFiles = all\n",
                      control=("status",)), id="fsmonitor-untracked-cache"),
]


def _hostile_repo(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    files = {"src/notes.txt": "first\n", "src/app.py": "def add(a, b):\n    return a + b\n"}
    if case.attributes:
        files[".gitattributes"] = case.attributes
    root = committed_repo(tmp_path / "ws", files)
    marker = tmp_path / "outside" / "ran"
    evil = canary.plant(tmp_path / "evil.sh", marker)
    canary.plant_hooks(root / "hooks-evil", ("post-index-change", "pre-auto-gc", "post-checkout",
                                              "reference-transaction", "fsmonitor-watchman"), marker)
    for rel, content in case.extra:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content.replace(EVIL, str(evil)))
    with open(root / ".git" / "config", "a") as fh:
        fh.write(case.config.replace(EVIL, str(evil)))
    # A work-tree change, staged and not, with an old mtime: git must hash the file (runs a clean filter).
    (root / "src" / "notes.txt").write_text("second\n")
    os.utime(root / "src" / "notes.txt", (946684800, 946684800))
    (root / "src" / "new.txt").write_text("untracked\n")
    return root, marker


def _host(root: Path, *, sandbox: bool) -> ToolHost:
    policy = PolicyConfig(sandbox=SandboxConfig(mode="auto" if sandbox else "off"))
    return ToolHost(root, Config(policy=policy), sink=ListSink(), ui=RecordingUI(), overlay=DocumentOverlay(root))


async def _every_git_read(root: Path, host: ToolHost) -> None:
    for name, args in (
        ("git.status", {}), ("git.diff", {}), ("git.diff", {"staged": True}), ("git.diff", {"rev": "HEAD"}),
        ("git.diff", {"paths": ["src/notes.txt"]}), ("git.show", {"rev": "HEAD", "path": "src/notes.txt"}),
        ("repo.info", {}), ("fs.list", {"glob": "**"}),
    ):
        result = await host.call(name, args)
        assert result.ok, f"{name} {args}: {result.error}"
    snapshot = take_snapshot(root)
    assert snapshot.git and "src/notes.txt" in snapshot.files
    with ContentReader(root) as reader:
        for src in snapshot.files.values():
            reader.read(src)
    resolve_paths(root, ["src/notes.txt", "src/new.txt"])


@pytest.mark.parametrize("sandboxed", [pytest.param(False, id="hardening-only"), pytest.param(True, id="sandboxed")])
@pytest.mark.parametrize("case", CASES)
async def test_no_unapproved_exec_git_config(tmp_path: Path, case: Case, sandboxed: bool) -> None:
    root, marker = _hostile_repo(tmp_path, case)
    host = _host(root, sandbox=sandboxed)
    if sandboxed and not (await host.sandbox.astatus()).available:
        pytest.skip("no OS sandbox here")
    await _every_git_read(root, host)
    assert not marker.exists(), f"the repository's config ran a program: {marker.read_text()}"
    if case.control is not None and not sandboxed:
        # Control: plain git on the same repository does run it (the case is live).
        subprocess.run(["git", *case.control], cwd=root, capture_output=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
        assert marker.exists(), f"control: plain git {case.control} did not run the canary; the case tests nothing"


# -- a `.git` that leads elsewhere ------------------------------------------------------------


def _other_repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "private", {"secret.txt": "canary-private-repo-content\n"})


def _gitfile_elsewhere(tmp_path: Path, root: Path, other: Path) -> None:
    (root / ".git").write_text(f"gitdir: {other / '.git'}\n")


def _symlink_elsewhere(tmp_path: Path, root: Path, other: Path) -> None:
    (root / ".git").symlink_to(other / ".git")


def _commondir_elsewhere(tmp_path: Path, root: Path, other: Path) -> None:
    git(root, "init", "-q")
    (root / ".git" / "commondir").write_text(str(other / ".git") + "\n")


def _worktree_of_another(tmp_path: Path, root: Path, other: Path) -> None:
    git(other, "worktree", "add", "-q", str(tmp_path / "other-wt"))
    (root / ".git").write_text(f"gitdir: {other / '.git' / 'worktrees' / 'other-wt'}\n")


def _core_worktree_elsewhere(tmp_path: Path, root: Path, other: Path) -> None:
    git(root, "init", "-q")
    with open(root / ".git" / "config", "a") as fh:
        fh.write(f"[core]\n\tworktree = {other}\n")


REDIRECTS = [
    pytest.param(_gitfile_elsewhere, True, id="gitfile-to-another-repo"),
    pytest.param(_symlink_elsewhere, True, id="git-symlink-to-another-repo"),
    pytest.param(_commondir_elsewhere, True, id="commondir-to-another-repo"),
    pytest.param(_worktree_of_another, True, id="gitfile-to-another-repos-worktree"),
    pytest.param(_core_worktree_elsewhere, False, id="core-worktree-elsewhere"),
]


@pytest.mark.parametrize(("plant", "refused"), REDIRECTS)
async def test_no_leak_git_dir_redirected_to_another_repository(tmp_path: Path, plant, refused: bool) -> None:
    other = _other_repo(tmp_path)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    plant(tmp_path, root, other)
    host = _host(root, sandbox=False)
    seen = []
    for name, args in (("git.status", {}), ("git.diff", {}), ("git.show", {"rev": "HEAD", "path": "secret.txt"}),
                       ("repo.info", {}), ("fs.list", {"glob": "**"})):
        result = await host.call(name, args)
        seen.append(repr(result.value) + repr(result.error))
    snapshot = take_snapshot(root)
    assert "secret.txt" not in snapshot.files
    assert "canary-private-repo-content" not in "\n".join(seen)
    assert not any("secret.txt" in listing for listing in (seen[0], seen[1], seen[4]))  # status, diff, fs.list
    if refused:
        with pytest.raises(UnsafeRepository):
            locate(root)
        assert not snapshot.git


def test_linked_worktrees_and_submodules_still_work(tmp_path: Path) -> None:
    """The redirect checks accept git's own layouts: a linked worktree and a submodule."""
    main = tmp_path / "main"
    main.mkdir()
    (main / "a.txt").write_text("a\n")
    git(main, "init", "-q")
    git(main, "add", ".")
    git(main, "commit", "-q", "-m", "a")
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    loc = locate(tmp_path / "wt")
    assert loc is not None and loc.worktree == (tmp_path / "wt").resolve()
    assert take_snapshot(tmp_path / "wt").git
    git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(main), "sub")
    loc = locate(main / "sub")
    assert loc is not None and loc.gitdir == (main / ".git" / "modules" / "sub").resolve()


# -- git as a *command*: a plan's verification `git status`, an approved `bash.run git diff` ------
#
# These commands run the real git binary (not our tools); the policy lets `git status --short` /
# `git diff` run unprompted in a safe shape. The canary script and its marker live in the workspace
# (excluded from git's listings): the one place a sandboxed command can still write, and visible
# inside the sandbox (which hides the host's /tmp).

_COMMAND_FOR = {"status": "git status --short", "diff": "git diff"}
RUNNERS = [
    pytest.param("verify-sandboxed", id="verification-unprompted-sandboxed"),
    pytest.param("bash-auto-sandboxed", id="bash-run-auto-sandboxed"),
    pytest.param("bash-approved-unsandboxed", id="bash-run-approved-no-sandbox"),
]


def _hostile_repo_in_workspace(tmp_path: Path, case: Case) -> tuple[Path, Path]:
    root, _ = _hostile_repo(tmp_path, case)
    marker = root / ".canary" / "ran"
    evil = canary.plant(root / ".canary" / "evil.sh", marker)
    (root / ".git" / "info").mkdir(exist_ok=True)
    with open(root / ".git" / "info" / "exclude", "a") as fh:
        fh.write(".canary/\n")
    for path in (root / ".git" / "config", *(root / rel for rel, _ in case.extra)):
        path.write_text(path.read_text().replace(str(tmp_path / "evil.sh"), str(evil)))
    return root, marker


async def _run_as_command(root: Path, runner: str, command: str, ui: RecordingUI) -> tuple[int | None, str]:
    from deepseek_ls.agent.world import World

    sandboxed = runner != "bash-approved-unsandboxed"
    mode = {"verify-sandboxed": "suggest", "bash-auto-sandboxed": "auto", "bash-approved-unsandboxed": "suggest"}[runner]
    policy = PolicyConfig(approval_mode=mode, sandbox=SandboxConfig(mode="auto" if sandboxed else "off"))
    config = Config(policy=policy)
    sink = ListSink()
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    if sandboxed and not (await host.sandbox.astatus()).available:
        pytest.skip("no OS sandbox here")
    if runner == "verify-sandboxed":
        world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
        result = await world.run_command(command, 60)
        return result.exit_code, result.output
    out = await host.call("bash.run", {"cmd": command})
    assert out.ok, out.error
    return out.value["exit_code"], out.value["stdout"] + out.value["stderr"]


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("case", [c for c in CASES if c.values[0].control is not None])
async def test_no_unapproved_exec_git_config_via_git_command(tmp_path: Path, case: Case, runner: str) -> None:
    """An allowlisted (or approved) `git status` / `git diff` runs git's read, not the repository's
    fsmonitor / filter / textconv program; its output is still git's own."""
    root, marker = _hostile_repo_in_workspace(tmp_path, case)
    command = _COMMAND_FOR[case.control[0]]
    ui = RecordingUI("allow_once")
    code, output = await _run_as_command(root, runner, command, ui)
    assert not marker.exists(), f"{command} ran the repository's program: {marker.read_text()}"
    assert code == 0, output
    assert "src/notes.txt" in output, output  # git's normal answer: the modified file
    if command == "git diff":
        assert "-first" in output and "+second" in output, output
    else:
        assert "?? src/new.txt" in output, output
    if runner != "bash-approved-unsandboxed":
        assert ui.approvals == []  # it ran unprompted: the case where nobody could have said no
    # Control: plain git on the same repository does run it (the case is live).
    subprocess.run(command.split(), cwd=root, capture_output=True, timeout=60,
                   env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
    assert marker.exists(), f"control: plain {command} did not run the canary; the case tests nothing"


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("command", ["git status --short", "git diff --stat"])
async def test_no_leak_git_command_on_redirected_repository_is_refused(tmp_path: Path, runner: str, command: str) -> None:
    """A `.git` leading to another repository: the git command is refused with a clear message,
    not run (it would read, and print, the other repository)."""
    other = _other_repo(tmp_path)
    (other / "secret.txt").write_text("changed\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    _gitfile_elsewhere(tmp_path, root, other)
    ui = RecordingUI("allow_once")
    if runner == "verify-sandboxed":
        from deepseek_ls.policy.errors import PolicyViolation

        with pytest.raises(PolicyViolation, match="git is not run on this repository") as refused:
            await _run_as_command(root, runner, command, ui)
        assert refused.value.rule == "unsafe_repository"
    else:
        with pytest.raises(AssertionError, match="policy refused: .*git is not run on this repository.*outside the workspace"):
            await _run_as_command(root, runner, command, ui)


async def test_git_command_outside_any_repository_still_answers(tmp_path: Path) -> None:
    """No repository at all: git runs (hardened) and says so itself, like plain git."""
    root = tmp_path / "ws"
    root.mkdir()
    ui = RecordingUI("allow_once")
    code, output = await _run_as_command(root, "bash-approved-unsandboxed", "git status --short", ui)
    assert code != 0 and "not a git repository" in output, output


@pytest.mark.parametrize("line", [
    pytest.param("git status --short && git diff", id="chain"),
    pytest.param("git diff | rg second", id="pipe"),
    pytest.param("pytest -q ; git status", id="git-after-another"),
])
async def test_no_unapproved_exec_git_in_shell_line_asks(tmp_path: Path, line: str) -> None:
    """A shell line (`policy.allow_shell_metacharacters`) is /bin/sh's: git in it cannot be given the
    hardening, so the line never runs unprompted — even in auto mode with the sandbox — and the
    approval says why. Denied, the repository's fsmonitor does not run."""
    case = next(c.values[0] for c in CASES if c.id == "core-fsmonitor")
    root, marker = _hostile_repo_in_workspace(tmp_path, case)
    ui = RecordingUI("deny")
    policy = PolicyConfig(approval_mode="auto", allow_shell_metacharacters=True, allowlist=["git status", "git diff", "rg", "pytest"])
    host = ToolHost(root, Config(policy=policy), sink=ListSink(), ui=ui, overlay=DocumentOverlay(root))
    out = await host.call("bash.run", {"cmd": line})
    assert not out.ok and "denied" in out.error
    assert len(ui.approvals) == 1 and "without the hardening a plain git command gets" in ui.approvals[0].detail
    assert not marker.exists()


@pytest.mark.parametrize(("argv", "expected"), [
    pytest.param(["git", "diff", "--stat"], ["git", "diff", "--no-ext-diff", "--no-textconv", "--stat"], id="diff"),
    pytest.param(["git", "--no-pager", "log", "-p"], ["git", "--no-pager", "log", "--no-ext-diff", "--no-textconv", "-p"],
                 id="global-option-before"),
    pytest.param(["git", "--namespace", "diff", "show"], ["git", "--namespace", "diff", "show", "--no-ext-diff", "--no-textconv"],
                 id="global-option-value-looks-like-a-subcommand"),
    pytest.param(["git", "blame", "a.txt"], ["git", "blame", "--no-textconv", "a.txt"], id="blame"),
    pytest.param(["git", "status", "--short"], ["git", "status", "--short"], id="status-unchanged"),
    pytest.param(["git", "stash", "show", "-p"], ["git", "stash", "show", "--no-ext-diff", "--no-textconv", "-p"],
                 id="stash-show-patch"),  # more: tests/unit/policy/test_git_safety_patches.py
    pytest.param(["git", "stash", "pop"], ["git", "stash", "pop"], id="other-subcommand-unchanged"),
])
def test_git_command_diff_family_gets_no_external_driver_options(tmp_path: Path, argv: list[str], expected: list[str]) -> None:
    from deepseek_ls.policy.git_safety import harden_command

    hardened, env = harden_command(argv, tmp_path, {"GIT_DIR": "/elsewhere", "PATH": os.environ["PATH"]})
    assert [a for a in hardened if a != "-c" and "=" not in a] == expected
    assert hardened[1] == "-c" and "core.fsmonitor=false" in hardened  # the overrides come right after `git`
    assert "GIT_DIR" not in env  # no repository here: the caller's redirect is dropped too


async def test_no_unapproved_exec_driver_name_with_equals_is_refused(tmp_path: Path) -> None:
    """`[filter "a=b"]` chosen by `*.txt filter=a=b`: `-c filter.a=b.clean=` would set `filter.a`
    (git splits at the first '='), leaving the driver's program on. Such a repository is refused:
    the git tools say so, the index walks the files, a git command is not run — and nothing runs."""
    case = Case('[filter "a=b"]\n\tclean = @EVIL@\n\tprocess = @EVIL@\n', "*.txt filter=a=b\n", control=("diff",))
    root, marker = _hostile_repo_in_workspace(tmp_path, case)
    host = _host(root, sandbox=False)
    for name, args in (("git.status", {}), ("git.diff", {}), ("repo.info", {}), ("fs.list", {"glob": "**"})):
        result = await host.call(name, args)
        if name in ("git.status", "git.diff"):
            assert not result.ok and "contains '='" in result.error, result
    snapshot = take_snapshot(root)
    assert not snapshot.git and "src/notes.txt" in snapshot.files
    with pytest.raises(AssertionError, match=r"policy refused: refused 'git diff': .*contains '='"):
        await _run_as_command(root, "bash-approved-unsandboxed", "git diff", RecordingUI("allow_once"))
    assert not marker.exists(), f"the repository's config ran a program: {marker.read_text()}"
    subprocess.run(["git", "diff"], cwd=root, capture_output=True, timeout=60,
                   env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
    assert marker.exists(), "control: plain git diff did not run the canary; the case tests nothing"

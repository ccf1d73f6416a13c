"""The OS sandbox every command the agent starts runs in (bubblewrap).

`Sandbox.wrap(argv)` turns a policy-checked argv into a `bwrap` command line
that gives the program:

- a read-only view of the whole system (`--ro-bind / /`), its own `/dev`,
  `/proc`, `/tmp` and an empty `/run` (no docker, dbus or agent sockets);
- an empty home directory (a tmpfs) with only the toolchains the command runs
  with and the build tools' download caches bound back read-only
  (`policy/sandbox_home.py`): another project's `.env`, `~/.m2/settings.xml` or a
  token under the home is not there to read;
- deepseek-ls's own programs (our interpreter, the bundled `rg`, `git`) shown read-only wherever
  it is installed, in the hidden home or under `/tmp`, and nothing beside them
  (`policy/sandbox_install.py`);
- the workspace writable, except `.git/` and `.deepseek/` (read-only binds over
  them, so no hook, config or approval setting can be planted); when the workspace
  is a linked worktree (`git worktree`, a teammate lane), its git directory and the
  repository's common one are bound read-only too, wherever they are (under `/tmp`
  they would otherwise be hidden by the sandbox's own `/tmp`), and so is the top level's
  `.git` when the workspace is a subdirectory of its repository;
- a virtualenv bin inside the workspace on the command's PATH shows only the venv's own
  programs, and the venv is read-only (`policy/sandbox_venv.py`): what the command starts
  never runs a program planted there by name;
- secret locations masked: every file or directory in the workspace and at the
  top of the home directory that matches `policy.deny_paths` is covered by an
  empty file or an empty read-only tmpfs, as is the user's deepseek-ls config;
- no Unix socket of the machine: abstract ones belong to the network namespace; the
  directories of path-bound ones, `/var/tmp` and `$XDG_RUNTIME_DIR` are hidden whole (a socket
  bound there later is gone too), one in the workspace is covered (`policy/sandbox_sockets.py`);
- no network (`--unshare-net`: only a loopback nobody listens on), its own PID
  namespace that dies with us (`--unshare-pid --die-with-parent`: when the
  command ends or is killed, everything it started — a `setsid` or double-fork
  child included — is killed by the kernel), no capabilities, a new session
  (no terminal injection), and the environment the caller scrubbed.

Whether bubblewrap works here (installed, user namespaces allowed) is probed
once per binary. When it does not, `status()` says why; callers then ask for
an explicit approval before every command (docs/tools.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import platformdirs

from deepseek_ls.globs import fast_matcher, unanchored
from deepseek_ls.config_models import SandboxConfig
from deepseek_ls.policy import git_safety, sandbox_home, sandbox_install, sandbox_sockets, sandbox_venv
from deepseek_ls.policy.env import host_exec_path, note_workspace

log = logging.getLogger(__name__)

# Directories too large to walk on every command and with no secrets of the
# user in them (their own deny-list matches are still masked when seen).
_PRUNE = {".git", ".deepseek", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
          ".pytest_cache", ".ruff_cache", "target"}
# A workspace walk stops here; what was found so far is still masked.
MAX_WALK_ENTRIES = 200_000
_PROBE_TIMEOUT = 10.0
# Where container and VM daemons keep their Unix sockets. A read-only bind does not stop a
# connect() to a socket, nor does --unshare-net (it is a path, not a network address), and a
# docker socket is root on the machine: these directories are hidden inside the sandbox.
DAEMON_SOCKET_DIRS_IN_HOME = (
    ".docker/run", ".docker/desktop", ".colima", ".lima", ".rd", ".orbstack", ".local/share/containers",
    ".local/share/docker", ".config/colima",
)
DAEMON_SOCKET_DIRS = ("/var/snap/lxd/common/lxd", "/var/lib/lxd", "/var/run/docker", "/var/lib/docker")
_WARNED: set[str] = set()


@dataclass(frozen=True)
class SandboxStatus:
    available: bool
    backend: str  # "bubblewrap" or "none"
    reason: str = ""

    def describe(self) -> str:
        if self.available:
            return f"commands run in an OS sandbox ({self.backend})"
        return f"no OS sandbox: {self.reason}; every command needs an explicit approval"


NO_SANDBOX = SandboxStatus(False, "none", "this caller has no sandbox configured")


@lru_cache(maxsize=8)
def probe(bwrap: str | None) -> SandboxStatus:
    """Whether `bwrap` can start a confined process here (cached per binary path)."""
    if bwrap is None:
        return SandboxStatus(False, "none", "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)")
    argv = [bwrap, *_BASE, "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, "none", f"bubblewrap could not be started ({exc})")
    if proc.returncode != 0:
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxStatus(
            False, "none", "bubblewrap does not work here (" + (why[-1] if why else f"exit {proc.returncode}")
            + "; user namespaces may be disabled)"
        )
    return SandboxStatus(True, "bubblewrap")


# The confinement that does not depend on the workspace.
_BASE = [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    "--tmpfs", "/run",
    "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--cap-drop", "ALL",
]


class Sandbox:
    """Builds confined command lines for one workspace."""

    def __init__(
        self,
        root: Path,
        *,
        deny_paths: list[str] | tuple[str, ...] = (),
        config: SandboxConfig | None = None,
        home: Path | None = None,
        install: sandbox_install.OwnInstall | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        note_workspace(self.root)  # none of our own programs is ever looked up in it
        self.config = config or SandboxConfig()
        self.deny_paths = list(deny_paths)
        self._deny = fast_matcher([unanchored(p.lower()) for p in deny_paths])
        self.home = Path(home) if home is not None else Path(os.path.expanduser("~"))
        # Where deepseek-ls itself lives: what of it the commands we start need is shown (read-only).
        self.install = install or sandbox_install.OwnInstall.running()
        self._walk_cache: dict[str, tuple[int, list[Path], list[tuple[str, str]], int, list[Path]]] = {}
        self._children_cache: dict[tuple[str, tuple[str, ...]], tuple[int, list[Path]]] = {}
        # `.git` directories and files of repositories nested in the workspace (found by the walk):
        # read-only like the workspace's own, so no hook or config is planted for the person's git.
        self._nested_git: list[Path] = []

    def bwrap(self) -> str | None:
        return self.config.bwrap_path or shutil.which("bwrap", path=host_exec_path(workspace=self.root))

    def status(self) -> SandboxStatus:
        """Probe (once per process and binary) whether commands can be confined."""
        if self.config.mode == "off":
            return SandboxStatus(False, "none", "the sandbox is turned off (policy.sandbox.mode = \"off\")")
        status = probe(self.bwrap())
        if not status.available and status.reason not in _WARNED:
            _WARNED.add(status.reason)  # said once per process, then shown on every approval request
            log.warning("%s", status.describe())
        return status

    async def astatus(self) -> SandboxStatus:
        """`status()` without blocking the event loop on the first probe (later: no thread hop)."""
        if self.config.mode != "off" and probe.cache_info().currsize:
            return self.status()  # lru_cache: answered from memory when this binary was probed
        return await asyncio.to_thread(self.status)

    def wrap(self, argv: list[str], *, cwd: Path | None = None, read_only: bool = False,
             exec_path: str | None = None) -> list[str]:
        """The bwrap command line that runs `argv` confined, in `cwd` (default: the workspace root).
        `read_only`: the workspace is bound read-only too (the Hetun helper block writes nothing).
        `exec_path`: the PATH the command runs with (default: ours); a virtualenv bin inside the
        workspace on it shows only its vetted programs (`policy/sandbox_venv.py`)."""
        bwrap = self.bwrap()
        if bwrap is None:
            raise RuntimeError("bubblewrap is not installed")
        args = [bwrap, *_BASE]
        # The home directories become empty; a home inside the workspace is hidden after the workspace
        # is bound (else that bind would uncover it), a workspace that is the home stays whole.
        hidden = [h for h in sandbox_home.homes(self.home) if h != self.root]
        caches, gradle_cache = sandbox_home.build_caches(self.config.build_caches, env=os.environ)
        # The sandbox's own /tmp hides the host's like the home's tmpfs hides the home: the toolchains
        # there (a venv activated under /tmp, VIRTUAL_ENV) are shown the same way.
        replaced = [*hidden, sandbox_home.TMP]
        shown = sandbox_home.exposed(replaced, root=self.root, env=os.environ,
                                     extra=[*caches, *self.config.readable_paths])
        extras = [] if read_only else self.config.writable_paths
        writable = [p for p in (Path(os.path.expanduser(extra)) for extra in extras) if p.is_absolute() and p.exists()]
        linked = _linked_git_dirs(self.root)
        exec_path = os.environ.get("PATH", "") if exec_path is None else exec_path
        visible = [*shown, self.root, *writable, *linked]
        # Our own programs (interpreter, rg, git) wherever they are installed, bound after everything above.
        install = self.install.with_programs(sandbox_install.host_programs(host_exec_path(workspace=self.root)))
        homes = sandbox_home.home_dirs(self.home)
        own = sandbox_install.view(install, hidden=hidden, homes=homes, visible=visible, root=self.root)
        # Unix sockets (an ssh-agent, a daemon, a session bus): their directories are hidden first, so
        # one bound there later is gone too, and everything the command needs is bound back after.
        needed = [Path(p) for p in [*exec_path.split(os.pathsep), *argv[:1]] if os.path.isabs(p)]
        sockets = sandbox_sockets.cover(hidden, [*visible, *own.paths], keep=needed)
        # What of our install lies in a directory hidden for its sockets (/var/tmp): bound back too, the
        # directory staying hidden around it; a socket inside it is covered.
        more = sandbox_install.view(install, hidden=[*hidden, *sockets.directories], homes=homes,
                                    visible=[*visible, *own.paths], root=self.root)
        own_args = own.args + more.args
        socket_files = sockets.sockets + sandbox_sockets.inside(more.paths)
        for directory in sockets.directories:
            args += ["--tmpfs", str(directory)]
        before = [h for h in hidden if not h.is_relative_to(self.root)]
        args += self._home_view(before, shown)
        for path in shown:
            if path.is_relative_to(sandbox_home.TMP):  # /tmp is already the sandbox's own tmpfs
                args += ["--ro-bind", str(path), str(path)]
        args += gradle_cache
        for p in writable:
            args += ["--bind", str(p), str(p)]
        root = str(self.root)
        args += ["--ro-bind" if read_only else "--bind", root, root]
        args += self._home_view([h for h in hidden if h not in before], shown)
        args += own_args
        state = self.root / ".deepseek"
        if not read_only and not state.exists():
            # A writable workspace needs a mount point to keep `.deepseek/` read-only (else the command
            # could plant a config there); it is our own state directory anyway. A read-only wrap binds
            # the whole directory read-only, so it needs none and leaves the directory as it found it.
            # (A workspace we cannot write to cannot be written from inside either.)
            with contextlib.suppress(OSError):
                state.mkdir(exist_ok=True)
        workspace_masks = self._workspace_masks()  # the walk also finds nested repositories
        for reserved in (self.root / ".git", state, *self._nested_git):
            if reserved.exists() or reserved.is_symlink():
                args += ["--ro-bind", str(reserved), str(reserved)]
        # A `.git` file's git directory, when it lies in the workspace (`gitdir: .hidden-git`).
        for target in self._gitfile_targets([self.root / ".git", *self._nested_git]):
            args += ["--ro-bind", str(target), str(target)]
        # A linked worktree's git directory outside the workspace (`git worktree add`, a teammate
        # lane), and the top level's `.git` when the workspace is a subdirectory of its repository:
        # read-only, and bound by name because they may lie under /tmp, which the sandbox
        # replaces — git in the workspace would then find no repository at all.
        for target in linked:
            args += ["--ro-bind", str(target), str(target)]
        args += sandbox_venv.venv_views(exec_path, root=self.root, keep=install.program_files())
        # Masks come last: a later bind (the workspace, when it is or contains $HOME) would uncover them.
        # What the home's tmpfs hid needs none (an empty placeholder would only be created for it).
        home_masks = [m for m in [*self._home_masks(), *self._denied_children(shown, replaced)]
                      if not any(m.is_relative_to(h) for h in hidden) or any(m.is_relative_to(v) for v in visible)]
        # Unix sockets bound to a path where a directory could not be hidden (the workspace, what is bound
        # back): connect() is refused. Before the masks: one inside a masked directory is gone with it.
        for sock in socket_files:
            args += ["--ro-bind", "/dev/null", str(sock)]
        for path in [*home_masks, *workspace_masks]:
            args += _mask(path)
        for extra in self.config.masked_paths:
            p = Path(os.path.expanduser(extra))
            if p.is_absolute() and (p.exists() or p.is_symlink()):
                args += _mask(p)
        args += ["--chdir", str(cwd or self.root), "--", *argv]
        return args

    # -- what to hide ------------------------------------------------------------

    @staticmethod
    def _home_view(hidden: list[Path], shown: list[Path]) -> list[str]:
        """An empty tmpfs over each of `hidden`, then the `shown` directories inside it, read-only."""
        args: list[str] = []
        for home in hidden:
            args += ["--tmpfs", str(home)]
            for path in shown:
                if path.is_relative_to(home):
                    args += ["--ro-bind", str(path), str(path)]
        return args

    def _denied_children(self, shown: list[Path], hidden: list[Path]) -> list[Path]:
        """Deny-listed entries directly inside a toolchain directory bound back from the home
        (`~/.cargo/credentials.toml`), matched by their home-relative path. Cached per directory
        mtime (an entry added, removed or renamed changes it): a build cache has many entries."""
        out: list[Path] = []
        for directory in shown:
            try:
                mtime = os.stat(directory).st_mtime_ns
            except OSError:
                continue
            key = (str(directory), tuple(map(str, hidden)))
            hit = self._children_cache.get(key)
            if hit is None or hit[0] != mtime:
                hit = (mtime, self._scan_children(directory, hidden))
                self._children_cache[key] = hit
            out += hit[1]
        return out

    def _scan_children(self, directory: Path, hidden: list[Path]) -> list[Path]:
        out: list[Path] = []
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return out
        home = next((h for h in hidden if directory.is_relative_to(h)), None)
        prefix = directory.relative_to(home).as_posix() + "/" if home is not None else ""
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if self._denied(prefix + entry.name, is_dir) or self._denied(entry.name, is_dir):
                out.append(Path(entry.path))
        return out

    def _denied(self, rel: str, is_dir: bool) -> bool:
        lowered = rel.lower()
        return self._deny(lowered) or (is_dir and self._deny(lowered + "/"))

    def _home_masks(self) -> list[Path]:
        masks: list[Path] = []
        config_dir = Path(platformdirs.user_config_dir("deepseek-ls"))
        if config_dir.exists():
            masks.append(config_dir)
        home = self.home
        if home == Path("/") or not home.is_dir():
            return masks
        try:
            entries = list(os.scandir(home))
        except OSError:
            return masks
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if self._denied(entry.name, is_dir):
                masks.append(Path(entry.path))
        # Nested literal locations (".aws/credentials", ".docker/config.json").
        for pattern in self.deny_paths:
            body = pattern.strip("/")
            if "/" in body and not any(c in body for c in "*?[!"):
                candidate = home / body
                if candidate.exists() and candidate not in masks:
                    masks.append(candidate)
        for rel in DAEMON_SOCKET_DIRS_IN_HOME:
            candidate = home / rel
            if candidate.is_dir() and candidate not in masks:
                masks.append(candidate)
        # /var/run is usually /run (a fresh tmpfs here); where it is a directory of its own it holds
        # docker.sock and friends.
        var_run = Path("/var/run")
        for candidate in (*(Path(p) for p in DAEMON_SOCKET_DIRS),
                          *([var_run] if var_run.is_dir() and not var_run.is_symlink() else [])):
            if candidate.is_dir():
                masks.append(candidate)
        # The workspace itself stays visible even when it lives under a masked directory.
        return [m for m in masks if not _contains(m, self.root)]

    def _workspace_masks(self) -> list[Path]:
        """Deny-listed files and directories in the workspace. Each directory's findings are cached
        under its mtime: creating, deleting or renaming an entry changes it, so a later command
        re-lists only the directories that changed (one stat per directory otherwise)."""
        masks: list[Path] = []
        nested: list[Path] = []
        seen = 0
        stack = [(str(self.root), "")]
        cache: dict[str, tuple[int, list[Path], list[tuple[str, str]], int, list[Path]]] = {}
        while stack:
            directory, prefix = stack.pop()
            try:
                mtime = os.stat(directory).st_mtime_ns
            except OSError:
                continue
            hit = self._walk_cache.get(directory)
            if hit is None or hit[0] != mtime:
                hit = (mtime, *self._scan(directory, prefix))
            cache[directory] = hit
            masks += hit[1]
            stack += hit[2]
            seen += hit[3]
            nested += hit[4]
            if seen > MAX_WALK_ENTRIES:
                log.warning("sandbox: the workspace has more than %d entries; stopped looking for secret files",
                            MAX_WALK_ENTRIES)
                break
        self._walk_cache = cache
        self._nested_git = nested
        return masks

    def _gitfile_targets(self, dots: list[Path]) -> list[Path]:
        out = []
        for dot in dots:
            if not dot.is_file() or dot.is_symlink():
                continue
            try:
                with open(dot, "rb") as fh:
                    text = fh.read(4096).decode("utf-8", "replace")
            except OSError:
                continue
            if text.startswith("gitdir:"):
                target = (dot.parent / text[len("gitdir:"):].strip()).resolve()
                if target.is_dir() and target.is_relative_to(self.root) and target != self.root:
                    out.append(target)
        return out

    def _scan(self, directory: str, prefix: str) -> tuple[list[Path], list[tuple[str, str]], int, list[Path]]:
        masks: list[Path] = []
        subdirs: list[tuple[str, str]] = []
        nested: list[Path] = []
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return masks, subdirs, 0, nested
        for entry in entries:
            rel = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if entry.name == ".git" and prefix:
                nested.append(Path(entry.path))
            if self._denied(rel, is_dir):
                masks.append(Path(entry.path))
            elif is_dir and entry.name not in _PRUNE:
                subdirs.append((entry.path, rel + "/"))
        return masks, subdirs, len(entries), nested


def _linked_git_dirs(root: Path) -> list[Path]:
    """What git needs outside `root` to work in it, as `git_safety.locate` accepts it, read-only:

    - when `root` is a linked worktree: the repository's common git directory and the worktree's
      own (`<common>/worktrees/<id>`; its `gitdir` file points back at `root`);
    - when `root` is a subdirectory of its repository's work tree (a lane of such a workspace):
      also the top level's `.git` (the directory, or a linked worktree's `.git` file) git finds there.

    Bound by name because they may lie under /tmp or the home, which the sandbox replaces — git in
    the workspace would then find no repository at all. Nothing for a repository git is not run on."""
    try:
        loc = git_safety.locate(root)
    except (git_safety.UnsafeRepository, OSError):
        return []
    if loc is None:
        return []
    dirs: list[Path] = []
    if loc.worktree != root:
        dirs.append(loc.worktree / ".git")  # outside the workspace, which is below the top level
    if not loc.gitdir.is_relative_to(root):
        dirs.append(loc.gitdir)
    commondir = loc.gitdir / "commondir"
    if commondir.is_file():
        try:
            common = (loc.gitdir / commondir.read_text(encoding="utf-8", errors="replace").strip()).resolve()
        except OSError:
            common = None
        if common is not None and common.is_dir() and loc.gitdir.is_relative_to(common) \
                and not common.is_relative_to(root):
            dirs.insert(0, common)  # objects, refs, config; the worktree's own directory is inside it
    # A bind over a directory holding the workspace would make the workspace read-only; one inside
    # another is bound with it.
    out: list[Path] = []
    for d in dirs:
        if not root.is_relative_to(d) and not any(d.is_relative_to(o) for o in out) and d not in out:
            out.append(d)
    return out


def _mask(path: Path) -> list[str]:
    """bwrap arguments that hide `path`: an empty read-only tmpfs over a directory, /dev/null over a file.
    A symlink is masked at its target (bwrap follows it), which is what the program would open."""
    target = path.resolve() if path.is_symlink() else path
    if not target.exists():
        return []
    if target.is_dir():
        return ["--tmpfs", str(target), "--remount-ro", str(target)]
    return ["--ro-bind", "/dev/null", str(target)]


def _contains(outer: Path, inner: Path) -> bool:
    try:
        return inner.resolve().is_relative_to(outer.resolve())
    except OSError:
        return False


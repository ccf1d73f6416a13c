"""What a sandboxed command sees of the home directory: only the toolchains it runs with.

Repository code runs unprompted inside the sandbox (an allowlisted `pytest` runs the
repository's `conftest.py`), and what it prints goes to the model. A read-only home is still a
readable one: another project's `.env`, a token file with an ordinary name, a shell history.
So the home directory (`$HOME`, and the account's home when it differs) is an empty tmpfs in
the sandbox, and only these are bound back, read-only:

- each `PATH` directory under the home, at its prefix when that is an installation (a dot
  directory, or one with `lib`/`libexec`/`versions`: `~/.pyenv/shims` -> `~/.pyenv`,
  `~/.cargo/bin` -> `~/.cargo`, `~/.nvm/versions/node/v20/bin` -> that version,
  `~/miniconda3/bin` -> `~/miniconda3`, `~/go/bin` -> `~/go` with its module cache; with
  `~/.cargo` also `~/.rustup`, where rustup's proxies find the toolchains), else alone (`~/projects/bin`, not the projects beside
  it); `~/.local/bin` -> `~/.local/bin` and `~/.local/lib` (pip's user site);
- where programs on `PATH` (and in the workspace's `.venv` / `venv`) link into the home, at the
  link target's prefix (a virtualenv's `python` -> `~/.pyenv/versions/3.11.7`);
- toolchain roots named by the environment (`VIRTUAL_ENV`, `CONDA_PREFIX`, `PYENV_ROOT`,
  `RUSTUP_HOME`, `CARGO_HOME`, `NVM_DIR`, `GOROOT`, `GOPATH`, `JAVA_HOME`, `SDKMAN_DIR`);
- build tools' download caches (`policy.sandbox.build_caches`: `~/.m2/repository`,
  `~/.npm/_cacache`), never the credential files beside them (`~/.m2/settings.xml`,
  `~/.gradle/gradle.properties`: not bound, and deny-listed should a wider path be); Gradle's
  `~/.gradle/caches/modules-2` is shown at `GRADLE_CACHE_VIEW` as Gradle's read-only dependency
  cache (`GRADLE_RO_DEP_CACHE`), since Gradle must write its own `~/.gradle` (locks) and does
  so in the empty home;
- `policy.sandbox.readable_paths` (anything else a build needs, e.g. `~/.ivy2/cache`).

The same holds for `/tmp`, which the sandbox replaces with its own: a toolchain there (a venv
activated under `/tmp`, `VIRTUAL_ENV=/tmp/...`) is shown as one under the home is.

The workspace and `policy.sandbox.writable_paths` are bound after the tmpfs and stay visible;
deny-listed entries inside what is bound back are still masked. Writes to the rest of the home
land in the tmpfs and vanish with the command.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Mapping
from pathlib import Path

TOOLCHAIN_ENV = ("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT", "RUSTUP_HOME", "CARGO_HOME", "NVM_DIR", "GOROOT",
                 "GOPATH", "JAVA_HOME", "SDKMAN_DIR")
_BIN_NAMES = {"bin", "sbin", "shims"}
# What a toolchain on PATH reads beside its own prefix by default: rustup's proxies in ~/.cargo/bin
# read their toolchains from ~/.rustup (unless RUSTUP_HOME says otherwise).
_COMPANIONS = {".cargo": (".rustup",)}
_WORKSPACE_VENVS = (".venv/bin", "venv/bin")
# Where a Gradle `caches/modules-2` is shown: Gradle's read-only dependency cache holds `modules-2`.
GRADLE_CACHE_VIEW = Path("/run/deepseek-ls/gradle-ro-dep-cache")
# The sandbox replaces /tmp with its own: what the command needs there is shown like the home's.
TMP = Path("/tmp")
# (directory, mtime) -> the home-relative link targets found in it
_LINK_CACHE: dict[str, tuple[int, list[Path]]] = {}


def home_dirs(home: Path) -> list[Path]:
    """`home` ($HOME) and the account's own home when it differs, resolved: every directory that is
    someone's home here, also one under /tmp (nothing of ours binds one whole)."""
    found: list[Path] = []
    candidates = [home]
    try:
        candidates.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except (KeyError, OSError):
        pass
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved.is_dir() and resolved not in found:
            found.append(resolved)
    return found


def homes(home: Path) -> list[Path]:
    """The home directories to hide: `home` ($HOME) and the account's own when it differs."""
    # `/` is no home to hide; under /tmp it is hidden already (the sandbox's own /tmp).
    return [h for h in home_dirs(home) if h != Path("/") and not h.is_relative_to(TMP)]


def exposed(hidden: list[Path], *, root: Path, env: Mapping[str, str], extra: Iterable[str] = ()) -> list[Path]:
    """The directories under the `hidden` homes to bind back read-only, outermost first."""
    if not hidden:
        return []
    wanted: list[Path] = []
    path_dirs = [Path(p) for p in env.get("PATH", "").split(os.pathsep) if p and os.path.isabs(p)]
    for directory in path_dirs:
        wanted += _prefixes(_resolved(directory), hidden)
    for directory in [*path_dirs, *(root / venv for venv in _WORKSPACE_VENVS)]:
        for target in _link_targets(directory, hidden):
            wanted += _prefixes(target.parent, hidden)
    for name in TOOLCHAIN_ENV:
        value = env.get(name)
        if value and os.path.isabs(value):
            wanted += [p for p in [_resolved(Path(value))] if _under(p, hidden) and p not in hidden]
    for value in extra:
        p = _resolved(Path(os.path.expanduser(value)))
        if p.is_absolute() and _under(p, hidden) and p not in hidden:
            wanted.append(p)
    out: list[Path] = []
    for p in sorted(set(wanted), key=lambda q: (len(q.parts), str(q))):
        if p.exists() and not any(p.is_relative_to(o) for o in out):
            out.append(p)
    return out


def build_caches(entries: Iterable[str], *, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """`entries` (`policy.sandbox.build_caches`) split into the paths to show read-only at their
    place (for `exposed`'s `extra`) and the bwrap arguments that show a Gradle `caches/modules-2`
    as Gradle's read-only dependency cache (unless the environment names one already)."""
    shown: list[str] = []
    args: list[str] = []
    for entry in entries:
        path = _resolved(Path(os.path.expanduser(entry)))
        if not path.is_absolute() or not path.is_dir():
            continue
        if path.name == "modules-2" and path.parent.name == "caches":
            if not args and "GRADLE_RO_DEP_CACHE" not in env:
                args += ["--ro-bind", str(path), str(GRADLE_CACHE_VIEW / "modules-2"),
                         "--setenv", "GRADLE_RO_DEP_CACHE", str(GRADLE_CACHE_VIEW)]
            continue
        shown.append(str(path))
    return shown, args


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def _under(path: Path, hidden: list[Path]) -> bool:
    return any(path.is_relative_to(h) for h in hidden)


def _prefixes(directory: Path, hidden: list[Path]) -> list[Path]:
    """The installation a program directory under a hidden home belongs to (see the module doc)."""
    for home in hidden:
        if not directory.is_relative_to(home) or directory == home:
            continue
        if directory.name not in _BIN_NAMES or directory.parent == home:
            return [directory]
        prefix = directory.parent
        if prefix == home / ".local":  # ~/.local also holds keyrings and app data: only pip's parts
            return [directory, prefix / "lib"]
        if _installation(prefix, home):
            companions = _COMPANIONS.get(prefix.relative_to(home).as_posix(), ())
            return [prefix, *(home / c for c in companions)]
        return [directory]  # `~/projects/bin`: not the projects beside it
    return []


def _installation(prefix: Path, home: Path) -> bool:
    """Whether `prefix` looks like a tool's installation (`~/.pyenv`, `~/.nvm/versions/node/v20`,
    `~/miniconda3`, a virtualenv) rather than a directory of the person's own files."""
    if any(part.startswith(".") for part in prefix.relative_to(home).parts):
        return True
    return any((prefix / name).is_dir() for name in ("lib", "lib64", "libexec", "versions", "pkg"))


def _link_targets(directory: Path, hidden: list[Path]) -> list[Path]:
    """Where the symbolic links in `directory` lead into a hidden home (cached per directory mtime)."""
    key = str(directory)
    try:
        mtime = os.stat(directory).st_mtime_ns
    except OSError:
        return []
    hit = _LINK_CACHE.get(key)
    if hit is not None and hit[0] == mtime:
        return [t for t in hit[1] if _under(t, hidden)]
    targets: list[Path] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_symlink():
                    target = _resolved(Path(entry.path))
                    if target.is_absolute() and not target.is_relative_to(directory):
                        targets.append(target)
    except OSError:
        return []
    # Only targets under some home are worth keeping (a system /usr/bin links within /usr).
    targets = [t for t in targets if not t.is_relative_to("/usr") and not t.is_relative_to("/etc")]
    _LINK_CACHE[key] = (mtime, targets)
    return [t for t in targets if _under(t, hidden)]

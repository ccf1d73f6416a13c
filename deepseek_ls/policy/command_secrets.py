"""Keep secret files out of what allowlisted commands print.

`CommandPolicy` decides whether a command may run; this module looks at the
arguments of an allowed command for secret locations, because `rg`, `git diff`
and `git show` print file contents, and their output goes to the model:

- an argument that names a deny-listed or reserved path (also as `--opt=PATH`,
  `REV:PATH`, or a git pathspec with magic such as `:(literal).env`), or a file
  whose content is a credential file, refuses the command;
- `rg` gets one case-insensitive exclude glob per deny-list pattern, so a
  directory search skips them;
- `git diff|log|show|grep|whatchanged` get exclude pathspecs for the deny-list
  (`git diff --no-index`, which ignores pathspecs, is refused).

The OS sandbox masks these paths as well; this is the layer that holds where
no sandbox is available, and it gives the model a clear refusal instead of an
empty result.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from deepseek_ls.policy import safe_files
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.paths import PathPolicy
from deepseek_ls.policy.secret_files import HEAD_BYTES, secret_kind_of_bytes

_GIT_CONTENT_COMMANDS = {"diff", "log", "show", "grep", "whatchanged"}


def rg_exclude_args(deny_paths: list[str] | tuple[str, ...]) -> list[str]:
    """`--iglob !**/PATTERN` (and `!**/PATTERN/**`) for every deny-list pattern and our reserved dirs."""
    out: list[str] = []
    for pattern in (*deny_paths, ".git/", ".deepseek/"):
        body = pattern.strip("/")
        if not body or pattern.startswith("!"):
            continue
        body = body if body.startswith("**/") else f"**/{body}"
        out += ["--iglob", f"!{body}", "--iglob", f"!{body}/**"]
    return out


def git_exclude_pathspecs(deny_paths: list[str] | tuple[str, ...]) -> list[str]:
    """Exclude pathspecs (case-insensitive globs, any depth) for the deny-list and `.deepseek/`."""
    out: list[str] = []
    for pattern in (*deny_paths, ".deepseek/"):
        body = pattern.strip("/")
        if not body or pattern.startswith("!"):
            continue
        body = body if body.startswith("**/") else f"**/{body}"
        out += [f":(exclude,icase,glob){body}", f":(exclude,icase,glob){body}/**"]
    return out


def guard_command(argv: list[str], *, cwd: Path, paths: PathPolicy) -> list[str]:
    """The argv to run: refused (`PolicyViolation`) when an argument names a secret, else with
    exclusions added for programs that print file contents."""
    if not argv:
        return argv
    root = paths.root
    try:
        cwd_rel = Path(cwd).resolve().relative_to(root).as_posix()
    except ValueError:
        cwd_rel = "."
    line = " ".join(argv)
    for arg in argv[1:]:
        for candidate in path_candidates(arg):
            _check_candidate(line, arg, candidate, cwd_rel, paths)
    program = os.path.basename(argv[0])
    if program == "rg":
        # After the caller's own globs (rg: the last matching glob wins), before any "--".
        cut = argv.index("--") if "--" in argv else len(argv)
        return [*argv[:cut], *rg_exclude_args(paths.deny_patterns), *argv[cut:]]
    if program == "git":
        return _guard_git(line, argv, cwd, paths)
    return argv


def path_candidates(arg: str) -> list[str]:
    """What an argument may name as a path: itself, the value of `--opt=VALUE`, a git pathspec
    without its magic (`:(literal).env`), the PATH of `REV:PATH`."""
    values = [arg]
    if arg.startswith("-"):
        if "=" not in arg:
            return []
        values = [arg.split("=", 1)[1]]
    out = []
    for value in values:
        if value.startswith(":"):  # git pathspec magic: ":(top,literal)x", ":!x", ":/x"
            if value.startswith(":("):
                value = value[value.find(")") + 1 :] if ")" in value else ""
            else:
                value = value.lstrip(":!^/")
        out.append(value)
        if ":" in value:  # REV:PATH (git show HEAD:.env)
            out.append(value.rsplit(":", 1)[1])
    return [v for v in out if v and v not in (".", "./")]


def _check_candidate(line: str, arg: str, value: str, cwd_rel: str, paths: PathPolicy) -> None:
    rel = posixpath.normpath(posixpath.join(cwd_rel, value))
    if rel in (".", "") or rel.startswith("../"):
        return
    try:
        paths.normalize(rel)
    except PolicyViolation as exc:
        if exc.rule in ("deny_list", "reserved_dir"):
            raise PolicyViolation(line, exc.rule, f"argument {arg!r} names a protected path: {exc.reason}") from None
        return
    target = paths.root / rel
    if os.path.lexists(target):
        try:
            paths.resolve(rel)  # a symlink to a secret or out of the workspace
        except PolicyViolation as exc:
            raise PolicyViolation(line, exc.rule, f"argument {arg!r}: {exc.reason}") from None
        if target.is_file():
            try:
                head = safe_files.read_bytes(paths.root, rel, max_bytes=HEAD_BYTES)
            except PolicyViolation as exc:
                raise PolicyViolation(line, exc.rule, f"argument {arg!r}: {exc.reason}") from None
            except OSError:
                return
            kind = secret_kind_of_bytes(head)
            if kind is not None:
                raise PolicyViolation(line, "secret_content", f"argument {arg!r} names a file that looks like {kind}")


def _guard_git(line: str, argv: list[str], cwd: Path, paths: PathPolicy) -> list[str]:
    sub_index = next((i for i, a in enumerate(argv[1:], 1) if not a.startswith("-")), None)
    if sub_index is None or argv[sub_index] not in _GIT_CONTENT_COMMANDS:
        return argv
    rest = argv[sub_index + 1 :]
    if any(a.startswith("--no-ind") for a in rest):
        raise PolicyViolation(line, "no_index", "'git diff --no-index' compares files outside git's pathspec rules; it is refused")
    excludes = git_exclude_pathspecs(paths.deny_patterns)
    head = argv[: sub_index + 1]
    if "--" in rest:
        return [*head, *rest, *excludes]
    # Without "--", git tells revisions from paths by looking at the disk; do the same so
    # the exclude pathspecs can be appended after an explicit "--".
    revs, specs = [], []
    for a in rest:
        if not a.startswith("-") and not specs and not os.path.lexists(Path(cwd) / a):
            revs.append(a)
        elif a.startswith("-") and not specs:
            revs.append(a)
        else:
            specs.append(a)
    return [*head, *revs, "--", *(specs or [":/"]), *excludes]

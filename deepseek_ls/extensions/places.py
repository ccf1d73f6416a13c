"""Where commands and skills are looked for, and whether a workspace's may be used.

Three places each, in this order (a name found earlier wins): the workspace's `.deepseek/<kind>/`,
the workspace's `.claude/<kind>/` (Claude Code's layout, read as it is) and the user's config
directory `<kind>/` (`~/.config/deepseek-ls/` by default: `config_layers.user_config_path`, so
`XDG_CONFIG_HOME` and `DEEPSEEK_LS_USER_CONFIG` move it too).

A repository's own commands and skills are prompts written by whoever committed them, so they are
used only in a workspace the person trusts (`deepseek-ls trust`): until then they are left out
and `untrusted_notice` says so, once per workspace and process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.config_layers import user_config_path

WORKSPACE_DIRS = (".deepseek", ".claude")
MAX_FILES = 500  # per place: a directory with more is cut there, and said


@dataclass(frozen=True)
class Place:
    scope: str  # "workspace" or "user"
    directory: Path  # e.g. <root>/.claude/commands
    label: str  # how the person knows it: ".claude/commands", "~/.config/deepseek-ls/commands"
    root: Path | None  # the workspace root files must stay inside (None: the user's own directory)

    def contains(self, path: Path) -> bool:
        """Whether `path` (resolved) stays inside this place's workspace (always, for the user's)."""
        if self.root is None:
            return True
        return path.resolve().is_relative_to(self.root.resolve())


def places(root: Path, kind: str, *, trusted: bool, env: Mapping[str, str] | None = None) -> list[Place]:
    """The places `kind` ("commands" or "skills") is read from, workspace ones only when `trusted`."""
    found = [Place("workspace", Path(root) / d / kind, f"{d}/{kind}", Path(root)) for d in WORKSPACE_DIRS] if trusted else []
    user_dir = user_config_path(env).parent / kind
    found.append(Place("user", user_dir, _home_label(user_dir), None))
    return found


def shipped(root: Path, kind: str) -> list[str]:
    """The workspace places that hold `kind` (what an untrusted workspace's notice names)."""
    return [f"{d}/{kind}" for d in WORKSPACE_DIRS if (Path(root) / d / kind).is_dir()]


def is_trusted(root: Path, env: Mapping[str, str] | None = None) -> bool:
    from deepseek_ls.trust import workspace_trust

    return workspace_trust(Path(root), env).trusted


def files(place: Place, pattern: str) -> Iterator[Path]:
    """Files matching `pattern` under `place`, in a stable order, symlinks out of the workspace left out."""
    if not place.directory.is_dir() or not place.contains(place.directory):
        return
    for count, path in enumerate(sorted(place.directory.glob(pattern))):
        if count >= MAX_FILES:
            return
        if path.is_file() and place.contains(path):
            yield path


KINDS = ("commands", "skills")  # what a workspace may ship that waits for trust
_told: set[str] = set()
_told_lock = threading.Lock()


def untrusted_notice(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """The sentence telling the person that this untrusted workspace's commands and skills are not
    used, the first time it is asked for per workspace in this process; None after that, when the
    workspace is trusted, and when it ships none."""
    if is_trusted(root, env):
        return None
    where = [p for kind in KINDS for p in shipped(root, kind)]
    if not where:
        return None
    key = str(Path(root).resolve())
    with _told_lock:
        if key in _told:
            return None
        _told.add(key)
    return (f"this workspace ships custom commands or skills ({', '.join(where)}); they are not used until you "
            "trust it (`deepseek-ls trust`, or 'DeepSeek: Trust Workspace' / :DeepSeekTrust in the editor)")


def _home_label(path: Path) -> str:
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return str(path)

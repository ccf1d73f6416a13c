"""Where a workspace is and where its state lives (`.deepseek/`)."""

from __future__ import annotations

from pathlib import Path

STATE_DIR_NAME = ".deepseek"


def find_workspace_root(start: Path | None = None) -> Path:
    """Walk up from `start` (default: cwd) to the directory holding `.git`; else `start`."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


def state_dir(root: Path, *, create: bool = True) -> Path:
    """`ROOT/.deepseek`, created on demand and kept out of git via `.git/info/exclude`.

    We never edit the user's `.gitignore`.
    """
    path = root / STATE_DIR_NAME
    if create:
        path.mkdir(parents=True, exist_ok=True)
        _exclude_from_git(root)
    return path


def _exclude_from_git(root: Path) -> None:
    git_dir = root / ".git"
    if not git_dir.is_dir():
        return
    exclude = git_dir / "info" / "exclude"
    line = f"/{STATE_DIR_NAME}/"
    try:
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if line in existing.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not existing or existing.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as fh:
            fh.write(f"{sep}{line}\n")
    except OSError:
        # A read-only .git is not a reason to refuse to work; state is still local.
        pass

"""Canaries for the never-run-unapproved tests: a program a hostile repository names, that leaves a mark.

`plant(script, marker)` writes an executable shell script that appends its name and arguments
to `marker`, then passes its input through (`exec cat`, so as a filter or a textconv driver it
still answers and git does not stop because of it). `plant_hooks(directory, names, marker)`
writes git hooks that append their own name. A test names the script wherever git would run a
program (config, attributes, environment) and asserts afterwards that `ran(marker)` is empty —
and, as a control, that plain git on the same repository does write it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def plant(script: Path, marker: Path) -> Path:
    """An executable canary at `script` that appends `"$0 $*"` to `marker` when run; returns `script`."""
    marker.parent.mkdir(parents=True, exist_ok=True)
    return _executable(script, f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexec cat\n")


def plant_hooks(directory: Path, names: Iterable[str], marker: Path) -> None:
    """Executable git hooks `names` in `directory`, each appending its name to `marker` when run."""
    for name in names:
        _executable(directory / name, f"#!/bin/sh\necho {name} >> {marker}\n")


def ran(marker: Path) -> str:
    """What the canaries wrote to `marker` (empty when none ran)."""
    return marker.read_text() if marker.exists() else ""

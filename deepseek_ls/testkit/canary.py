"""Canaries for the never-run-unapproved tests: a program a hostile repository names, that leaves a mark.

`plant(script, marker)` writes an executable shell script that appends its name and arguments
to `marker`, then passes its input through (`exec cat`, so as a filter or a textconv driver it
still answers and git does not stop because of it). `plant_hooks(directory, names, marker)`
writes git hooks that append their own name. A test names the script wherever git would run a
program (config, attributes, environment) and asserts afterwards that `ran(marker)` is empty —
and, as a control, that plain git on the same repository does write it. `plant_secret(path)`
writes a file holding a unique word, for the never-leak tests.
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


def plant_secret(path: Path, *, label: str = "secret") -> str:
    """A file at `path` holding a unique plain word (no format redaction knows); returns the word.
    A test asserts that the word never shows up where it must not (a command's output, a prompt)."""
    import uuid

    word = f"canary{label}" + uuid.uuid4().hex[:12].translate(str.maketrans("0123456789", "ghijklmnop")) + "zebra"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"TOKEN={word}\n")
    return word

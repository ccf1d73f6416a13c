"""Project instructions: `AGENTS.md` (and `.deepseek/instructions.md`) at the workspace root.

Their text is appended to the system prompt of every agent role (planner, executor,
ask), so it sits in the stable prefix of each request: the system prompt comes first
and does not change within a session, which keeps DeepSeek's prompt cache hitting.
The files are read through the path policy (a symlink leaving the workspace or a
denied path is refused), capped at `instructions.max_bytes`, and re-read only when
they change.
"""

from __future__ import annotations

import logging
from pathlib import Path

from deepseek_ls.config_models import Config
from deepseek_ls.policy import PathPolicy, PolicyViolation

log = logging.getLogger("deepseek_ls.agent")

HEADER = "Project instructions from {name} (the repository's own rules; follow them unless the user says otherwise):"


class ProjectInstructions:
    """The instructions of one workspace, cached by the files' (mtime, size)."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = Path(root)
        self.files = list(config.instructions.files)
        self.max_bytes = config.instructions.max_bytes
        self.paths = PathPolicy(self.root, config.policy.deny_paths)
        self._key: tuple = ()
        self._text = ""

    def text(self) -> str:
        """The instruction blocks to append to a system prompt ('' when there are none)."""
        found: list[tuple[str, Path]] = []
        key: list[tuple[str, int, int]] = []
        for rel in self.files:
            try:
                path = self._resolve(rel)
                stat = path.stat()
            except PolicyViolation as exc:
                log.warning("project instructions %s not used: %s", rel, exc)
                continue
            except OSError:
                continue
            if path.is_file():
                found.append((rel, path))
                key.append((rel, stat.st_mtime_ns, stat.st_size))
        if tuple(key) != self._key:
            self._key, self._text = tuple(key), self._read(found)
        return self._text

    def _resolve(self, rel: str) -> Path:
        """The file, refused when it (or a symlink on the way) leaves the workspace or is a denied path.

        `.deepseek/` is reserved to tools, but its instructions file is read here, for the prompt."""
        if not rel.startswith(".deepseek/"):
            return self.paths.resolve(rel)
        root = self.root.resolve()
        path = (root / rel).resolve()
        if not path.is_relative_to(root / ".deepseek"):
            raise PolicyViolation(rel, "symlink_escape", "it resolves outside the workspace's .deepseek/")
        return path

    def _read(self, found: list[tuple[str, Path]]) -> str:
        blocks, left = [], self.max_bytes
        for rel, path in found:
            try:
                data = path.read_bytes()
            except OSError as exc:
                log.warning("cannot read project instructions %s: %s", rel, exc)
                continue
            if left <= 0:
                log.warning("project instructions %s left out: instructions.max_bytes (%d) reached", rel, self.max_bytes)
                continue
            text = data[:left].decode("utf-8", "replace").strip()
            if len(data) > left:
                text += f"\n[... cut at instructions.max_bytes = {self.max_bytes}]"
            left -= len(data)
            if text:
                blocks.append(f"{HEADER.format(name=rel)}\n{text}")
        return "\n\n".join(blocks)

    def system_prompt(self, base: str) -> str:
        """`base` followed by the project's instructions, if any."""
        extra = self.text()
        return f"{base.rstrip()}\n\n{extra}" if extra else base

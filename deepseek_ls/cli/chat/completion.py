"""Completion in the chat's prompt: `/` commands at the start of a message, `@path` anywhere.

Commands come from the slash-command table with their help beside them. Paths are
the workspace's files as `tools.fs.workspace_files` lists them (git's view:
ignored files left out), minus the secret locations of `policy.deny_paths` (the
agent would refuse to attach them anyway); the list is read in a thread and kept
for `REFRESH` seconds. A file whose name starts with what was typed comes before
one that only contains it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from deepseek_ls.policy.paths import secret_location
from deepseek_ls.tools.fs import workspace_files

REFRESH = 10.0  # seconds a file listing is reused
LIMIT = 50  # completions shown for a path


class WorkspaceFiles:
    """The workspace's files for `@` completion, listed again at most every `REFRESH` seconds."""

    def __init__(self, root: Path, deny_paths: list[str]) -> None:
        self.root = root
        self.deny_paths = deny_paths
        self._files: list[str] = []
        self._listed = float("-inf")
        self._lock = threading.Lock()

    def get(self) -> list[str]:
        with self._lock:
            if time.monotonic() - self._listed > REFRESH:
                self._files = [f for f in workspace_files(self.root) if not secret_location(f, self.deny_paths)]
                self._listed = time.monotonic()
            return self._files


class ChatCompleter(Completer):
    def __init__(self, commands: Callable[[], Mapping[str, Any]], files: Callable[[], list[str]]) -> None:
        self.commands = commands
        self.files = files

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before and "\n" not in before:
            yield from self._commands(before)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            yield from self._paths(word)

    def _commands(self, typed: str) -> Iterable[Completion]:
        for name, spec in self.commands().items():
            if f"/{name}".startswith(typed.lower()):
                yield Completion(f"/{name}", start_position=-len(typed), display_meta=spec.help)

    def _paths(self, word: str) -> Iterable[Completion]:
        typed = word[1:]
        files = self.files()
        first = [f for f in files if f.startswith(typed)]
        then = [f for f in files if typed.lower() in f.lower() and not f.startswith(typed)]
        for path in (first + then)[:LIMIT]:
            yield Completion(f"@{path}", start_position=-len(word), display=path)

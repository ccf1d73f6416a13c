"""Fixtures of the Emacs end-to-end tests: one `emacs --batch` with eglot per test file, connected to
the real server in a git workspace (a path with a space), the model our fake DeepSeek server on
loopback (emacs_harness.py, eglot_driver.el)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from emacs_harness import EmacsSession, emacs_env, find_emacs

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek
from deepseek_ls.workspace import state_dir


@dataclass
class Eglot:
    """The Emacs of a test file, its workspace and the user (XDG directories) it and its server run as."""

    emacs: EmacsSession
    root: Path
    env: dict[str, str]
    fake: FakeDeepSeek

    def stage(self, rel: str, text: str, diff: str) -> str:
        """`rel` written as `text` and `diff` staged on it as the server's user (sealed with that
        user's key, so the server offers it): what the agent leaves after a step. Its patch id."""
        (self.root / rel).write_text(text)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("XDG_CONFIG_HOME", self.env["XDG_CONFIG_HOME"])
            store = PatchStore(self.root, state_dir(self.root), policy=PathPolicy(self.root))
            return store.stage(diff).patch_id


@pytest.fixture(scope="module")
def eglot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Eglot]:
    emacs = find_emacs()
    if emacs is None:
        missing = "emacs is not installed (scripts/setup.sh --emacs installs emacs-nox and elpa-eglot)"
        if os.environ.get("CI"):  # scripts/test.sh installs it: missing on CI is a broken set-up
            pytest.fail(missing)
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("emacs")
    root = tmp / "ws with space"
    (root / ".deepseek").mkdir(parents=True)
    (root / ".deepseek" / "config.toml").write_text("[index]\nenabled = false\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    with FakeDeepSeek() as fake:
        env = emacs_env(tmp / "xdg", {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_LS_LOG": "info"})
        # The user config docs/editors.md gives editors without inline completion: one completion item.
        user_config = Path(env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
        user_config.parent.mkdir(parents=True)
        user_config.write_text("[inline_completion]\ncompletion_items = true\n")
        session = EmacsSession(emacs, root, tmp, env)
        try:
            yield Eglot(session, root, env, fake)
        finally:
            session.close()

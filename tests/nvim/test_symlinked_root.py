"""Headless Neovim on a workspace opened through a symlink: an accepted hunk lands in the
buffer (with the person's unsaved typing) and, once written, on disk. (Neovim may resolve the
link in the buffer's name itself; `tests/lsp/test_hostile_editor_symlinked_root.py` covers an
editor that keeps the link's spelling.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))
DIFF = """--- a/app.py
+++ b/app.py
@@ -2,3 +2,4 @@
 line 2
+inserted A
 line 3
 line 4
@@ -14,3 +15,4 @@
 line 14
 line 15
+inserted B
 line 16
"""


def test_never_clobber_accepting_through_a_symlinked_root_in_neovim(nvim, tmp_path: Path) -> None:
    real = tmp_path / "data" / "proj"
    real.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(real)], check=True)
    (real / "app.py").write_text(ORIGINAL)
    link = tmp_path / "home" / "proj"
    link.parent.mkdir()
    link.symlink_to(real, target_is_directory=True)
    PatchStore(real, state_dir(real), policy=PathPolicy(real)).stage(DIFF)
    result = nvim.run("symlink_spec.lua", cwd=tmp_path, env={"DEEPSEEK_LINKED_FILE": str(link / "app.py")})
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    expected = "# typed, not saved\n" + ORIGINAL.replace("line 2\n", "line 2\ninserted A\n")
    assert (real / "app.py").read_text() == expected

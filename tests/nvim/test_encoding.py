"""Headless Neovim accepts hunks next to emoji and CJK text, in the encoding it
negotiated with the real server (utf-8), and the file on disk is exact."""

from __future__ import annotations

import pytest

from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

ORIGINAL = "head\nsmile = '😀 中文'  # 🎉\n" + "".join(f"filler {i}\n" for i in range(8)) + "end = '🎉 終'"
DIFF = """--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 head
-smile = '😀 中文'  # 🎉
+smile = '😀 中文!'  # 🎉
 filler 0
@@ -10,2 +10,2 @@
 filler 7
-end = '🎉 終'
\\ No newline at end of file
+end = '🎉 終了 🚀'
\\ No newline at end of file
"""


def test_never_clobber_accepting_hunks_next_to_emoji_in_neovim(nvim, workspace):
    (workspace / "app.py").write_text(ORIGINAL, encoding="utf-8")
    PatchStore(workspace, state_dir(workspace), policy=PathPolicy(workspace)).stage(DIFF)
    result = nvim.run("encoding_spec.lua", cwd=workspace, timeout=180)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    expected = ORIGINAL.replace("中文'", "中文!'").replace("終'", "終了 🚀'")
    assert (workspace / "app.py").read_text(encoding="utf-8") == expected

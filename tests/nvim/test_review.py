"""Headless Neovim: :DeepSeekReview shows findings as diagnostics and the code action "Apply fix"
stages a hunk that :DeepSeekAccept applies — against the real server and the fake model."""

import json
import subprocess

import pytest

pytestmark = [pytest.mark.nvim, pytest.mark.slow]

FIX = "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a * b\n+    return a + b\n"
FINDING = {"file": "app.py", "start_line": 6, "severity": "error", "category": "bug",
           "message": "add multiplies instead of adding", "suggested_fix": FIX}


def test_review_diagnostics_and_apply_fix(nvim, workspace, fake_deepseek_process):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=workspace, check=True)
    app = workspace / "app.py"
    app.write_text(app.read_text().replace("return a + b", "return a * b"))
    fake = fake_deepseek_process([{"match": {"role": "reviewer"},
                                   "content": "```json\n" + json.dumps({"findings": [FINDING]}) + "\n```"}])
    env = {"DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key"}
    result = nvim.run("review_spec.lua", cwd=workspace, env=env, timeout=180)
    assert result.returncode == 0, result.output
    assert "0 failed" in result.output
    assert [r["role"] for r in fake.requests()] == ["reviewer"]
    assert "return a * b" in app.read_text(), "the accepted fix is in the buffer, the disk is the user's to save"

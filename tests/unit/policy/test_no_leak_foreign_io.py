"""The secret gate around MCP tools (`policy/foreign_io.py`): arguments that name a secret path
are refused whatever they are called and however they are spelled; patch sections of secret
files are hidden in git's form and in GitPython's bare `---`/`+++` form."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.config_models import DEFAULT_DENY_PATHS
from deepseek_ls.policy.foreign_io import hide_secret_text, secret_argument

DENY = DEFAULT_DENY_PATHS


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".env").write_text("A=1\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "ci.json").write_text('{"type": "service_account", "project_id": "p"}')
    (tmp_path / "README.md").write_text("hello\n")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"path": ".env"}, id="relative"),
        pytest.param({"path": "/home/me/project/.env.local"}, id="absolute-anywhere"),
        pytest.param({"uri": "file:///home/me/.ssh/id_ed25519"}, id="file-uri"),
        pytest.param({"revision": "HEAD:deploy/.env.staging"}, id="git-rev-path"),
        pytest.param({"files": ["README.md", "certs/server.pem"]}, id="in-a-list"),
        pytest.param({"source": {"file": {"path": ".aws/credentials"}}}, id="nested"),
        pytest.param({"path": "notes.txt"}, id="symlink-to-a-secret"),
        pytest.param({"path": "deploy/ci.json"}, id="credential-content"),
        pytest.param({"path": "src/../.git/config"}, id="git-dir"),
    ],
)
def test_no_leak_an_argument_naming_a_secret_refuses_the_call(root: Path, args: dict) -> None:
    assert secret_argument(args, root, DENY)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param({"path": "README.md"}, id="ordinary-file"),
        pytest.param({"message": "remove the .env file from the repository"}, id="prose-mentioning-a-name"),
        pytest.param({"timezone": "Europe/Paris"}, id="not-a-path"),
        pytest.param({"content": ".env\n" * 3}, id="multi-line-content"),
        pytest.param({"count": 3, "flag": True}, id="not-strings"),
    ],
)
def test_ordinary_arguments_pass(root: Path, args: dict) -> None:
    assert secret_argument(args, root, DENY) is None


GIT_FORM = (
    "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: t <t@t>\n\n    settings\n\n"
    "diff --git a/deploy/.env.staging b/deploy/.env.staging\nnew file mode 100644\nindex 0000000..e69de29\n"
    "--- /dev/null\n+++ b/deploy/.env.staging\n@@ -0,0 +1 @@\n+NOTE=canarysecret\n"
    "diff --git a/app.py b/app.py\nindex 1..2 100644\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a\n+b\n"
)
BARE_FORM = (
    "commit 0123456789abcdef0123456789abcdef01234567\n\n"
    "--- /dev/null\n+++ b/deploy/keys/deploy_key\n@@ -0,0 +1,3 @@\n+-----BEGIN RSA " + "PRIVATE KEY-----\n"
    "+MIIEowIBAAKCAQEAx3Kq9Zb2Qw8Lp4Rt6Yu1\n+-----END RSA " + "PRIVATE KEY-----\n"
    "\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-a\n+b\n"
)


@pytest.mark.parametrize(("text", "hidden"), [pytest.param(GIT_FORM, "deploy/.env.staging", id="git-form-by-path"),
                                               pytest.param(BARE_FORM, "deploy/keys/deploy_key", id="bare-form-by-content")])
def test_no_leak_patch_sections_of_secret_files_are_hidden(text: str, hidden: str) -> None:
    shown, names = hide_secret_text(text, DENY)
    assert names == [hidden]
    assert "canarysecret" not in shown and "MIIEowIBAAK" not in shown
    assert f"the diff of {hidden} is hidden" in shown
    assert "+b\n" in shown  # the ordinary file's change is kept


def test_a_result_that_is_a_credential_file_is_replaced() -> None:
    shown, _ = hide_secret_text("machine example.com\nlogin me\npassword hunter4hunter4\n", DENY)
    assert "hunter4" not in shown and "looks like netrc" in shown

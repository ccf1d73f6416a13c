"""Secret locations (policy.deny_paths) never reach the index, whose hits and repo map go to the model."""

from pathlib import Path

import pytest

from deepseek_ls.config_models import IndexConfig
from deepseek_ls.index import CodeIndex
from deepseek_ls.index.sources import deny_exclude_patterns


def _tree(root: Path) -> None:
    (root / "app.py").write_text("DATABASE_HOST = 'db'\n")
    (root / ".env").write_text("DATABASE_PASSWORD=hunter2-very-secret\n")
    (root / "config").mkdir()
    (root / "config" / ".env.production").write_text("DATABASE_PASSWORD=prod-secret\n")
    (root / "deploy").mkdir()
    (root / "deploy" / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\nDATABASE\n")
    (root / "home" / ".aws").mkdir(parents=True)
    (root / "home" / ".aws" / "credentials").write_text("[default]\nDATABASE_KEY=x\n")


def test_deny_listed_files_are_not_indexed(tmp_path: Path) -> None:
    _tree(tmp_path)
    index = CodeIndex(tmp_path, tmp_path / ".deepseek", IndexConfig())
    index.build()
    paths = {hit.path for hit in index.query("DATABASE", top_k=50).hits}
    assert paths == {"app.py"}
    assert "hunter2" not in index.repo_map(token_budget=4000)


def test_custom_deny_list_replaces_the_default(tmp_path: Path) -> None:
    _tree(tmp_path)
    index = CodeIndex(tmp_path, tmp_path / ".deepseek", IndexConfig(), deny_paths=["app.py"])
    index.build()
    paths = {hit.path for hit in index.query("DATABASE", top_k=50).hits}
    # *.pem is excluded only by the default deny-list, so replacing the list brings it back.
    assert "app.py" not in paths and "deploy/server.pem" in paths


@pytest.mark.parametrize(
    "pattern, expected",
    [
        pytest.param(".env", ".env", id="bare-name-any-depth"),
        pytest.param(".ssh/", ".ssh/", id="directory"),
        pytest.param(".aws/credentials", "**/.aws/credentials", id="inner-slash-unanchored"),
        pytest.param("**/x/y", "**/x/y", id="already-unanchored"),
        # A negation keeps its "!" in front (it became "**/!.aws/credentials", which matches nothing).
        pytest.param("!.aws/credentials", "!**/.aws/credentials", id="negation-unanchored"),
    ],
)
def test_deny_patterns_become_unanchored_gitignore_patterns(pattern: str, expected: str) -> None:
    assert deny_exclude_patterns([pattern]) == [expected]


@pytest.mark.parametrize(
    "name, content",
    [
        pytest.param("deploy/ci.json", '{"type":"service_account","private_key_id":"CANARYWORD"}', id="gcloud-no-spaces"),
        pytest.param("notes/hosts.txt", "x = 1\n" * 300 + "machine h login CANARYWORD\tpassword\thunter2\r\n", id="netrc-deep-tabs"),
        pytest.param("ops/cluster.yaml", "clusters:\n- name: CANARYWORD\nkind: Config\n", id="kubeconfig"),
        pytest.param("notes/café.txt", "# café CANARYWORD\nmachine h login me password hunter2\n", id="netrc-non-ascii"),
        pytest.param("src/keys.py", 'K = """\n-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B CANARYWORD\n"""\n', id="key-in-python"),
    ],
)
def test_no_leak_files_with_secret_content_are_never_indexed(tmp_path: Path, name: str, content: str) -> None:
    (tmp_path / "app.py").write_text("CANARYWORD = 1\n")
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(content, encoding="utf-8")
    index = CodeIndex(tmp_path, tmp_path / ".deepseek", IndexConfig(build_workers=1))
    report = index.build()
    assert {hit.path for hit in index.query("CANARYWORD", top_k=50).hits} == {"app.py"}
    assert [(s.path, s.reason) for s in report.skipped] == [(name, "secret")]
    assert name not in index.repo_map(token_budget=4000)

"""Path policy: hostile paths from a model are refused before any file is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy import PathPolicy, PolicyViolation


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".env").write_text("TOKEN=x\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    # Symlinks planted in the workspace (a cloned repo can contain these).
    (root / "link_out").symlink_to(outside, target_is_directory=True)
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_abs_etc").symlink_to("/etc")
    (root / "src" / "up").symlink_to("../..", target_is_directory=True)
    (root / "git_alias").symlink_to(root / ".git", target_is_directory=True)
    (root / "env_alias").symlink_to(root / ".env")
    (root / "inside_link").symlink_to(root / "src" / "app.py")
    return root


@pytest.fixture
def policy(workspace: Path) -> PathPolicy:
    return PathPolicy(workspace, PolicyConfig().deny_paths)


REFUSED = [
    pytest.param("", "empty_path", id="empty"),
    pytest.param("   ", "empty_path", id="blank"),
    pytest.param("/etc/passwd", "absolute_path", id="absolute-posix"),
    pytest.param("//etc/passwd", "absolute_path", id="absolute-double-slash"),
    pytest.param("~/.ssh/id_rsa", "absolute_path", id="home-tilde"),
    pytest.param("C:/Windows/win.ini", "absolute_path", id="windows-drive"),
    pytest.param("..\\..\\etc\\passwd", "backslash", id="windows-backslash-dotdot"),
    pytest.param("../outside/secret.txt", "dotdot", id="dotdot-leading"),
    pytest.param("src/../../outside/secret.txt", "dotdot", id="dotdot-middle"),
    pytest.param("src/./../../x", "dotdot", id="dotdot-after-dot"),
    pytest.param("src/..", "dotdot", id="dotdot-trailing"),
    pytest.param("．．/outside/secret.txt", "unicode_lookalike", id="fullwidth-dots"),
    pytest.param("src／..／..／etc", "unicode_lookalike", id="fullwidth-slash"),
    pytest.param("src\u2024\u2024/x", "unicode_lookalike", id="one-dot-leader"),
    pytest.param("src/app.py\x00.txt", "control_character", id="nul-byte"),
    pytest.param("src/app.py\n../../etc", "control_character", id="newline-injection"),
    pytest.param(".", "workspace_root", id="root-itself"),
    pytest.param(".git/config", "reserved_dir", id="git-config"),
    pytest.param(".git/hooks/pre-commit", "reserved_dir", id="git-hook"),
    pytest.param(".GIT/config", "reserved_dir", id="git-case-trick"),
    pytest.param(".Git./config", "reserved_dir", id="git-trailing-dot"),
    pytest.param("sub/.git/config", "reserved_dir", id="nested-git"),
    pytest.param(".deepseek/patches/x.json", "reserved_dir", id="our-state-dir"),
    pytest.param(".env", "deny_list", id="dotenv"),
    pytest.param("config/.env.production", "deny_list", id="dotenv-variant-nested"),
    pytest.param(".ENV", "deny_list", id="dotenv-case-trick"),
    pytest.param("certs/server.pem", "deny_list", id="pem"),
    pytest.param("keys/id_rsa", "deny_list", id="id-rsa"),
    pytest.param("keys/id_ed25519.pub", "deny_list", id="id-ed25519"),
    pytest.param(".ssh/authorized_keys", "deny_list", id="ssh-dir"),
    pytest.param("home/.ssh/config", "deny_list", id="ssh-dir-nested"),
    pytest.param(".aws/credentials", "deny_list", id="aws-credentials"),
    pytest.param("x/.aws/credentials", "deny_list", id="aws-credentials-nested"),
    pytest.param(".netrc", "deny_list", id="netrc"),
    pytest.param(".npmrc", "deny_list", id="npmrc"),
    pytest.param("tls/client.p12", "deny_list", id="p12"),
    pytest.param("link_out/secret.txt", "symlink_escape", id="symlink-dir-escape"),
    pytest.param("link_file", "symlink_escape", id="symlink-file-escape"),
    pytest.param("link_abs_etc/passwd", "symlink_escape", id="symlink-absolute-target"),
    pytest.param("src/up/outside/secret.txt", "symlink_escape", id="symlink-relative-up"),
    pytest.param("git_alias/config", "reserved_dir", id="symlink-to-git"),
    pytest.param("env_alias", "deny_list", id="symlink-to-dotenv"),
]


@pytest.mark.parametrize(("path", "rule"), REFUSED)
def test_hostile_path_is_refused(policy: PathPolicy, path: str, rule: str) -> None:
    with pytest.raises(PolicyViolation) as info:
        policy.resolve(path)
    assert info.value.rule == rule
    assert info.value.reason  # a sentence, not just a code


ALLOWED = [
    pytest.param("src/app.py", "src/app.py", id="plain"),
    pytest.param("./src/app.py", "src/app.py", id="leading-dot"),
    pytest.param("src//app.py", "src/app.py", id="double-slash"),
    pytest.param("src/new_file.py", "src/new_file.py", id="not-yet-existing"),
    pytest.param("docs/environment.md", "docs/environment.md", id="env-in-name-is-fine"),
    pytest.param("café/naïve.py", "café/naïve.py", id="non-ascii-letters"),
    pytest.param("inside_link", "inside_link", id="symlink-inside-workspace"),
    pytest.param("src/pemfile.txt", "src/pemfile.txt", id="pem-substring"),
]


@pytest.mark.parametrize(("path", "canonical"), ALLOWED)
def test_ordinary_path_is_allowed(policy: PathPolicy, workspace: Path, path: str, canonical: str) -> None:
    assert policy.relative(path) == canonical
    resolved = policy.resolve(path)
    assert resolved.is_relative_to(workspace.resolve())


def test_deny_list_is_configurable(workspace: Path) -> None:
    policy = PathPolicy(workspace, ["secrets/", "*.sqlite"])
    with pytest.raises(PolicyViolation):
        policy.resolve("secrets/a.txt")
    with pytest.raises(PolicyViolation):
        policy.resolve("data/app.SQLITE")
    assert policy.relative(".env") == ".env"  # not in this deny-list


def test_root_given_through_a_symlink_still_contains_its_files(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(workspace, alias)
    policy = PathPolicy(alias, [])
    assert policy.resolve("src/app.py") == (workspace / "src" / "app.py").resolve()


def test_negated_deny_patterns_keep_gitignore_semantics(workspace: Path) -> None:
    policy = PathPolicy(workspace, ["*.pem", "!certs/public.pem"])
    assert policy.relative("certs/public.pem") == "certs/public.pem"
    with pytest.raises(PolicyViolation):
        policy.resolve("certs/private.pem")


PATHISH = st.sampled_from(["..", ".", "/", "//", "~", "src", "link_out", "src/up", ".git", ".GIT", ".env", "．", "／",
                           "\\", "\x00", "\n", "a", "secret.txt", "C:", "id_rsa", ".ssh"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(PATHISH, st.text(max_size=6)), min_size=1, max_size=8))
def test_any_path_either_is_refused_or_stays_inside(policy: PathPolicy, workspace: Path, pieces: list[str]) -> None:
    rel = "/".join(pieces) if len(pieces) % 2 else "".join(pieces)
    try:
        resolved = policy.resolve(rel)
    except PolicyViolation:
        return
    root = workspace.resolve()
    assert resolved.is_relative_to(root) and resolved != root
    inside = resolved.relative_to(root).parts
    assert not any(p.casefold().rstrip(". ") in (".git", ".deepseek") for p in inside)
    assert "outside" not in resolved.parts

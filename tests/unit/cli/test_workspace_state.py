"""Which workspace a command works on, and how its `.deepseek/` state is kept out of git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.workspace import find_workspace_root, state_dir


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / ".gitignore").write_text("*.pyc\n")
    return path


def test_the_workspace_is_the_nearest_directory_holding_git(tmp_path):
    repo = git_repo(tmp_path / "repo")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_workspace_root(deep) == repo
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_workspace_root(plain) == plain


def test_state_dir_is_excluded_through_info_exclude_once_and_gitignore_is_untouched(tmp_path):
    repo = git_repo(tmp_path / "repo")
    for _ in range(3):
        state_dir(repo)
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines().count("/.deepseek/") == 1
    assert (repo / ".gitignore").read_text() == "*.pyc\n"
    SessionStore(repo / ".deepseek").create(repo, "plan", "x").close()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert ".deepseek" not in status


def test_commands_run_from_a_subdirectory_use_the_repository_root(run_cli, tmp_path):
    repo = git_repo(tmp_path / "repo")
    sub = repo / "src"
    sub.mkdir()
    with SessionStore(state_dir(repo)).create(repo, "plan", "from the root") as log:
        sid = log.session_id
    rows = json.loads(run_cli("sessions", "--json", cwd=sub).stdout)
    assert [r["session_id"] for r in rows] == [sid]
    shown = run_cli("config", "show", cwd=sub).stdout
    assert f"# workspace: {repo}" in shown

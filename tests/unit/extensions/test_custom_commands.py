"""Custom commands read from their files (Claude Code's `.claude/commands/` as it is) and expanded."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.config_layers import user_config_path
from deepseek_ls.extensions.commands import expand, load_commands
from deepseek_ls.extensions.places import untrusted_notice

KNOWN = {"fs.read", "fs.list", "fs.search_rg", "index.query", "git.diff", "bash.run", "patch.stage", "patch.apply"}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def claude_repo(tmp_path: Path) -> Path:
    """A repository with commands written for Claude Code, untouched."""
    root = tmp_path / "repo"
    write(root / ".claude/commands/release-notes.md", """---
description: Draft release notes since a tag
argument-hint: [tag] [audience]
allowed-tools: Bash(git log:*), Read, Grep, WebFetch
model: claude-3-5-haiku-20241022
---
Write release notes for the changes since $1 for $2.

Commits: !`git log --oneline $1..HEAD`

See @CHANGELOG.md for the style.
""")
    write(root / ".claude/commands/frontend/component.md", "Create a React component named $ARGUMENTS.\n")
    write(root / ".claude/commands/fix-issue.md", "Fix the issue the person describes, test first.\n")
    return root


def test_claude_commands_are_read_as_they_are(claude_repo: Path) -> None:
    found = load_commands(claude_repo, trusted=True)
    assert found.problems == []
    assert sorted(found.commands) == ["component", "fix-issue", "release-notes"]
    notes = found.get("release-notes")
    assert notes.description == "Draft release notes since a tag"
    assert notes.argument_hint == "[tag] [audience]"
    assert notes.origin == "workspace"
    assert found.get("component").origin == "workspace:frontend"
    assert found.get("fix-issue").description == "Fix the issue the person describes, test first."


def test_positional_arguments_and_bang_lines_expand_without_running_anything(claude_repo: Path) -> None:
    command = load_commands(claude_repo, trusted=True).get("release-notes")
    out = expand(command, 'v1.2 "the ops team"', KNOWN)
    assert "since v1.2 for the ops team." in out.prompt
    # The `!` line is not run: at most the model may make it a verification command (policy, approval, sandbox).
    assert "!`" not in out.prompt
    assert "(the output of `git log --oneline v1.2..HEAD`, which deepseek-ls did not run" in out.prompt
    assert "@CHANGELOG.md" in out.prompt  # attached by the agent under its path policy
    assert out.limit.tools == {"bash.run", "fs.read", "fs.search_rg", "index.query"}
    assert out.limit.bash_prefixes == ["git log"]
    assert out.profile is None
    assert any("WebFetch" in n for n in out.notes) and any("claude-3-5-haiku" in n for n in out.notes)


def test_dollar_arguments_is_the_whole_argument_text(claude_repo: Path) -> None:
    command = load_commands(claude_repo, trusted=True).get("component")
    assert expand(command, "Button with an icon", KNOWN).prompt == "Create a React component named Button with an icon."
    assert expand(command, "", KNOWN).prompt == "Create a React component named ."


def test_arguments_without_a_placeholder_are_added_at_the_end(claude_repo: Path) -> None:
    command = load_commands(claude_repo, trusted=True).get("fix-issue")
    out = expand(command, "#42 login loops", KNOWN)
    assert out.prompt.endswith("\n\nARGUMENTS: #42 login loops")
    assert out.limit is None


def test_a_command_with_malformed_frontmatter_is_named_and_the_rest_still_load(claude_repo: Path) -> None:
    write(claude_repo / ".deepseek/commands/broken.md", "---\ndescription: ok\n  tags: [unclosed\n---\nbody\n")
    write(claude_repo / ".deepseek/commands/never-closed.md", "---\ndescription: x\nbody\n")
    found = load_commands(claude_repo, trusted=True)
    assert sorted(found.commands) == ["component", "fix-issue", "release-notes"]
    assert len(found.problems) == 2
    assert any("broken.md" in p and "not valid YAML" in p for p in found.problems)
    assert any("never-closed.md" in p and "never closed" in p for p in found.problems)


def test_workspace_commands_win_over_the_users_and_builtins_are_never_shadowed(claude_repo: Path) -> None:
    user = user_config_path().parent / "commands"
    write(user / "fix-issue.md", "the user's own\n")
    write(user / "standup.md", "---\ndescription: what I did yesterday\nmodel: fast\n---\nSummarise git log.\n")
    write(claude_repo / ".deepseek/commands/help.md", "not the built-in help\n")
    found = load_commands(claude_repo, reserved=["help", "run"], trusted=True)
    assert found.get("fix-issue").origin == "workspace"
    assert found.get("standup").origin == "user"
    assert expand(found.get("standup"), "", KNOWN).profile == "fast"
    assert "help" not in found.commands
    assert any("/help is a built-in command" in p for p in found.problems)
    assert any("fix-issue" in p and "already" in p for p in found.problems)


def test_two_commands_of_one_name_in_subdirectories_get_their_namespace(tmp_path: Path) -> None:
    root = tmp_path / "ns"
    write(root / ".deepseek/commands/frontend/test.md", "frontend tests")
    write(root / ".deepseek/commands/backend/test.md", "backend tests")
    found = load_commands(root, reserved=[], trusted=True)
    assert sorted(found.commands) == ["backend:test", "frontend:test"]


def test_no_unapproved_exec_untrusted_workspace_commands_are_not_loaded(claude_repo: Path) -> None:
    """A repository's commands are prompts written by whoever committed them: until the person trusts
    the workspace none is offered or run, and the person is told once."""
    user = user_config_path().parent / "commands"
    write(user / "mine.md", "my own command\n")
    found = load_commands(claude_repo)
    assert sorted(found.commands) == ["mine"]
    notice = untrusted_notice(claude_repo)
    assert notice is not None and ".claude/commands" in notice and "deepseek-ls trust" in notice
    assert untrusted_notice(claude_repo) is None  # said once


def test_a_symlinked_command_leaving_the_workspace_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere/secret.md", "outside text\n")
    root = tmp_path / "links"
    (root / ".deepseek/commands").mkdir(parents=True)
    (root / ".deepseek/commands/leak.md").symlink_to(outside)
    assert load_commands(root, trusted=True).commands == {}

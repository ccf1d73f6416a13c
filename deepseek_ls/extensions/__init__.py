"""Extensions a person or a repository adds to the agent, in the formats users already have.

Custom commands (`commands.py`), Agent Skills (`skills.py`) and lifecycle hooks: read from the
user's config directory and from the workspace (`.deepseek/`, and Claude Code's `.claude/` as it
is). What a workspace ships is used only once the person trusts the workspace (`places.py`).
This is a service layer: it imports neither the agent nor an adapter.
"""

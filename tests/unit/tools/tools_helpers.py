"""Helpers for tool tests (a module with a unique name, importable from the test files)."""

from __future__ import annotations

from pathlib import Path

from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch import PatchStore
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy import PathPolicy
from deepseek_ls.tools.host import ToolHost


def build_host(workspace: Path, *, sink, ui, overlay=None, policy: PolicyConfig | None = None, **kw) -> ToolHost:
    config = Config(policy=policy or PolicyConfig())
    overlay = overlay or DocumentOverlay(workspace)
    patches = PatchStore(workspace, workspace / ".deepseek", policy=PathPolicy(workspace, config.policy.deny_paths), overlay=overlay, sink=sink)
    return ToolHost(workspace, config, sink=sink, ui=ui, overlay=overlay, patches=patches, **kw)

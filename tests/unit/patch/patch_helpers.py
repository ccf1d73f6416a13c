"""Helpers for patch tests (a module with a unique name, importable from the test files)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.policy import PathPolicy


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")


def make_store(root: Path, *, sink=None, overlay=None, gate: SafetyGate | None = None) -> PatchStore:
    return PatchStore(
        root,
        root / ".deepseek",
        policy=PathPolicy(root, PolicyConfig().deny_paths),
        overlay=overlay,
        sink=sink,
        gate=gate,
    )

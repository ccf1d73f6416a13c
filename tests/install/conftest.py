"""Install-test fixtures: the wheel and the workspaces' pytest, made once per test session; a
temporary home per test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from install_kit import build_wheel, copy_sources, packages_for_pytest


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    return build_wheel(copy_sources(base / "src"), base / "dist")


@pytest.fixture(scope="session")
def project_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest and its requirements, for the workspaces' own virtualenvs (linked into each)."""
    return packages_for_pytest(tmp_path_factory.mktemp("project-packages"))


@pytest.fixture
def home() -> Iterator[Path]:
    """A temporary $HOME outside /tmp (the sandbox replaces /tmp, so a home there would hide
    nothing the home's own tmpfs does not), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="dsls-install-home-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)

"""Files that execute or configure execution always need an explicit approval showing their content.

After the person answered "always allow" for patches (or in `auto` mode), a patch that creates or
changes `conftest.py`, a Makefile, `package.json`, `.vscode/*.json`, a CI workflow, ... still stops
at an approval whose detail shows the change. Denied, nothing is written (canaries intact).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_kit import RecordingUI, make_workspace

from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy import PathPolicy
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

PAYLOAD = "import os; os.system('touch /var/tmp/pwned')"

# (id, path, new file content)
EXEC_FILES = [
    ("conftest-root", "conftest.py", PAYLOAD),
    ("conftest-nested", "tests/conftest.py", PAYLOAD),
    ("setup-py", "setup.py", PAYLOAD),
    ("setup-cfg", "setup.cfg", "[tool:pytest]\naddopts = -p evil"),
    ("pyproject", "pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p evil'"),
    ("pytest-ini", "pytest2/pytest.ini", "[pytest]\naddopts = -p evil"),
    ("tox-ini", "tox.ini", "[pytest]\naddopts = -p evil"),
    ("noxfile", "noxfile.py", PAYLOAD),
    ("sitecustomize", "src/sitecustomize.py", PAYLOAD),
    ("pth-file", "src/evil.pth", "import os"),
    ("makefile", "sub/Makefile", "test:\n\ttouch /var/tmp/pwned"),
    ("makefile-lower", "makefile", "test:\n\ttouch /var/tmp/pwned"),
    ("gnumakefile", "GNUmakefile", "test:\n\ttouch /var/tmp/pwned"),
    ("mk-include", "build/rules.mk", "X := $(shell touch /var/tmp/pwned)"),
    ("package-json", "package.json", '{"scripts": {"test": "touch /var/tmp/pwned"}}'),
    ("npmrc", ".npmrc", "node-options=--require=./evil.js"),
    ("jest-config", "jest.config.js", "require('child_process').execSync('touch /var/tmp/pwned')"),
    ("vite-config-ts", "web/vite.config.ts", "import 'evil'"),
    ("eslintrc", ".eslintrc.js", "require('evil')"),
    ("vscode-settings", ".vscode/settings.json", '{"python.defaultInterpreterPath": "./evil"}'),
    ("vscode-tasks", ".vscode/tasks.json", '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}'),
    ("vscode-launch", ".vscode/launch.json", '{"configurations": []}'),
    ("devcontainer", ".devcontainer/devcontainer.json", '{"postCreateCommand": "touch /var/tmp/pwned"}'),
    ("github-workflow", ".github/workflows/ci.yml", "on: push\njobs: {}"),
    ("gitlab-ci", ".gitlab-ci.yml", "test:\n  script: touch /var/tmp/pwned"),
    ("pre-commit", ".pre-commit-config.yaml", "repos: []"),
    ("husky-hook", ".husky/pre-commit", "touch /var/tmp/pwned"),
    ("githooks-dir", ".githooks/pre-commit", "touch /var/tmp/pwned"),
    ("gitattributes", ".gitattributes", "*.py filter=evil"),
    ("gitmodules", ".gitmodules", '[submodule "x"]\n\turl = ext::sh -c touch% /var/tmp/pwned'),
    ("envrc", ".envrc", "touch /var/tmp/pwned"),
    ("bashrc", ".bashrc", "touch /var/tmp/pwned"),
    ("cargo-toml", "Cargo.toml", '[package]\nbuild = "build.rs"'),
    ("build-rs", "build.rs", "fn main() {}"),
    ("cargo-config", ".cargo/config.toml", "[build]\nrustc-wrapper = './evil'"),
    ("go-mod", "go.mod", "module x\ntoolchain go1.99"),
    ("tool-versions", ".tool-versions", "python 3.11"),
    ("mcp-json", ".mcp.json", '{"mcpServers": {"x": {"command": "./evil"}}}'),
    ("case-folded", "CONFTEST.PY", PAYLOAD),
]


def _new_file_diff(path: str, content: str) -> str:
    lines = content.split("\n")
    body = "\n".join("+" + line for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}\n"


def _host(root: Path, ui, mode: str = "suggest") -> ToolHost:
    config = Config(policy=PolicyConfig(approval_mode=mode))
    overlay = DocumentOverlay(root)
    sink = ListSink()
    patches = PatchStore(root, root / ".deepseek", policy=PathPolicy(root, config.policy.deny_paths), overlay=overlay,
                         sink=sink, gate=SafetyGate.from_config(config.agent_loop, config.policy))
    return ToolHost(root, config, sink=sink, ui=ui, overlay=overlay, patches=patches)


async def _stage(host: ToolHost, diff: str) -> dict:
    out = await host.call("patch.stage", {"diff": diff})
    assert out.ok, out.error
    return out.value


@pytest.mark.parametrize(("path", "content"), [pytest.param(p, c, id=i) for i, p, c in EXEC_FILES])
async def test_no_unapproved_exec_config_file_after_always_allow(tmp_path: Path, path: str, content: str) -> None:
    root, canaries = make_workspace(tmp_path)
    ui = RecordingUI("always_allow")
    host = _host(root, ui)
    # An ordinary change, answered "always allow".
    first = await _stage(host, _new_file_diff("src/plain.py", "x = 1"))
    assert not first["exec_config_files"]
    assert (await host.call("patch.apply", {"patch_id": first["patch_id"]})).ok
    assert len(ui.approvals) == 1
    # The execution-configuring file: asked again, with its content, and denied.
    ui.answer = "deny"
    out = await host.call("patch.stage", {"diff": _new_file_diff(path, content)})
    if not out.ok:  # a secret location too (.npmrc, .envrc): refused before any approval
        assert "deny-list" in out.error and not (root / path).exists()
        canaries.assert_intact(state=False)
        return
    staged = out.value
    assert staged["approval_required"] and staged["exec_config_files"] == [path]
    out = await host.call("patch.apply", {"patch_id": staged["patch_id"]})
    assert not out.ok and "denied" in out.error
    assert len(ui.approvals) == 2
    detail = ui.approvals[-1].detail
    assert path in detail and content.split("\n")[0] in detail
    assert not (root / path).exists()
    canaries.assert_intact(state=False)


async def test_no_unapproved_exec_config_file_in_auto_mode(tmp_path: Path) -> None:
    root, canaries = make_workspace(tmp_path)
    ui = RecordingUI("deny")
    host = _host(root, ui, mode="auto")
    staged = await _stage(host, _new_file_diff("conftest.py", PAYLOAD))
    out = await host.call("patch.apply", {"patch_id": staged["patch_id"]})
    assert not out.ok and len(ui.approvals) == 1 and PAYLOAD in ui.approvals[0].detail
    assert not (root / "conftest.py").exists()
    canaries.assert_intact(state=False)


async def test_no_unapproved_exec_config_file_rename_into_place(tmp_path: Path) -> None:
    root, _ = make_workspace(tmp_path)
    host = _host(root, RecordingUI("deny"))
    diff = ("diff --git a/src/app.py b/conftest.py\nsimilarity index 100%\nrename from src/app.py\nrename to conftest.py\n")
    out = await host.call("patch.stage", {"diff": diff})
    if out.ok:  # renames are supported: the destination is what runs
        assert "conftest.py" in out.value["exec_config_files"]


async def test_approved_exec_config_change_is_applied(tmp_path: Path) -> None:
    """The other side: an explicit yes applies it (the gate asks, it does not forbid)."""
    root, _ = make_workspace(tmp_path)
    ui = RecordingUI("allow_once")
    host = _host(root, ui)
    staged = await _stage(host, _new_file_diff("conftest.py", "import pytest"))
    assert (await host.call("patch.apply", {"patch_id": staged["patch_id"]})).ok
    assert (root / "conftest.py").read_text().startswith("import pytest")


def test_ordinary_files_are_not_exec_config() -> None:
    gate = SafetyGate()
    assert gate.exec_config_paths(["src/app.py", "README.md", "tests/test_app.py", "docs/config.md"]) == []
    assert gate.exec_config_paths(["a/b/conftest.py", ".vscode/extensions.json"]) == [
        "a/b/conftest.py", ".vscode/extensions.json"]

"""`deepseek-ls trust`: the CLI says when workspace settings are ignored, and trusting applies them."""

from __future__ import annotations

import json
from pathlib import Path


def test_untrusted_loosening_is_reported_once_and_trust_applies_it(run_cli, empty_dir: Path, cli_env) -> None:
    (empty_dir / ".deepseek").mkdir()
    (empty_dir / ".deepseek" / "config.toml").write_text('[policy]\napproval_mode = "auto"\n[router]\nthreshold_high = 0.6\n')

    shown = run_cli("--workspace", str(empty_dir), "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["config"]["policy"]["approval_mode"] == "suggest"
    assert data["config"]["router"]["threshold_high"] == 0.6
    warnings = [line for line in shown.stderr.splitlines() if "ignoring settings that loosen policy" in line]
    assert len(warnings) == 1 and "policy.approval_mode" in warnings[0] and "deepseek-ls trust" in warnings[0]

    trusted = run_cli("--workspace", str(empty_dir), "trust")
    assert trusted.returncode == 0, trusted.stderr
    assert "trusted" in trusted.stderr
    # Kept in the user's config dir, not in the workspace.
    assert (Path(cli_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "trusted-workspaces.json").is_file()
    assert sorted(p.name for p in (empty_dir / ".deepseek").iterdir()) == ["config.toml"]

    shown = run_cli("--workspace", str(empty_dir), "config", "show", "--json")
    assert json.loads(shown.stdout)["config"]["policy"]["approval_mode"] == "auto"
    assert "ignoring settings" not in shown.stderr

    revoked = run_cli("--workspace", str(empty_dir), "trust", "--revoke")
    assert revoked.returncode == 0 and "no longer trusted" in revoked.stderr
    shown = run_cli("--workspace", str(empty_dir), "config", "show", "--json")
    assert json.loads(shown.stdout)["config"]["policy"]["approval_mode"] == "suggest"

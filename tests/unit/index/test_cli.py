"""`deepseek-ls index ...` end to end, as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def cli(tmp_path: Path):
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }

    def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "deepseek_ls", "--workspace", str(root), "index", *args],
            capture_output=True, text=True, env=env, timeout=120,
        )

    return run


def test_build_status_query_update_round_trip(workspace, cli):
    missing = cli(workspace, "status")
    assert missing.returncode == 1 and missing.stdout.startswith("missing")

    built = cli(workspace, "build")
    assert built.returncode == 0, built.stderr
    assert "indexed 6 files" in built.stdout

    status = cli(workspace, "status", "--json")
    assert status.returncode == 0
    assert json.loads(status.stdout)["state"] == "fresh"

    result = json.loads(cli(workspace, "query", "parse_config", "--json", "--top-k", "2").stdout)
    assert result["fresh"] is True
    assert [h["path"] for h in result["hits"]][0] == "app/config.py"
    assert result["hits"][0]["lines"][0] == {"line": 6, "text": "def parse_config(text):"}

    # camelCase typed, snake_case written: found through the normalised identifiers
    text = cli(workspace, "query", "parseConfigBytes", "--lang", "rust", "--path-glob", "native/")
    assert text.stdout.splitlines()[0].startswith("native/lib.rs")
    assert "9: pub fn parse_config_bytes" in text.stdout

    (workspace / "app" / "config.py").write_text("def renamed_function():\n    pass\n")
    stale = cli(workspace, "status")
    assert stale.returncode == 1
    assert stale.stdout.splitlines()[1].split() == ["modified", "app/config.py"]

    updated = cli(workspace, "update", "app/config.py")
    assert updated.returncode == 0 and "re-indexed 1 files" in updated.stdout
    assert cli(workspace, "status").returncode == 0


def test_query_without_an_index_builds_it_first(workspace, cli):
    out = cli(workspace, "query", "HTTPServer")
    assert out.returncode == 0
    assert "missing" in out.stderr and "building it" in out.stderr
    assert out.stdout.splitlines()[0].startswith("app/server.py")


def test_stale_query_says_so_and_update_flag_refreshes(workspace, cli):
    cli(workspace, "build")
    (workspace / "extra.py").write_text("def fresh_symbol():\n    pass\n")
    stale = cli(workspace, "query", "fresh_symbol")
    assert "stale" in stale.stderr
    refreshed = cli(workspace, "query", "fresh_symbol", "--update")
    assert "stale" not in refreshed.stderr
    assert refreshed.stdout.splitlines()[0].startswith("extra.py")


def test_skipped_files_are_listed_on_stderr(workspace, cli):
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    out = cli(workspace, "build")
    assert "skipped 1 (1 binary)" in out.stderr
    assert "blob.bin" in out.stderr


def test_several_queries_in_one_invocation_answer_each_in_order(workspace, cli, tmp_path):
    cli(workspace, "build")
    queries = ["parse_config", "HTTPServer", "no_such_identifier_anywhere"]
    (tmp_path / "queries.txt").write_text("\n".join(queries) + "\n\n")
    batch = json.loads(cli(workspace, "query", "--queries-from", str(tmp_path / "queries.txt"), "--json").stdout)
    assert [r["query"] for r in batch] == queries
    for result in batch:
        alone = json.loads(cli(workspace, "query", result["query"], "--json").stdout)
        assert result["hits"] == alone["hits"]
    assert batch[2]["hits"] == []

    text = cli(workspace, "query", "--queries-from", str(tmp_path / "queries.txt"))
    headers = [line for line in text.stdout.splitlines() if line.startswith("# ")]
    assert headers == [f"# {q}" for q in queries]


def test_query_without_any_query_is_a_clear_error(workspace, cli):
    out = cli(workspace, "query")
    assert out.returncode != 0 and "--queries-from" in out.stderr

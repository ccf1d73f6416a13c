"""fs.read / fs.list / fs.search_rg: what the model can see, and what it cannot."""

from __future__ import annotations

from pathlib import Path

from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.tools.host import ToolHost


async def test_read_returns_a_line_range_and_the_whole_files_hash(host: ToolHost) -> None:
    out = (await host.call("fs.read", {"path": "src/app.py", "start_line": 5, "end_line": 6})).value
    assert out["content"] == "def helper():\n    return 42\n"
    assert (out["start_line"], out["end_line"], out["total_lines"]) == (5, 6, 6)
    assert out["source"] == "disk" and len(out["sha256"]) == 64


async def test_read_sees_the_unsaved_buffer(host: ToolHost, overlay: DocumentOverlay) -> None:
    overlay.set("src/app.py", "def main():\n    return 'unsaved'\n", 12)
    out = (await host.call("fs.read", {"path": "src/app.py"})).value
    assert out["content"] == "def main():\n    return 'unsaved'\n"
    assert (out["source"], out["version"]) == ("buffer", 12)
    overlay.remove("src/app.py")
    assert (await host.call("fs.read", {"path": "src/app.py"})).value["source"] == "disk"


async def test_read_truncates_to_max_bytes(host: ToolHost, workspace: Path) -> None:
    (workspace / "big.txt").write_text("x" * 5000)
    out = (await host.call("fs.read", {"path": "big.txt", "max_bytes": 100})).value
    assert out["truncated"] and len(out["content"]) == 100


async def test_read_refuses_secrets_and_reports_missing_and_binary_files(host: ToolHost, workspace: Path) -> None:
    secret = await host.call("fs.read", {"path": ".env"})
    assert not secret.ok and "deny-list" in secret.error
    missing = await host.call("fs.read", {"path": "src/nope.py"})
    assert not missing.ok and "does not exist" in missing.error
    (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00\x01")
    binary = await host.call("fs.read", {"path": "blob.bin"})
    assert not binary.ok and "not UTF-8" in binary.error
    directory = await host.call("fs.read", {"path": "src"})
    assert not directory.ok and "directory" in directory.error


async def test_list_is_gitignore_aware_and_hides_denied_files(host: ToolHost, workspace: Path) -> None:
    (workspace / "src" / "new_untracked.py").write_text("")
    files = (await host.call("fs.list", {})).value["files"]
    assert files == [".gitignore", "README.md", "src/app.py", "src/new_untracked.py"]
    py = (await host.call("fs.list", {"glob": "*.py"})).value
    assert py["files"] == ["src/app.py", "src/new_untracked.py"] and not py["truncated"]
    limited = (await host.call("fs.list", {"limit": 1})).value
    assert limited["truncated"] and limited["total"] == 4


async def test_list_without_git_uses_gitignore_files(tmp_path: Path) -> None:
    from deepseek_ls.tools.fs import workspace_files

    (tmp_path / "pkg" / "node_modules").mkdir(parents=True)
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    (tmp_path / "pkg" / ".gitignore").write_text("node_modules/\n")
    (tmp_path / "pkg" / "node_modules" / "dep.js").write_text("")
    (tmp_path / "pkg" / "index.js").write_text("")
    (tmp_path / "scratch.tmp").write_text("")
    assert workspace_files(tmp_path) == [".gitignore", "pkg/.gitignore", "pkg/index.js"]


async def test_search_finds_matches_and_skips_ignored_and_denied_files(host: ToolHost) -> None:
    out = (await host.call("fs.search_rg", {"query": "hello"})).value
    assert out["matches"] == [{"path": "src/app.py", "line": 2, "text": "    return 'hello'"}]  # not debug.log, not .env


async def test_search_options_and_globs(host: ToolHost, workspace: Path) -> None:
    (workspace / "notes.md").write_text("call main() here\nMAIN again\n")
    fixed = (await host.call("fs.search_rg", {"query": "main() h", "fixed_strings": True})).value["matches"]
    assert [(m["path"], m["line"]) for m in fixed] == [("notes.md", 1)]
    ci = (await host.call("fs.search_rg", {"query": "main", "case_insensitive": True, "globs": ["*.md"]})).value
    assert [m["line"] for m in ci["matches"]] == [1, 2]


async def test_search_sees_unsaved_buffers(host: ToolHost, overlay: DocumentOverlay) -> None:
    overlay.set("src/app.py", "def main():\n    return 'goodbye'\n", 3)
    assert (await host.call("fs.search_rg", {"query": "hello"})).value["matches"] == []
    hits = (await host.call("fs.search_rg", {"query": "goodbye"})).value["matches"]
    assert hits == [{"path": "src/app.py", "line": 2, "text": "    return 'goodbye'"}]


async def test_search_query_cannot_smuggle_flags(host: ToolHost, workspace: Path) -> None:
    (workspace / "evil.sh").write_text("#!/bin/sh\ntouch pwned\n")
    out = await host.call("fs.search_rg", {"query": "--pre=./evil.sh"})
    assert out.ok and out.value["matches"] == []
    assert not (workspace / "pwned").exists()


async def test_search_stops_at_the_limit_in_path_order(host: ToolHost, workspace: Path) -> None:
    for name in ("b.txt", "a.txt", "c.txt"):
        (workspace / name).write_text("needle\n" * 50)
    out = (await host.call("fs.search_rg", {"query": "needle", "limit": 60})).value
    assert out["truncated"] and len(out["matches"]) == 60
    assert [m["path"] for m in out["matches"]] == ["a.txt"] * 50 + ["b.txt"] * 10


async def test_search_with_an_invalid_regex_says_so(host: ToolHost) -> None:
    out = await host.call("fs.search_rg", {"query": "foo(("})
    assert not out.ok and "rg failed" in out.error and "regex" in out.error.lower()

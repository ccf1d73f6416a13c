"""A custom command's allowed-tools narrow the tool host: only those tools are offered, any other call
is refused before it runs, and `Bash(git log:*)` lets through only commands starting with `git log`."""

from __future__ import annotations

from pathlib import Path

from deepseek_ls.tools.host import ToolHost


async def test_no_unapproved_exec_outside_a_commands_allowed_tools(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    (tmp_path / "victim").write_text("keep me\n")
    host = ToolHost(tmp_path, limit={"tools": ["fs.read", "bash.run"], "bash_prefixes": ["git log"]})
    assert [t.name for t in host.tools()] == ["fs.read", "bash.run"]
    assert (await host.call("fs.read", {"path": "a.txt"})).ok
    listed = await host.call("fs.list", {"glob": "*"})
    assert not listed.ok and "fs.list is not among the tools this custom command allows" in listed.error
    removed = await host.call("bash.run", {"cmd": "rm victim"})
    assert not removed.ok and "only the commands starting with: git log" in removed.error
    assert (tmp_path / "victim").exists()


def test_without_a_limit_every_tool_is_offered(tmp_path: Path) -> None:
    names = [t.name for t in ToolHost(tmp_path).tools()]
    assert {"fs.read", "fs.list", "bash.run", "patch.stage"} <= set(names) and "skill.load" not in names

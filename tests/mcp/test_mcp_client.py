"""The MCP client against real servers we did not write: start, list, call, and every bad case.

Servers: `mcp-server-time` and `mcp-server-git` (PyPI, stdio) and
`@modelcontextprotocol/server-everything` (npm) over stdio and streamable HTTP.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from mcp_kit import children_running, watch_tool_calls
from deepseek_ls.config_models import McpConfig, McpServerConfig
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.client import McpCallError, McpUnavailable
from deepseek_ls.tools.mcp.provider import render_result
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec


def manager(tmp_path: Path, config: McpConfig | None = None, **servers: McpServerConfig) -> McpManager:
    specs = McpServerSet({name: McpServerSpec(name, cfg, "test", "user") for name, cfg in servers.items()})
    return McpManager(tmp_path, specs, config or McpConfig(restart_backoff_seconds=0.05), log_dir=tmp_path / "logs")


async def test_time_server_lists_read_only_tools_and_answers(tmp_path, time_server):
    m = manager(tmp_path, time=McpServerConfig(command=time_server))
    try:
        tools, problems = await m.list_tools()
        assert problems == []
        by_name = {t.name: t for t in tools}
        assert {"get_current_time", "convert_time"} <= set(by_name)
        assert by_name["get_current_time"].read_only and "timezone" in by_name["get_current_time"].input_schema["properties"]
        result = render_result(await m.call("time", "get_current_time", {"timezone": "Asia/Shanghai"}), 32_000)
        assert '"timezone": "Asia/Shanghai"' in result["text"] and not result["is_error"]
    finally:
        await m.aclose()
    assert m.connections["time"].state == "stopped"


async def test_git_server_reads_a_repository(tmp_path, git_server):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "hello.txt").write_text("hi\n")
    m = manager(tmp_path, git=McpServerConfig(command=git_server, args=["--repository", str(repo)]))
    try:
        tools, _ = await m.list_tools()
        assert "git_status" in {t.name for t in tools}
        result = render_result(await m.call("git", "git_status", {"repo_path": str(repo)}), 32_000)
        assert "hello.txt" in result["text"]
    finally:
        await m.aclose()


async def test_everything_over_stdio_text_image_and_oversized_results(tmp_path, everything_js):
    m = manager(tmp_path, McpConfig(max_result_bytes=1000), every=McpServerConfig(command="node", args=[everything_js, "stdio"]))
    try:
        tools, _ = await m.list_tools()
        names = {t.name: t for t in tools}
        assert names["echo"].read_only and not names["toggle-simulated-logging"].read_only
        echoed = render_result(await m.call("every", "echo", {"message": "héllo"}), 1000)
        assert echoed["text"] == "Echo: héllo" and not echoed["truncated"]
        image = render_result(await m.call("every", "get-tiny-image", {}), 1000)
        assert "[image (image/png" in image["text"] and "base64" not in image["text"]
        big = render_result(await m.call("every", "echo", {"message": "x" * 50_000}), 1000)
        assert big["truncated"] and len(big["text"].encode()) < 1200 and "bytes cut" in big["text"]
    finally:
        await m.aclose()


async def test_everything_over_streamable_http(tmp_path, everything_http):
    m = manager(tmp_path, web=McpServerConfig(type="http", url=everything_http, headers={"X-Test": "${MCP_TEST_HEADER:-1}"}))
    try:
        tools, problems = await m.list_tools()
        assert problems == [] and "get-sum" in {t.name for t in tools}
        result = render_result(await m.call("web", "get-sum", {"a": 2, "b": 40}), 32_000)
        assert "42" in result["text"]
    finally:
        await m.aclose()


async def test_a_server_that_does_not_start_is_a_clear_problem_not_a_crash(tmp_path):
    m = manager(tmp_path, gone=McpServerConfig(command=str(tmp_path / "no-such-server")))
    tools, problems = await m.list_tools()
    assert tools == [] and len(problems) == 1
    assert "'gone' could not start" in problems[0]
    with pytest.raises(McpUnavailable):
        await m.call("gone", "anything", {})
    await m.aclose()


async def test_a_server_that_speaks_garbage_fails_its_start_within_the_timeout(tmp_path):
    script = tmp_path / "garbage.py"
    script.write_text("import sys, time\nprint('this is not JSON-RPC', flush=True)\ntime.sleep(60)\n")
    import sys

    m = manager(tmp_path, bad=McpServerConfig(command=sys.executable, args=[str(script)], startup_timeout_seconds=2))
    tools, problems = await m.list_tools()
    assert tools == [] and problems and "'bad'" in problems[0]
    await m.aclose()
    assert children_running(str(script)) == []


async def test_killed_mid_call_gives_a_tool_error_then_restarts(tmp_path, everything_js, monkeypatch):
    marker = f"--marker-{uuid.uuid4().hex}"
    m = manager(tmp_path, every=McpServerConfig(command="node", args=[everything_js, "stdio", marker]))
    calling = watch_tool_calls(monkeypatch)
    try:
        await m.list_tools()
        call = asyncio.create_task(m.call("every", "trigger-long-running-operation", {"duration": 20, "steps": 5}))
        await asyncio.wait_for(calling.wait(), 60)
        pids = children_running(marker)
        assert pids, "the server process was not found"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(McpCallError, match="'every'"):
            await asyncio.wait_for(call, 30)
        # The next call restarts the server and works.
        result = render_result(await m.call("every", "echo", {"message": "back"}), 32_000)
        assert result["text"] == "Echo: back"
        assert m.connections["every"].starts == 2
    finally:
        await m.aclose()
    assert children_running(marker) == []


async def test_a_hanging_call_times_out_and_the_server_is_restarted(tmp_path, everything_js):
    marker = f"--marker-{uuid.uuid4().hex}"
    m = manager(tmp_path, every=McpServerConfig(command="node", args=[everything_js, "stdio", marker], timeout_seconds=1))
    try:
        await m.list_tools()
        first_pids = children_running(marker)
        with pytest.raises(McpCallError, match="timed out after 1 s"):
            await m.call("every", "trigger-long-running-operation", {"duration": 30, "steps": 3})
        assert all(pid not in children_running(marker) for pid in first_pids), "the hung server was left running"
        assert render_result(await m.call("every", "echo", {"message": "ok"}), 32_000)["text"] == "Echo: ok"
    finally:
        await m.aclose()
    assert children_running(marker) == []


async def test_a_server_error_is_a_tool_error_and_the_connection_stays(tmp_path, everything_js):
    m = manager(tmp_path, every=McpServerConfig(command="node", args=[everything_js, "stdio"]))
    try:
        await m.list_tools()
        # The server answers an unknown tool with an error result (`isError`), not a protocol error.
        answer = render_result(await m.call("every", "no-such-tool", {}), 32_000)
        assert answer["is_error"] and "no-such-tool" in answer["text"]
        assert render_result(await m.call("every", "echo", {"message": "still here"}), 32_000)["text"] == "Echo: still here"
        assert m.connections["every"].starts == 1
    finally:
        await m.aclose()


async def test_restarts_are_bounded(tmp_path):
    import sys

    script = tmp_path / "dies.py"
    script.write_text("raise SystemExit(3)\n")
    m = manager(tmp_path, McpConfig(max_restarts=2, restart_backoff_seconds=0.01),
                dies=McpServerConfig(command=sys.executable, args=[str(script)], startup_timeout_seconds=5))
    for _ in range(3):
        _, problems = await m.list_tools()
        assert problems
    assert m.connections["dies"].state == "failed"
    _, problems = await m.list_tools()
    assert "gave up after 3 failure(s)" in problems[0]
    await m.aclose()


async def test_allow_and_deny_lists_filter_the_offer_and_the_calls(tmp_path, everything_js):
    m = manager(tmp_path, every=McpServerConfig(command="node", args=[everything_js, "stdio"],
                                                allow_tools=["echo", "get-sum"], deny_tools=["get-sum"]))
    try:
        tools, _ = await m.list_tools()
        assert [t.name for t in tools] == ["echo"]
        with pytest.raises(McpCallError, match="not allowed"):
            await m.call("every", "get-sum", {"a": 1, "b": 2})
    finally:
        await m.aclose()

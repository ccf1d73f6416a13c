"""ToolHost: schemas, argument validation, journaling and read-only mode."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tools_helpers import build_host

from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI


def test_schemas_are_openai_functions_with_valid_names(host: ToolHost) -> None:
    schemas = host.schemas()
    names = [s["function"]["name"] for s in schemas]
    assert {"fs_read", "fs_list", "fs_search_rg", "git_status", "git_diff", "git_show", "repo_info",
            "index_query", "patch_stage", "patch_apply", "bash_run"} == set(names)
    for schema in schemas:
        assert schema["type"] == "function"
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", schema["function"]["name"])
        assert schema["function"]["parameters"]["type"] == "object"
        json.dumps(schema)  # serialisable as a request body
    read = next(s for s in schemas if s["function"]["name"] == "fs_read")
    assert read["function"]["parameters"]["required"] == ["path"]


def test_read_only_schemas_offer_no_write_or_exec_tools(host: ToolHost) -> None:
    names = {s["function"]["name"] for s in host.schemas(read_only=True)}
    assert "patch_apply" not in names and "bash_run" not in names and "patch_stage" not in names
    assert "fs_read" in names


async def test_a_call_is_journaled_as_proposed_then_result(host: ToolHost, sink: ListSink) -> None:
    outcome = await host.call("fs_read", '{"path": "README.md"}', call_id="call-1")
    assert outcome.ok and outcome.value["content"] == "# Demo\n"
    assert sink.kinds() == ["ToolProposed@v1", "ToolResult@v1"]
    assert sink.events[0][1]["call_id"] == "call-1" and sink.events[0][1]["tool"] == "fs.read"
    assert sink.events[1][1]["ok"] is True


async def test_invalid_arguments_are_explained_and_nothing_runs(host: ToolHost, sink: ListSink) -> None:
    outcome = await host.call("fs.read", {"start_line": 0})
    assert not outcome.ok
    assert "path: Field required" in outcome.error and "start_line" in outcome.error
    bad_json = await host.call("fs.read", "{path: README.md")
    assert not bad_json.ok and "not valid JSON" in bad_json.error
    not_object = await host.call("fs.read", "[1, 2]")
    assert not not_object.ok and "JSON object" in not_object.error


async def test_unknown_tool_lists_the_available_ones(host: ToolHost) -> None:
    outcome = await host.call("fs.write", {"path": "x"})
    assert not outcome.ok and "unknown tool 'fs.write'" in outcome.error and "fs.read" in outcome.error


async def test_read_only_host_refuses_write_tools_at_call_time(workspace: Path, sink: ListSink) -> None:
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), read_only=True)
    outcome = await host.call("bash.run", {"cmd": "git status"})
    assert not outcome.ok and "read-only" in outcome.error


async def test_secrets_in_tool_results_are_redacted_in_events(host: ToolHost, sink: ListSink, workspace: Path) -> None:
    key = "sk-" + "0123456789abcdef0123456789abcdef"
    (workspace / "src" / "conf.py").write_text(f"KEY = '{key}'\n")
    outcome = await host.call("fs.read", {"path": "src/conf.py"})
    assert key in outcome.value["content"]  # the tool itself returns the file
    assert key not in json.dumps(sink.events)  # the journal does not keep it


async def test_tool_results_serialise_for_the_model(host: ToolHost) -> None:
    ok = await host.call("repo.info", {})
    assert json.loads(ok.to_content())["git"] is True
    bad = await host.call("fs.read", {"path": "/etc/passwd"})
    assert "absolute paths are refused" in json.loads(bad.to_content())["error"]


async def test_index_query_uses_the_real_code_index(workspace: Path, sink: ListSink) -> None:
    from deepseek_ls.index.code_index import CodeIndex

    (workspace / "src" / "helpers.py").write_text("def helper_total(values):\n    return sum(values)\n")
    (workspace / ".env").write_text("helper_total=sk-not-for-the-model\n")
    index = CodeIndex(workspace, workspace / ".deepseek")
    index.build()
    host = build_host(workspace, sink=sink, ui=AutoApproveUI(), index=index)
    outcome = await host.call("index.query", {"q": "helper_total"})
    assert outcome.ok, outcome.error
    paths = [h["path"] for h in outcome.value["hits"]]
    assert paths and paths[0] == "src/helpers.py"
    assert outcome.value["hits"][0]["lines"] == [{"line": 1, "text": "def helper_total(values):"}]
    json.dumps(outcome.value)  # serialised for the model as it is
    assert ".env" not in paths  # deny-listed files never reach the model
    no_index = await build_host(workspace, sink=sink, ui=AutoApproveUI()).call("index.query", {"q": "x"})
    assert not no_index.ok and "not available" in no_index.error

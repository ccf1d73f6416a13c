"""MCP in the editor: a repository's `.mcp.json` waits for approval asked through
`window/showMessageRequest`; once approved, the planner is offered its tools and calls one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lsp_harness import file_uri, open_doc, run, APP

from deepseek_ls.lsp import names

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")
PLAN = "```json\n" + json.dumps({
    "goal": "g", "assumptions": [], "risk_notes": [], "confidence": 0.9,
    "steps": [{"title": "Fix add", "intent": "edit", "files": ["app.py"]}],
    "verification": ["python -m pytest -q -k add"],
}) + "\n```"


async def test_repository_mcp_servers_wait_for_approval_then_serve_the_planner(agent_editor, app_workspace, fake_deepseek):
    client, state = agent_editor
    canary = app_workspace.parent / "started"
    (app_workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": TIME_SERVER},
        "planted": {"command": sys.executable, "args": ["-c", f"open({str(canary)!r}, 'w').write('ran')"]},
    }}))
    status = await run(client, names.CMD_MCP_STATUS, {"start": True})
    assert {r["name"]: r["approved"] for r in status["servers"]} == {"planted": False, "time": False}
    assert {p["name"] for p in status["pending"]} == {"planted", "time"} and not canary.exists()

    # Planning before approval: the servers stay off and the person is told why.
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP, version=1)
    await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "uri": uri})
    planner_tools = {t["function"]["name"] for t in fake_deepseek.requests[-1].body["tools"]}
    assert not any(name.startswith("mcp_") for name in planner_tools) and not canary.exists()
    streamed = json.dumps(state.notifications.get(names.NOTIFY_STREAM, []))
    assert "not approved" in streamed

    # "Not now" approves nothing; "Approve" shows exactly what runs, and the next plan uses the tools.
    state.message_answer = lambda params: "Not now"
    assert (await run(client, names.CMD_MCP_APPROVE, {}))["approved"] == []
    state.message_answer = lambda params: "Approve"
    approved = await run(client, names.CMD_MCP_APPROVE, {})
    assert sorted(approved["approved"]) == ["planted", "time"]
    asked = state.message_requests[-1]
    assert TIME_SERVER in asked.message and sys.executable in asked.message

    fake_deepseek.add({"match": {"role": "planner", "last_role": "user"},
                       "tool_calls": [{"name": "mcp_time_get_current_time", "arguments": {"timezone": "UTC"}}]})
    fake_deepseek.add({"match": {"role": "planner", "last_role": "tool"}, "content": PLAN})
    await run(client, names.CMD_PLAN, {"prompt": "make test_add pass again", "uri": uri})
    tool_answer = [m for m in fake_deepseek.requests[-1].body["messages"] if m.get("role") == "tool"]
    assert tool_answer and '"timezone": "UTC"' in json.loads(tool_answer[0]["content"])["value"]["text"]
    status = await run(client, names.CMD_MCP_STATUS, {})
    rows = {r["name"]: r for r in status["servers"]}
    assert rows["time"]["state"] == "ready" and rows["time"]["approved"]
    assert {"name": "mcp_time_get_current_time", "read_only": True} in rows["time"]["offered"]

"""The whole editor flow against the real agent and the fake DeepSeek on loopback:
plan → step lenses on the right line → run step → hunk lenses → accept one hunk,
reject the other → the client received exactly the accepted edit with the right
version → save → verification → lenses show the step done."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_harness import APP, edited_text, expected_version, file_uri, lenses, open_doc, run, wait_until
from lsprotocol import types

from deepseek_ls.lsp import names

PLAN = {
    "goal": "make test_add pass",
    "assumptions": [],
    "steps": [{"title": "Fix `add` to return the sum", "intent": "edit", "files": ["app.py"]}],
    "verification": ["python -m pytest -q"],
    "risk_notes": [],
    "confidence": 0.9,
}
TWO_HUNKS = """```diff
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    return "Hello " + name
+    return "Hello, " + name + "!"
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```"""
BUFFER_FIX = """```diff
--- a/app.py
+++ b/app.py
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a * b
+    return a + b
```"""


async def test_plan_run_accept_reject_verify(agent_editor, fake_deepseek, app_workspace: Path, client_name: str) -> None:
    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": TWO_HUNKS})
    uri = file_uri(app_workspace)
    open_doc(client, uri, APP, version=1)

    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "uri": uri})
    session_id = planned["session_id"]
    (step,) = planned["plan"]["steps"]
    assert step["files"] == ["app.py"]

    # The step's lens sits on `def add` (0-based line 4), the symbol its title names.
    step_lenses = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("▶ Step 1")]
    assert [lens.range.start.line for lens in step_lenses] == [4]
    assert step_lenses[0].command.command == names.CMD_RUN_STEP
    assert list(step_lenses[0].command.arguments) == [{"session_id": session_id, "step_id": step["step_id"]}]
    assert "pending" in step_lenses[0].command.title

    # The plan document exists and carries the same step.
    plan_doc = app_workspace / ".deepseek" / "plans" / f"{session_id}.md"
    assert f"<!-- step_id: {step['step_id']} -->" in plan_doc.read_text()

    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": step["step_id"]})
    assert outcome["status"] == "staged" and len(outcome["patch_ids"]) == 1
    (patch_id,) = outcome["patch_ids"]
    assert any(list(n.uris) == [uri] for n in state.notifications.get("deepseek/hunksChanged", []))

    hunks = await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    greet_hunk, add_hunk = hunks.hunks
    assert (greet_hunk.removed_at, add_hunk.removed_at) == (1, 5)
    titles = {(lens.command.title, lens.range.start.line) for lens in await lenses(client, uri)}
    assert {("Accept", 1), ("Reject", 1), ("Accept", 5), ("Reject", 5)} <= titles

    accepted = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": patch_id, "hunk_id": add_hunk.hunk_id})
    assert accepted["applied"] is True
    await run(client, names.CMD_REJECT_HUNK, {"patch_id": patch_id, "hunk_id": greet_hunk.hunk_id})

    assert len(state.applied_edits) == 1
    after, version = edited_text(APP, state.applied_edits[0])
    assert version == expected_version(client_name, 1)
    assert after == APP.replace("return a - b", "return a + b")  # exactly the accepted hunk

    # The editor applies and saves; the server verifies (pytest) and the step is done.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=after)],
        )
    )
    (app_workspace / "app.py").write_text(after)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))

    completed = await wait_until(
        lambda: [s for s in state.notifications.get("deepseek/status", []) if s.state == "Completed"], timeout=60
    )
    assert completed[-1].session_id == session_id
    step_lenses = [lens for lens in await lenses(client, uri) if lens.command.title.startswith("▶ Step 1")]
    assert "done" in step_lenses[0].command.title
    assert step_lenses[0].command.command == names.CMD_SHOW_PLAN
    assert any("verification passed" in m.message for m in client.messages)
    assert "✓ done" in plan_doc.read_text()
    if client_name == "visual-studio-code":  # the only one of the two that supports it
        assert state.lens_refreshes > 0
    # The agent's own progress (each model call, verification) reached $/progress, begun and ended.
    titles = {reports[0].title: reports[-1] for reports in client.progress_reports.values() if reports}
    assert any(t.startswith("planner: asking") for t in titles)
    assert any(t.startswith("verifying") for t in titles)
    assert all(isinstance(last, types.WorkDoneProgressEnd) for last in titles.values())


async def test_failing_llm_call_is_reported_and_server_keeps_serving(
    agent_editor, fake_deepseek, app_workspace: Path
) -> None:
    client, _ = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "fault": {"status": 401}})
    try:
        await run(client, names.CMD_PLAN, {"prompt": "make test_add pass"})
        raise AssertionError("the plan command should have failed")
    except Exception as error:  # noqa: BLE001 - checked below
        assert "401" in str(error) or "API key" in str(error) or "auth" in str(error).lower()
    shown = await wait_until(lambda: [m for m in client.messages if m.type == types.MessageType.Error])
    assert "deepseek-ls" in shown[0].message
    # Still serving: the next request works.
    status = await client.protocol.send_request_async(names.REQ_STATUS, {})
    assert status.state in ("Idle", "Paused", "Failed")
    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds."})
    selection = {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}}
    answer = await run(client, names.CMD_ASK, {"prompt": "what does add do?", "uri": file_uri(app_workspace), "range": selection})
    assert answer["content"] == "It adds."
    asked = json.dumps([r.body for r in fake_deepseek.requests if r.role == "ask"][-1])
    assert "def add(a, b):" in asked and "def greet" not in asked  # the selection is the context


async def test_the_agent_reads_the_unsaved_buffer_not_the_disk(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    client, state = agent_editor
    unsaved = APP.replace("return a - b", "return a * b")
    uri = file_uri(app_workspace)
    open_doc(client, uri, unsaved, version=4)
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    # A diff against the buffer: it could not be staged against the file on disk.
    fake_deepseek.add({"match": {"role": "executor"}, "content": BUFFER_FIX})
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "uri": uri})
    step_id = planned["plan"]["steps"][0]["step_id"]
    outcome = await run(client, names.CMD_RUN_STEP, {"session_id": planned["session_id"], "step_id": step_id})
    assert outcome["status"] == "staged"
    executor_request = json.dumps([r.body for r in fake_deepseek.requests if r.role == "executor"][0])
    assert "return a * b" in executor_request and "return a - b" not in executor_request
    (hunk,) = (await client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})).hunks
    result = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": outcome["patch_ids"][0], "hunk_id": hunk.hunk_id})
    assert result["applied"] is True
    after, _ = edited_text(unsaved, state.applied_edits[0])
    assert after == APP.replace("return a - b", "return a + b")
    assert (app_workspace / "app.py").read_text() == APP  # the server never wrote the file


async def test_status_is_pushed_on_every_transition(agent_editor, fake_deepseek, app_workspace: Path) -> None:
    """`deepseek/status` is sent on each state change the session logs, in order, even when
    states follow each other within milliseconds (a poll would miss them)."""
    from deepseek_ls.store.sessions import SessionStore

    client, state = agent_editor
    fake_deepseek.add({"match": {"role": "planner"}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": TWO_HUNKS})
    planned = await run(client, names.CMD_PLAN, {"prompt": "make test_add pass", "uri": file_uri(app_workspace)})
    session_id = planned["session_id"]
    await run(client, names.CMD_RUN_STEP, {"session_id": session_id, "step_id": planned["plan"]["steps"][0]["step_id"]})

    events = SessionStore(app_workspace / ".deepseek").open(session_id).read()
    logged = [e.payload["to_state"] for e in events if e.kind == "SessionStateChanged@v1"]
    assert logged == ["Planning", "Paused", "ExecutingStep", "AwaitingApproval"]

    def pushed() -> list[str]:
        return [s.state for s in state.notifications.get("deepseek/status", []) if s.session_id == session_id]

    await wait_until(lambda: pushed() and pushed()[-1] == logged[-1])
    seen = iter(pushed())
    assert all(any(s == want for s in seen) for want in logged), (logged, pushed())  # in order, none missing

"""`deepseek.review` in the editor: findings as diagnostics (source "deepseek-review") on their files,
"Apply fix" staging a pending hunk that is then accepted as any hunk, "Dismiss" hiding a finding for
the same code, a new review replacing the old findings. The real server, the fake DeepSeek server."""

from __future__ import annotations

import json
import subprocess

from lsp_harness import (
    decode_code_actions_as_editors_do,
    file_uri,
    lenses,
    open_doc,
    run,
    wait_until,
)
from lsprotocol import types

from deepseek_ls.lsp import names

CHANGED = '''def greet(name):
    return "Hello " + name


def add(a, b):
    return a - b + 0
'''
FIX = "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a - b + 0\n+    return a + b\n"
ON_ADD = {"file": "app.py", "start_line": 6, "end_line": 6, "severity": "error", "category": "bug",
          "message": "add subtracts.", "suggested_fix": FIX}
ON_GREET = {"file": "app.py", "start_line": 2, "severity": "note", "category": "style", "message": "use an f-string"}


def answer(*findings: dict) -> dict:
    return {"match": {"role": "reviewer"}, "content": "```json\n" + json.dumps({"findings": list(findings)}) + "\n```"}


def commit(root) -> None:
    for args in (["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True)


def review_diagnostics(client, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, []) if d.source == names.REVIEW_DIAGNOSTIC_SOURCE]


async def test_review_publishes_findings_and_apply_fix_stages_a_pending_hunk(agent_editor, app_workspace,
                                                                              fake_deepseek):
    client, state = agent_editor
    commit(app_workspace)
    (app_workspace / "app.py").write_text(CHANGED)
    uri = file_uri(app_workspace)
    open_doc(client, uri, CHANGED)
    fake_deepseek.add(answer(ON_ADD, ON_GREET))
    decode_code_actions_as_editors_do(client)
    result = await run(client, names.CMD_REVIEW, {})
    assert result["counts"] == {"error": 1, "warning": 0, "note": 1} and result["findings"][0]["uri"] == uri
    diagnostics = await wait_until(lambda: len(review_diagnostics(client, uri)) == 2 and review_diagnostics(client, uri))
    by_line = {d.range.start.line: d for d in diagnostics}
    assert by_line[5].severity == types.DiagnosticSeverity.Error and by_line[5].code == "bug"
    assert by_line[5].range.end == types.Position(line=5, character=len("    return a - b + 0"))
    assert by_line[1].severity == types.DiagnosticSeverity.Information

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=by_line[5].range,
        context=types.CodeActionContext(diagnostics=[by_line[5]])))
    titles = [a.title for a in actions]
    assert titles == ["Apply fix: add subtracts.", "Dismiss review finding: add subtracts."]
    assert (app_workspace / "app.py").read_text() == CHANGED  # a review writes nothing

    fix = actions[0]
    assert isinstance(fix, types.CodeAction), fix
    staged = await run(client, fix.command.command, fix.command.arguments[0])
    assert staged["uri"] == uri and staged["hunk_ids"]
    shown = [lens.command.title for lens in await lenses(client, uri) if lens.command]
    assert any(t.startswith("Accept") for t in shown) and "Reject" in shown
    accepted = await run(client, names.CMD_ACCEPT_HUNK, {"patch_id": staged["patch_id"], "hunk_id": staged["hunk_ids"][0]})
    assert accepted["applied"] is True
    (edit,) = state.applied_edits
    change = edit.edit.document_changes[0] if edit.edit.document_changes else None
    new_texts = [e.new_text for e in change.edits] if change else [e.new_text for es in edit.edit.changes.values() for e in es]
    assert any("return a + b" in t for t in new_texts)


async def test_dismiss_hides_a_finding_and_a_new_review_replaces_the_old(agent_editor, app_workspace, fake_deepseek):
    client, _ = agent_editor
    commit(app_workspace)
    (app_workspace / "app.py").write_text(CHANGED)
    (app_workspace / "util.py").write_text("def double(x):\n    return x * 3\n")
    uri, util = file_uri(app_workspace), file_uri(app_workspace, "util.py")
    on_util = {"file": "util.py", "start_line": 2, "severity": "warning", "message": "triples"}
    fake_deepseek.add(answer(ON_ADD, on_util))
    first = await run(client, names.CMD_REVIEW, {})
    await wait_until(lambda: review_diagnostics(client, uri) and review_diagnostics(client, util))
    fingerprint = next(f["fingerprint"] for f in first["findings"] if f["file"] == "app.py")
    assert (await run(client, names.CMD_DISMISS_FINDING, {"fingerprint": fingerprint}))["dismissed"] is True
    await wait_until(lambda: not review_diagnostics(client, uri))

    fake_deepseek.add(answer(ON_ADD))  # the same finding on the same code: dismissed; util.py: none now
    second = await run(client, names.CMD_REVIEW, {})
    assert second["findings"] == [] and second["dismissed"] == 1
    await wait_until(lambda: not review_diagnostics(client, util))  # the old review's diagnostics are gone
    events = [json.loads(line) for line in (app_workspace / ".deepseek" / "sessions" / first["session_id"]
                                            / "events.jsonl").read_text().splitlines()]
    assert "ReviewFindingDismissed@v1" in [e["kind"] for e in events]


async def test_a_bad_base_is_an_error_naming_it(agent_editor, app_workspace):
    client, _ = agent_editor
    commit(app_workspace)
    try:
        await run(client, names.CMD_REVIEW, {"base": "no-such-branch"})
    except Exception as exc:  # noqa: BLE001 - the JSON-RPC error
        assert "no such revision: 'no-such-branch'" in str(exc)
    else:
        raise AssertionError("a review against a missing base answered without an error")


async def test_never_clobber_apply_fix_the_editor_refuses_then_the_person_rejects(agent_editor, app_workspace,
                                                                                   fake_deepseek):
    """'Apply fix' only stages: the editor saying no to the write leaves the buffer alone and the hunk
    pending, and Reject settles it without any edit."""
    client, state = agent_editor
    commit(app_workspace)
    (app_workspace / "app.py").write_text(CHANGED)
    uri = file_uri(app_workspace)
    open_doc(client, uri, CHANGED)
    fake_deepseek.add(answer(ON_ADD))
    (finding,) = (await run(client, names.CMD_REVIEW, {}))["findings"]
    staged = await run(client, names.CMD_APPLY_REVIEW_FIX, {"fingerprint": finding["fingerprint"]})
    hunk = {"patch_id": staged["patch_id"], "hunk_id": staged["hunk_ids"][0]}
    state.apply_result = False
    refused = await run(client, names.CMD_ACCEPT_HUNK, hunk)
    assert refused["applied"] is False and "the editor did not apply the hunk to app.py" in refused["message"]
    assert (app_workspace / "app.py").read_text() == CHANGED
    state.apply_result = True
    before = len(state.applied_edits)
    rejected = await run(client, names.CMD_REJECT_HUNK, hunk)
    assert rejected["rejected"] is True
    assert len(state.applied_edits) == before  # a rejection edits nothing
    assert (app_workspace / "app.py").read_text() == CHANGED
    assert not [lens for lens in await lenses(client, uri) if lens.command and lens.command.title == "Reject"]

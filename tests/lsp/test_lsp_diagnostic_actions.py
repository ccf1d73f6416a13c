"""Other tools' diagnostics as work for DeepSeek (issue 32 item 4): "DeepSeek: Fix …" plans a fix of the
file, asks before running it and ends in pending hunks; "DeepSeek: Explain …" answers through the ask
path and shows a markdown document (or, without showDocument, a message); the editor's diagnostics sent
with Ask / Plan reach the model; all of it refused on a stale version, switchable, redacted.

Two servers for the module, one fake DeepSeek: Neovim's capabilities (showDocument, answers the
approval as each case says) and a minimal client without showDocument (Helix, eglot).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import (
    ADD_FIX,
    APP,
    EditorState,
    decode_code_actions_as_editors_do,
    file_uri,
    open_doc,
    run,
    script_message_answers,
    set_code_actions,
    start_on_git_workspace,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

pytestmark = pytest.mark.asyncio(loop_scope="module")

KEY = "sk-" + "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a99"  # a DeepSeek-shaped key pasted into the code
PLAN = {"goal": "make add return the sum", "assumptions": [], "confidence": 0.9, "verification": [], "risk_notes": [],
        "steps": [{"title": "Fix `add` to return the sum", "intent": "edit", "files": ["app.py"]}]}
# What pyright would say about line 6 of APP (`    return a - b`), as the editor passes it.
PYRIGHT = types.Diagnostic(
    range=types.Range(start=types.Position(line=5, character=11), end=types.Position(line=5, character=16)),
    message="Operator \"-\" not supported for types \"str\" and \"str\"\n  extra detail line",
    severity=types.DiagnosticSeverity.Error, source="Pyright", code="reportOperatorIssue")
HUNK = types.Diagnostic(range=PYRIGHT.range, message="DeepSeek proposes a change", source=names.HUNK_DIAGNOSTIC_SOURCE)
REVIEW = types.Diagnostic(range=PYRIGHT.range, message="add subtracts", source=names.REVIEW_DIAGNOSTIC_SOURCE)
MINIMAL = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(apply_edit=True, configuration=False),
    text_document=types.TextDocumentClientCapabilities(
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
        code_action=types.CodeActionClientCapabilities(
            code_action_literal_support=types.ClientCodeActionLiteralOptions(
                code_action_kind=types.ClientCodeActionKindOptions(value_set=["", "quickfix"])))))


@dataclass
class Lsp:
    client: Any
    state: EditorState
    root: Path
    fake: FakeDeepSeek
    answer: str | None = "Allow once"  # the approval's answer; "never": not answered
    asked: list[types.ShowMessageRequestParams] = field(default_factory=list)
    version: int = 0

    def open(self, rel: str, text: str) -> str:
        (self.root / rel).write_text(text)
        uri = file_uri(self.root, rel)
        self.version += 1
        open_doc(self.client, uri, text, version=self.version)
        return uri

    async def actions(self, uri: str, *diagnostics: types.Diagnostic) -> list[types.CodeAction]:
        found = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=PYRIGHT.range,
            context=types.CodeActionContext(diagnostics=list(diagnostics))))
        return list(found or [])

    async def invoke(self, action: types.CodeAction) -> Any:
        return await asyncio.wait_for(run(self.client, action.command.command, action.command.arguments[0]), 120)

    def bodies(self, since: int, role: str | None = None) -> list[str]:
        """The completion requests' bodies since `since` (of `role`), as JSON text."""
        return [json.dumps(r.body) for r in self.fake.requests[since:]
                if r.endpoint != "models" and (role is None or r.role == role)]

    async def settings(self, **code_actions: bool) -> None:
        await set_code_actions(self.client, **code_actions)


async def start(tmp: Path, fake: FakeDeepSeek, capabilities: types.ClientCapabilities | None) -> Lsp:
    root, client, state = await start_on_git_workspace(tmp, fake, capabilities=capabilities)
    decode_code_actions_as_editors_do(client)
    lsp = Lsp(client, state, root, fake)
    lsp.never = script_message_answers(client, lsp)  # type: ignore[attr-defined]
    return lsp


@pytest.fixture(scope="module")
def fake():
    server = FakeDeepSeek().start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def serving(fake: FakeDeepSeek, tmp: Path, capabilities: types.ClientCapabilities | None):
    shared = await start(tmp, fake, capabilities)
    try:
        yield shared
    finally:
        shared.never.set()  # type: ignore[attr-defined]
        await shared.client.shutdown_session()
        await shared.client.stop()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def nvim(fake, tmp_path_factory: pytest.TempPathFactory):
    async with serving(fake, tmp_path_factory.mktemp("diag-nvim"), None) as shared:
        yield shared


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def minimal(fake, tmp_path_factory: pytest.TempPathFactory):
    async with serving(fake, tmp_path_factory.mktemp("diag-minimal"), MINIMAL) as shared:
        yield shared


async def git_status(root: Path) -> str:
    done = await asyncio.to_thread(subprocess.run, ["git", "status", "--porcelain", "--untracked-files=all"],
                                   cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def planned(fake: FakeDeepSeek, goal: str) -> None:
    fake.add({"match": {"role": "planner", "contains": goal}, "content": "```json\n" + json.dumps(PLAN) + "\n```"})


async def test_fix_and_explain_are_offered_for_foreign_diagnostics_only(minimal):
    uri = minimal.open("app.py", APP)
    assert await minimal.actions(uri) == []
    assert await minimal.actions(uri, HUNK, REVIEW) == []
    fix, explain = await minimal.actions(uri, HUNK, PYRIGHT)
    assert fix.title == 'DeepSeek: Fix Operator "-" not supported for types "str" and "str"'
    assert explain.title.startswith("DeepSeek: Explain Operator")
    assert fix.kind == explain.kind == types.CodeActionKind.QuickFix and list(fix.diagnostics) == [PYRIGHT]
    assert (fix.command.command, explain.command.command) == (names.CMD_FIX_DIAGNOSTIC, names.CMD_EXPLAIN_DIAGNOSTIC)
    args = fix.command.arguments[0]
    assert args["uri"] == uri and args["version"] == minimal.version
    assert args["diagnostic"]["code"] == "reportOperatorIssue" and args["range"]["start"] == {"line": 5, "character": 11}
    long = types.Diagnostic(range=PYRIGHT.range, message="x" * 300)
    (fix, _) = await minimal.actions(uri, long)
    assert len(fix.title) < 80 and fix.title.endswith("…")


async def test_setting_off_offers_nothing(minimal):
    uri = minimal.open("app.py", APP)
    await minimal.settings(diagnostic_actions=False)
    try:
        assert await minimal.actions(uri, PYRIGHT) == []
    finally:
        await minimal.settings(diagnostic_actions=True)
    assert len(await minimal.actions(uri, PYRIGHT)) == 2


async def test_an_editor_asking_only_for_quick_fixes_gets_fix_and_explain(minimal):
    """`context.only` (Neovim's `code_action({context = {only = {"quickfix"}}})`, VS Code's quick-fix
    menu) is matched against the kinds' values, so the quick fixes are offered and nothing else is."""
    uri = minimal.open("app.py", APP)

    async def only(*kinds: str) -> list[types.CodeAction]:
        found = await minimal.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=PYRIGHT.range,
            context=types.CodeActionContext(diagnostics=[PYRIGHT], only=list(kinds))))
        return list(found or [])

    assert [a.title.split(" ")[1] for a in await only("quickfix")] == ["Fix", "Explain"]
    assert await only("refactor") == []


async def test_fix_plans_with_the_diagnostic_and_ends_in_pending_hunks(nvim):
    uri = nvim.open("app.py", APP)
    nvim.answer, nvim.asked[:] = "Allow once", []
    planned(nvim.fake, "reportOperatorIssue")
    nvim.fake.add({"match": {"role": "executor"}, "content": ADD_FIX})
    since = len(nvim.fake.requests)
    told = len(nvim.state.notifications.get(names.NOTIFY_ATTENTION, []))
    fix, _ = await nvim.actions(uri, PYRIGHT)
    result = await nvim.invoke(fix)
    assert result["ran"] is True and result["step"]["status"] == "staged", result
    (request,) = nvim.asked
    assert "Run DeepSeek's plan for: fix Operator" in request.message and "app.py" in request.message
    assert request.actions[0].title == "Allow once"
    # The question is a wait like every approval: the editor's badge and notification are told.
    waits = [a for a in nvim.state.notifications[names.NOTIFY_ATTENTION][told:] if a.kind == "waiting"]
    assert any(a.message.startswith("waits for your approval: Run DeepSeek's plan for: fix Operator")
               and a.pending == 1 and a.session_id == result["session_id"] for a in waits), waits
    planner = next(b for b in nvim.bodies(since) if "reportOperatorIssue" in b)
    for said in ('Operator \\"-\\" not supported', "reportOperatorIssue", "Pyright", "    return a - b", "def add(a, b):"):
        assert said in planner, said
    hunks = await nvim.client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    assert len(hunks.hunks) == 1 and (nvim.root / "app.py").read_text() == APP  # pending, not written
    await run(nvim.client, names.CMD_REJECT_ALL, {})


@pytest.mark.parametrize("answer", ["Deny", None, "never"], ids=["deny", "dismissed", "no-answer"])
async def test_no_unapproved_exec_fix_refused_runs_nothing(nvim, answer):
    uri = nvim.open("app.py", APP)
    nvim.answer, nvim.asked[:] = answer, []
    planned(nvim.fake, "reportOperatorIssue")
    since = len(nvim.fake.requests)
    fix, _ = await nvim.actions(uri, PYRIGHT)
    result = await nvim.invoke(fix)
    assert result["ran"] is False and result["answer"] == {"Deny": "deny", None: "cancel", "never": "timeout"}[answer]
    assert len(nvim.asked) == 1
    assert nvim.bodies(since, "executor") == []  # the step never ran
    hunks = await nvim.client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    assert hunks.hunks == [] and (nvim.root / "app.py").read_text() == APP


async def test_a_stale_version_is_refused(nvim):
    uri = nvim.open("app.py", APP)
    fix, explain = await nvim.actions(uri, PYRIGHT)
    nvim.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=nvim.version + 1),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=APP + "\n")]))
    nvim.version += 1
    since = len(nvim.fake.requests)
    for action in (fix, explain):
        with pytest.raises(JsonRpcException, match="changed since the action was offered"):
            await nvim.invoke(action)
    assert nvim.bodies(since) == []


async def test_explain_shows_a_document_and_writes_nothing_else(nvim):
    uri = nvim.open("app.py", APP)
    nvim.fake.add({"match": {"role": "ask", "contains": "Explain this diagnostic"}, "content": "It subtracts **strings**."})
    nvim.client.shown_documents.clear()
    before = await git_status(nvim.root)
    _, explain = await nvim.actions(uri, PYRIGHT)
    result = await nvim.invoke(explain)
    assert result["shown"] is True and [d.uri for d in nvim.client.shown_documents] == [result["uri"]]
    doc = nvim.root / ".deepseek" / "explanations" / f"{result['session_id']}.md"
    assert result["uri"] == file_uri(nvim.root, f".deepseek/explanations/{result['session_id']}.md")
    assert "It subtracts **strings**." in doc.read_text() and "reportOperatorIssue" in doc.read_text()
    assert await git_status(nvim.root) == before  # .deepseek is excluded from git: no file of the project changed
    hunks = await nvim.client.protocol.send_request_async(names.REQ_HUNKS, {"uri": uri})
    assert hunks.hunks == [] and (nvim.root / "app.py").read_text() == APP


async def test_explain_without_show_document_says_it_in_a_message(minimal):
    uri = minimal.open("app.py", APP)
    minimal.fake.add({"match": {"role": "ask", "contains": "Explain this diagnostic"}, "content": "Strings cannot be subtracted."})
    _, explain = await minimal.actions(uri, PYRIGHT)
    result = await minimal.invoke(explain)
    assert result["shown"] is False and minimal.client.shown_documents == []
    assert any("Strings cannot be subtracted." in m.message for m in minimal.client.messages)
    assert any("Strings cannot be subtracted." in m.message for m in minimal.client.log_messages)


async def test_no_leak_fix_prompt_redacts_a_key_at_the_diagnostic(nvim):
    text = APP.replace("    return a - b", f'    token = "{KEY}"\n    return a - b')
    uri = nvim.open("keyed.py", text)
    at = types.Diagnostic(range=types.Range(start=types.Position(line=5, character=4), end=types.Position(line=5, character=9)),
                          message=f"token is unused (value {KEY})", source="Pyright", code="reportUnusedVariable")
    nvim.answer, nvim.asked[:] = "Deny", []
    planned(nvim.fake, "reportUnusedVariable")
    nvim.fake.add({"match": {"role": "ask", "contains": "Explain this diagnostic"}, "content": "unused"})
    since = len(nvim.fake.requests)
    fix, explain = await nvim.actions(uri, at)
    await nvim.invoke(fix)
    await nvim.invoke(explain)
    sent = nvim.bodies(since)
    assert len(sent) == 2 and all("token = " in b for b in sent)  # the code at the range went ...
    assert all(KEY not in b for b in sent)  # ... with the key redacted
    assert all(KEY not in p.read_text() for p in (nvim.root / ".deepseek" / "explanations").glob("*.md"))


async def test_diagnostics_sent_with_ask_reach_the_model(nvim):
    uri = nvim.open("app.py", APP)
    nvim.fake.add({"match": {"role": "ask", "contains": "why does add fail"}, "content": "see the diagnostic"})
    since = len(nvim.fake.requests)
    sent = {"range": {"start": {"line": 5, "character": 11}, "end": {"line": 5, "character": 16}}, "message": "Operator \"-\" not supported", "severity": 1, "source": "Pyright", "code": "reportOperatorIssue"}
    await run(nvim.client, names.CMD_ASK, {"prompt": "why does add fail", "uri": uri, "diagnostics": [sent]})
    (body,) = nvim.bodies(since)
    assert "Diagnostics the editor shows in this file" in body
    assert 'line 6:12: error from Pyright [reportOperatorIssue]: Operator \\"-\\" not supported' in body

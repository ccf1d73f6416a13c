"""Work from a comment (issue 32 item 3): a `deepseek:` comment line gets the code action
"DeepSeek: <instruction>", whose command (`deepseek.edit`) plans on that one file, asks to run the
plan, runs its step and ends in pending hunks that remove the comment; "Edit selection with
DeepSeek…" sends the same command with a range. A comment changed since the action was offered is
refused; every "no" to running the plan runs nothing; `[code_actions] comment_instructions` hides it.

One real server (Neovim's capabilities, a workspace path with a space) and one fake DeepSeek serve
the module; each test tags its model replies so they cannot answer another's.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import (
    BufferEditor,
    EditorState,
    decode_code_actions_as_editors_do,
    file_uri,
    run,
    script_message_answers,
    set_code_actions,
    start_on_git_workspace,
    wait_until,
)
from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

pytestmark = pytest.mark.asyncio(loop_scope="module")

# How the editor answers "Run DeepSeek's plan for: …": as in test_never_hang_lsp_refusals.py.
NO_ANSWERS = [pytest.param("Deny", id="deny-item"), pytest.param(None, id="dismissed"),
              pytest.param("never", id="no-answer"), pytest.param("command", id="deepseek-deny"),
              pytest.param("cancel", id="deepseek-cancel")]
OURS = {"Deny": "deny", None: "cancel", "never": "timeout", "command": "deny", "cancel": "cancel"}


@dataclass
class Lsp:
    client: Any
    state: EditorState
    root: Path
    fake: FakeDeepSeek
    editor: BufferEditor
    answer: str | None = "Allow once"
    asked: list[types.ShowMessageRequestParams] = field(default_factory=list)

    def open(self, rel: str, text: str, language_id: str) -> str:
        """`rel` written and opened in the editor as `language_id`."""
        (self.root / rel).write_text(text)
        uri = file_uri(self.root, rel)
        self.editor.buffers[uri] = (text, 1)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id=language_id, version=1, text=text)))
        return uri

    async def actions(self, uri: str, first: int, last: int | None = None) -> list[types.CodeAction]:
        found = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=first, character=0),
                              end=types.Position(line=first if last is None else last, character=0)),
            context=types.CodeActionContext(diagnostics=[])))
        return [a for a in found or [] if a.command and a.command.command == names.CMD_EDIT]

    def model_asked(self, role: str, tag: str) -> list[Any]:
        return [r for r in self.fake.requests if r.role == role and tag in json.dumps(r.body)]

    def script(self, tag: str, rel: str, diff: str | None) -> None:
        self.fake.add({"match": {"role": "planner", "contains": tag}, "content": "```json\n" + json.dumps({
            "goal": f"do {tag}", "steps": [{"title": f"Do {tag}", "intent": "edit", "files": [rel]}],
            "verification": [], "confidence": 0.9}) + "\n```"})
        if diff is not None:
            self.fake.add({"match": {"role": "executor", "contains": tag}, "content": f"```diff\n{diff}```"})

    async def answered(self, work: Any) -> Any:
        """Run `work` while the person answers the run question as `answer` says (`command`: with
        `deepseek.deny` once it is asked; `cancel`: with `deepseek.cancel {}`, as the editors' Cancel
        does; `never`: not at all, the 1 s wait runs out)."""
        task = asyncio.ensure_future(work)
        if self.answer in ("command", "cancel"):
            await wait_until(lambda: self.asked or task.done())
            (pending,) = (await self.client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})).approvals
            assert pending.kind == "plan.execute"
            if self.answer == "command":
                await run(self.client, names.CMD_DENY, {"request_id": pending.request_id})
            else:
                assert (await run(self.client, names.CMD_CANCEL, {}))["cancelled"] is True
        return await asyncio.wait_for(task, 120)

    async def settings(self, **code_actions: bool) -> None:
        await set_code_actions(self.client, **code_actions)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lsp(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("comment-actions")
    fake = FakeDeepSeek().start()
    root, client, state = await start_on_git_workspace(tmp, fake)
    decode_code_actions_as_editors_do(client)
    shared = Lsp(client, state, root, fake, BufferEditor(client, state, root))
    never = script_message_answers(client, shared)
    try:
        yield shared
    finally:
        never.set()
        await client.shutdown_session()
        await client.stop()
        fake.stop()


@pytest.fixture
def case(lsp: Lsp) -> Lsp:
    lsp.asked.clear()
    lsp.answer = "Allow once"
    return lsp


SYNTAXES = [
    pytest.param("hash.py", "python", "x = 1\n# deepseek: add a docstring\n", 1, "add a docstring", id="python-hash"),
    pytest.param("slash.ts", "typescript", "let x = 1;\n  //  DeepSeek :  rename x   to count\n", 1,
                 "rename x to count", id="typescript-slashes-spaces-case"),
    pytest.param("dash.lua", "lua", "local x = 1\n-- deepseek: make x a constant\n", 1, "make x a constant", id="lua-dashes"),
    pytest.param("block.c", "c", "int x;\n/* deepseek: use size_t */\n", 1, "use size_t", id="c-block"),
    pytest.param("page.md", "markdown", "# Title\n<!-- deepseek: add an intro -->\n", 1, "add an intro", id="markdown-html"),
    pytest.param("by-name.el", "", "(setq x 1)\n;; deepseek: explain x\n", 1, "explain x", id="lisp-by-extension"),
]


@pytest.mark.parametrize(("rel", "language_id", "text", "line", "instruction"), SYNTAXES)
async def test_a_deepseek_comment_gets_a_code_action_in_its_languages_syntax(
        case: Lsp, rel: str, language_id: str, text: str, line: int, instruction: str) -> None:
    uri = case.open(rel, text, language_id)
    (action,) = await case.actions(uri, line)
    assert action.title == f"DeepSeek: {instruction}" and action.edit is None
    assert list(action.command.arguments) == [{"uri": uri, "line": line, "instruction": instruction, "version": 1}]
    assert await case.actions(uri, 0) == []  # the code line above: nothing


NOT_INSTRUCTIONS = [
    pytest.param("x = '# deepseek: not a comment'\n", id="inside-a-string"),
    pytest.param("call()  # deepseek: after code\n", id="after-code"),
    pytest.param("# deepseek:   \n", id="empty-instruction"),
    pytest.param("# deepseeker: close but no\n", id="another-word"),
    pytest.param("// deepseek: the wrong syntax for python\n", id="foreign-marker"),
]


@pytest.mark.parametrize("text", NOT_INSTRUCTIONS)
async def test_no_action_where_the_line_is_not_a_deepseek_comment(case: Lsp, text: str) -> None:
    uri = case.open(f"not_{uuid.uuid4().hex[:6]}.py", text, "python")
    assert await case.actions(uri, 0) == []


async def test_invoking_it_plans_on_the_file_and_ends_in_pending_hunks_that_remove_the_comment(case: Lsp) -> None:
    tag = uuid.uuid4().hex[:6]
    rel = f"calc_{tag}.py"
    text = f"def add(a, b):\n    # deepseek: fix the sign {tag}\n    return a - b\n"
    case.script(tag, rel, f"--- a/{rel}\n+++ b/{rel}\n@@ -1,3 +1,2 @@\n def add(a, b):\n"
                          f"-    # deepseek: fix the sign {tag}\n-    return a - b\n+    return a + b\n")
    uri = case.open(rel, text, "python")
    (action,) = await case.actions(uri, 0, 2)
    result = await case.answered(run(case.client, action.command.command, action.command.arguments[0]))

    assert result["ran"] is True and result["answer"] == "allow_once" and result["step"]["status"] == "staged"
    (asked,) = case.asked
    assert f"fix the sign {tag}" in asked.message and rel in asked.message
    (planner,) = case.model_asked("planner", tag)
    said = json.dumps(planner.body)
    assert f"line 2 of {rel}" in said and "delete that comment line" in said and f"Change only {rel}" in said
    (executor,) = case.model_asked("executor", tag)  # it sees the plan, not the request: it is told too
    assert "starts with `deepseek:` is a request" in executor.body["messages"][0]["content"]
    # Pending, not applied: the buffer is as it was, the hunk offers Accept / Reject at the comment.
    assert case.state.applied_edits == [] and case.editor.text(rel) == text
    offered = await case.client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(
            start=types.Position(line=1, character=0), end=types.Position(line=1, character=0)),
        context=types.CodeActionContext(diagnostics=[])))
    accept = next(a for a in offered if a.title.startswith("Accept DeepSeek change"))
    assert (await run(case.client, accept.command.command, accept.command.arguments[0]))["applied"] is True
    assert case.editor.text(rel) == "def add(a, b):\n    return a + b\n"
    assert await case.actions(uri, 0, 2) == []  # the comment is gone, and its action with it


async def test_edit_selection_plans_on_the_selected_lines_of_the_file(case: Lsp) -> None:
    tag = uuid.uuid4().hex[:6]
    rel = f"sel_{tag}.py"
    text = "a = 1\nb = 2\nc = 3\n"
    case.script(tag, rel, f"--- a/{rel}\n+++ b/{rel}\n@@ -2,1 +2,1 @@\n-b = 2\n+b = 20\n")
    uri = case.open(rel, text, "python")
    selection = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 5}}
    result = await case.answered(run(case.client, names.CMD_EDIT, {
        "uri": uri, "range": selection, "instruction": f"multiply by ten {tag}", "version": 1}))
    assert result["ran"] is True and result["step"]["status"] == "staged"
    (planner,) = case.model_asked("planner", tag)
    assert f"lines 2-2 of {rel} (the selection)" in json.dumps(planner.body)
    hunks = await case.client.protocol.send_request_async(names.REQ_PENDING_HUNKS, {"session_id": result["session_id"]})
    assert hunks.count == 1 and hunks.files[0].path == rel


async def test_a_comment_changed_since_the_action_was_offered_is_refused_and_nothing_runs(case: Lsp) -> None:
    tag = uuid.uuid4().hex[:6]
    rel = f"stale_{tag}.py"
    case.script(tag, rel, None)
    uri = case.open(rel, f"# deepseek: remove everything {tag}\nx = 1\n", "python")
    (action,) = await case.actions(uri, 0)
    case.editor.type(rel, f"# deepseek: keep everything {tag}\nx = 1\n")  # version 2
    with pytest.raises(Exception, match=r"changed since the action was offered \(document version 1, now 2\): "
                                        rf"it now says “keep everything {tag}”. Nothing was run"):
        await run(case.client, action.command.command, action.command.arguments[0])
    case.editor.type(rel, "x = 1\n")  # version 3: gone
    with pytest.raises(Exception, match="there is no `deepseek:` comment there now"):
        await run(case.client, action.command.command, action.command.arguments[0])
    shown = await wait_until(lambda: [m for m in case.client.messages if "now 2" in m.message])
    assert shown[-1].type == types.MessageType.Error
    assert case.model_asked("planner", tag) == [] and case.asked == []


async def test_an_edit_elsewhere_in_the_buffer_does_not_make_the_comment_stale(case: Lsp) -> None:
    tag = uuid.uuid4().hex[:6]
    rel = f"moved_{tag}.py"
    case.script(tag, rel, None)
    case.answer = "Deny"
    uri = case.open(rel, f"x = 1\n# deepseek: rename x {tag}\n", "python")
    (action,) = await case.actions(uri, 1)
    case.editor.type(rel, f"x = 2\n# deepseek: rename x {tag}\n")
    result = await case.answered(run(case.client, action.command.command, action.command.arguments[0]))
    assert result["ran"] is False and len(case.model_asked("planner", tag)) == 1


@pytest.mark.parametrize("answer", NO_ANSWERS)
async def test_no_unapproved_exec_a_comments_plan_is_not_run_without_a_yes(case: Lsp, answer: str | None) -> None:
    tag = uuid.uuid4().hex[:6]
    rel = f"no_{tag}.py"
    case.script(tag, rel, f"--- a/{rel}\n+++ b/{rel}\n@@ -1,2 +1,1 @@\n-# deepseek: drop y {tag}\n y = 1\n")
    uri = case.open(rel, f"# deepseek: drop y {tag}\ny = 1\n", "python")
    (action,) = await case.actions(uri, 0)
    case.answer = answer
    result = await case.answered(run(case.client, action.command.command, action.command.arguments[0]))

    assert result["ran"] is False and result["answer"] == OURS[answer] and "step" not in result
    assert len(case.asked) == 1 and case.asked[0].message.startswith("Run DeepSeek's plan for: drop y")
    assert case.model_asked("executor", tag) == []  # nothing ran: the model was never asked to change it
    hunks = await case.client.protocol.send_request_async(names.REQ_PENDING_HUNKS, {"session_id": result["session_id"]})
    assert hunks.count == 0 and case.editor.text(rel) == f"# deepseek: drop y {tag}\ny = 1\n"
    told = await wait_until(lambda: [m for m in case.client.messages if f"drop y {tag}" in m.message])
    assert "was not run" in told[-1].message
    assert (await case.client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})).approvals == []


async def test_the_setting_hides_the_comment_action(case: Lsp) -> None:
    uri = case.open("switch.py", "# deepseek: something\n", "python")
    try:
        await case.settings(comment_instructions=False)
        assert await case.actions(uri, 0) == []
        await case.settings(comment_instructions=True)
        assert len(await case.actions(uri, 0)) == 1
    finally:
        await case.settings(comment_instructions=True)

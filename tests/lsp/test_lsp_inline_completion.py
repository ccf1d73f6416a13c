"""Inline completion over LSP (issue 32 item 5): the real server, the fake DeepSeek's FIM endpoint.

One server for the module (Neovim's capabilities); each test sets the settings it needs with
`workspace/didChangeConfiguration` and opens its own document. Contracts: advertised in
`initialize`; a FIM model's suggestion, priced in the ledger; typing through a shown suggestion
asks nothing; a newer request, and `$/cancelRequest`, close the older HTTP request before its
answer; a model without FIM is said once and asked nothing; plain completion items only when
opted into; what is sent is redacted, and a secret file is never sent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsp_harness import EditorState, start_client, wait_until
from lsprotocol import types
from pygls.uris import from_fs_path

from deepseek_ls.lsp import names
from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

pytestmark = pytest.mark.asyncio(loop_scope="module")

FAST = {"debounce_ms": 0, "model": None, "enabled": True, "completion_items": False, "index_hits": 0, "max_tokens": 128}
PEM_HEAD = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n"
KEY = "sk-" + "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a99"  # a DeepSeek-shaped key a person pasted into a buffer


@dataclass
class Lsp:
    client: Any
    state: EditorState
    root: Path
    fake: FakeDeepSeek
    version: int = 1

    async def settings(self, **inline: Any) -> None:
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"inline_completion": {**FAST, **inline}}))
        await self.status()  # answered after the notification: the settings are in

    async def status(self) -> dict[str, Any]:
        return _plain(await self.client.protocol.send_request_async(names.REQ_INLINE_COMPLETION_STATUS, {}))

    def open(self, rel: str, text: str) -> str:
        path = self.root / rel
        path.write_text(text)
        uri = from_fs_path(str(path))
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
        return uri

    def type_text(self, uri: str, text: str) -> None:
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def params(self, uri: str, line: int, character: int) -> types.InlineCompletionParams:
        return types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic))

    async def complete(self, uri: str, line: int, character: int) -> list[str]:
        result = await self.client.text_document_inline_completion_async(self.params(uri, line, character))
        items = result.items if isinstance(result, types.InlineCompletionList) else (result or [])
        return [item.insert_text for item in items]

    def fim_requests(self) -> list[Any]:
        return [r for r in self.fake.requests if r.endpoint in ("fim", "infill")]


def _plain(value: Any) -> Any:
    """A custom request's result as plain JSON values (pygls answers with named tuples)."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lsp(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("inline")
    root = tmp / "ws"
    root.mkdir()
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(root)], check=True)
    fake = FakeDeepSeek().start()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp / "xdg-config"), "DEEPSEEK_BASE_URL": fake.base_url,
           "DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_LS_LOG": "info"}
    settings = {"index": {"enabled": False}, "inline_completion": FAST}
    client, state, result = await start_client(root, "neovim", env, initialization_options=settings)
    shared = Lsp(client, state, root, fake)
    shared.capabilities = result.capabilities  # type: ignore[attr-defined]
    try:
        yield shared
    finally:
        await client.shutdown_session()
        await client.stop()
        fake.stop()


async def test_inline_completion_is_advertised_in_initialize(lsp):
    assert lsp.capabilities.inline_completion_provider is not None
    assert lsp.capabilities.completion_provider is not None  # answered only when opted into


async def test_a_fim_model_suggests_the_middle_and_the_call_is_priced(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "def add(a, b):"}, "content": "return a + b\n"})
    uri = lsp.open("add.py", "def add(a, b):\n    \n\nprint(add(1, 2))\n")
    before = (await lsp.status())["cost"]["calls"]
    assert await lsp.complete(uri, 1, 4) == ["return a + b"]
    sent = lsp.fim_requests()[-1]
    assert sent.path.endswith("/beta/completions") and sent.body["model"] == "deepseek-v4-flash"
    assert sent.body["prompt"].endswith("def add(a, b):\n    ") and sent.body["suffix"] == "\n\nprint(add(1, 2))\n"
    assert sent.headers["x-deepseek-ls-role"] == "inline"
    status = await lsp.status()
    assert status["enabled"] is True and status["cost"]["calls"] == before + 1
    assert status["cost"]["tokens"]["output"] > 0 and status["cost"]["cost"] > 0  # FIM tokens priced
    await lsp.settings(max_tokens=64)  # new settings: the connection's ledger is kept
    assert (await lsp.status())["cost"]["calls"] == before + 1


async def test_typing_through_a_shown_suggestion_asks_nothing(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "def mul(a, b):"}, "content": "return a * b"})
    uri = lsp.open("mul.py", "def mul(a, b):\n    \n")
    assert await lsp.complete(uri, 1, 4) == ["return a * b"]
    sent = len(lsp.fim_requests())
    for typed in ("r", "re", "ret", "return a"):
        lsp.type_text(uri, f"def mul(a, b):\n    {typed}\n")
        assert await lsp.complete(uri, 1, 4 + len(typed)) == ["return a * b"[len(typed):]]
    assert len(lsp.fim_requests()) == sent
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "    rex"}, "content": "ult = 1"})
    lsp.type_text(uri, "def mul(a, b):\n    rex\n")  # off the suggestion: a new request
    assert await lsp.complete(uri, 1, 7) == ["ult = 1"]
    assert len(lsp.fim_requests()) == sent + 1


async def test_a_newer_request_closes_the_older_ones_http_request_before_its_answer(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "slow_one"}, "content": "never seen",
                  "fault": {"hold": "slow-one"}})
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "slow_one_two"}, "content": "(x)"})
    uri = lsp.open("slow.py", "slow_one\n")
    count = len(lsp.fake.requests)
    older = asyncio.ensure_future(lsp.complete(uri, 0, 8))
    held = (await asyncio.to_thread(lsp.fake.wait_for_requests, count + 1))[-1]
    lsp.type_text(uri, "slow_one_two\n")
    assert await lsp.complete(uri, 0, 12) == ["(x)"]
    assert await older == []  # superseded: answered empty, not an error
    await asyncio.to_thread(held.finished.wait, 10)
    assert held.disconnected and held.billed is None  # the fake saw the hang-up; nothing billed
    lsp.fake.release("slow-one")
    assert (await lsp.status())["stats"]["cancelled_in_flight"] >= 1


async def test_cancel_request_from_the_editor_closes_the_http_request(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "cancel_me"}, "content": "never seen",
                  "fault": {"hold": "cancel-me"}})
    uri = lsp.open("cancel.py", "cancel_me\n")
    count = len(lsp.fake.requests)
    answer = asyncio.ensure_future(lsp.client.protocol.send_request_async(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, lsp.params(uri, 0, 9), msg_id="inline-cancel-1"))
    held = (await asyncio.to_thread(lsp.fake.wait_for_requests, count + 1))[-1]
    lsp.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="inline-cancel-1"))
    with pytest.raises(Exception, match="cancel"):
        await asyncio.wait_for(answer, 30)
    await asyncio.to_thread(held.finished.wait, 10)
    assert held.disconnected and held.billed is None
    lsp.fake.release("cancel-me")


async def test_a_model_without_fim_is_said_once_and_never_asked(lsp):
    await lsp.settings(model="openai-compatible")  # the generic preset: fim = false
    uri = lsp.open("nofim.py", "def sub(a, b):\n    \n")
    sent = len(lsp.fim_requests())
    assert await lsp.complete(uri, 1, 4) == []
    assert await lsp.complete(uri, 1, 4) == []
    said = await wait_until(lambda: [m.message for m in lsp.client.messages if "fill-in-the-middle" in m.message])
    assert len(said) == 1 and "inline completion is off" in said[0] and "fim = true" in said[0]
    status = await lsp.status()
    assert status["enabled"] is False and "fill-in-the-middle" in status["reason"]
    assert len(lsp.fim_requests()) == sent


async def test_turned_off_in_settings_nothing_is_sent(lsp):
    await lsp.settings(enabled=False)
    uri = lsp.open("off.py", "def off():\n    \n")
    sent = len(lsp.fim_requests())
    assert await lsp.complete(uri, 1, 4) == []
    assert (await lsp.status())["reason"] == "inline_completion.enabled is false"
    assert len(lsp.fim_requests()) == sent


async def test_plain_completion_items_only_when_opted_in(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "total = compu"}, "content": "te_total(items)",
                  "repeat": True})
    uri = lsp.open("items.py", "total = compu\n")
    params = types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri),
                                    position=types.Position(line=0, character=13))
    sent = len(lsp.fim_requests())
    assert await lsp.client.text_document_completion_async(params) is None
    assert len(lsp.fim_requests()) == sent  # not opted in: nothing asked
    await lsp.settings(completion_items=True)
    listed = await lsp.client.text_document_completion_async(params)
    (item,) = listed.items
    assert item.text_edit.new_text == "compute_total(items)" and item.filter_text.startswith("compu")
    assert item.text_edit.range.start.character == 8 and item.text_edit.range.end.character == 13


async def test_infill_where_the_preset_says_so(lsp):
    lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={
        "models": {"coder": {"preset": "llama-cpp", "fim": True, "base_url": f"{lsp.fake.base_url}/v1",
                         "api_key_env": "DEEPSEEK_API_KEY"}}}))
    await lsp.settings(model="coder")
    lsp.fake.add({"match": {"endpoint": "infill", "contains": "def div(a, b):"}, "content": "return a / b"})
    uri = lsp.open("div.py", "def div(a, b):\n    \n")
    assert await lsp.complete(uri, 1, 4) == ["return a / b"]
    sent = lsp.fim_requests()[-1]
    assert sent.path == "/infill" and sent.body["input_prefix"].endswith("def div(a, b):\n    ")
    assert sent.body["input_suffix"] == "\n" and sent.body["n_predict"] == 128


async def test_no_leak_inline_completion_redacts_a_key_in_the_buffer(lsp):
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "client = connect("}, "content": "api_key)"})
    uri = lsp.open("keyed.py", f'API_KEY = "{KEY}"\nclient = connect(\n')
    assert await lsp.complete(uri, 1, 17) == ["api_key)"]
    sent = lsp.fim_requests()[-1]
    assert KEY not in repr(sent.body) and "[REDACTED" in sent.body["prompt"]


@pytest.mark.parametrize("rel, text", [
    pytest.param(".env", "DATABASE_URL=postgres://u:p@h/db\nSECRET=", id="dotenv"),
    pytest.param("deploy/notes.txt", "%sMIIB" % PEM_HEAD, id="private-key-by-content"),
])
async def test_no_leak_inline_completion_never_sends_a_secret_file(lsp, rel, text):
    await lsp.settings()
    (lsp.root / rel).parent.mkdir(parents=True, exist_ok=True)
    uri = lsp.open(rel, text)
    sent = len(lsp.fake.requests)
    lines = text.split("\n")
    assert await lsp.complete(uri, len(lines) - 1, len(lines[-1])) == []
    assert len(lsp.fake.requests) == sent
    assert (await lsp.status())["stats"]["hidden"] >= 1


async def test_a_cursor_on_the_empty_line_after_the_last_line_break(lsp):
    """The cursor after a file's final newline is on a line `lsp_lines` does not list: the prompt
    is the whole file (it was the start of the file: the position clamped to the line above)."""
    await lsp.settings()
    lsp.fake.add({"match": {"endpoint": "fim", "contains": "def last():\n"}, "content": "    return 0"})
    uri = lsp.open("last.py", "def last():\n")
    assert await lsp.complete(uri, 1, 0) == ["    return 0"]
    sent = lsp.fim_requests()[-1]
    assert sent.body["prompt"].endswith("def last():\n") and sent.body["suffix"] == ""

"""Inline completion's context (agent/completion_context.py) and the completer's debounce
(agent/completion.py), without a language server: windows within the budget, identifiers near
the cursor, related code never from the current or a secret file, nothing sent while debouncing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from deepseek_ls.agent import completion_context as context
from deepseek_ls.agent.completion import CompletionRequest, InlineCompleter
from deepseek_ls.config_models import Config
from deepseek_ls.llm.tokens import CHARS_PER_TOKEN
from deepseek_ls.policy import PathPolicy


def test_the_window_ends_at_the_cursor_and_fits_the_budget():
    text = "".join(f"line {i}\n" for i in range(1000))
    offset = text.index("line 500\n") + 4
    prefix, suffix = context.cut_window(text, offset, 400)
    assert text[:offset].endswith(prefix) and text[offset:].startswith(suffix)
    assert len(prefix) + len(suffix) <= 400 and len(suffix) <= 100
    assert prefix.startswith("line ") and suffix.endswith("\n")  # whole lines at both ends


def test_a_short_suffix_leaves_its_room_to_the_prefix():
    text = "x = 1\n" * 200 + "y"
    prefix, suffix = context.cut_window(text, len(text) - 1, 400)
    assert suffix == "y" and len(prefix) > 300


def test_identifiers_near_the_cursor_nearest_first_without_keywords():
    prefix = "import os\nfrom billing import invoice_total\n\ndef charge(customer):\n    return invoice_total(cust"
    assert context.identifiers_near(prefix)[:3] == ["cust", "invoice_total", "customer"]
    assert "return" not in context.identifiers_near(prefix) and "def" not in context.identifiers_near(prefix)


def test_snippets_take_at_most_a_quarter_of_the_budget():
    snippets = tuple((f"mod{i}.py", "x" * 250) for i in range(10))
    win = context.window("a = 1\n", 6, "app.py", context_tokens=400, snippets=snippets)
    assert 0 < len(win.snippets) < 10
    assert sum(len(p) + len(t) + 8 for p, t in win.snippets) <= int(400 * CHARS_PER_TOKEN) // 4
    assert win.comment == "#" and context.comment_marker("main.go") == "//" and context.comment_marker("x.lua") == "--"


def test_related_code_is_never_from_the_current_file_or_a_secret_one(tmp_path: Path):
    (tmp_path / "creds.json").write_text('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMII"}')
    (tmp_path / "billing.py").write_text("def invoice_total(items):\n    return sum(items)\n")

    def hit(path: str, line: str):
        return SimpleNamespace(path=path, lines=[SimpleNamespace(line=1, text=line)])

    index = SimpleNamespace(query=lambda query, top_k: SimpleNamespace(hits=[
        hit("app.py", "invoice_total(x)"), hit(".env", "TOKEN=abc"), hit("creds.json", '"private_key": "..."'),
        hit("billing.py", "def invoice_total(items):")]))
    search = context.index_snippets(index, tmp_path, [".env", ".env.*"])
    assert search("invoice_total", 3) == [("app.py", "invoice_total(x)"), ("billing.py", "def invoice_total(items):")]
    completer = InlineCompleter(Config.model_validate({"inline_completion": {"index_hits": 3}}), tmp_path,
                                tell=lambda message: None)
    completer.search = search
    request = CompletionRequest("app.py", "from billing import invoice_total\nx = invoice_total(", 50)
    assert asyncio.run(completer._snippets(request)) == (("billing.py", "def invoice_total(items):"),)


def test_hidden_reason_names_why_a_buffer_is_never_sent(tmp_path: Path):
    policy = PathPolicy(tmp_path, [".env", ".env.*", "*.pem"])
    assert context.hidden_reason(policy, None, "x") == "it is outside the workspace"
    assert "deny_paths" in context.hidden_reason(policy, ".env", "A=1")
    assert "looks like" in context.hidden_reason(policy, "k.txt", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n")
    assert context.hidden_reason(policy, "app.py", "print(1)\n") is None


async def test_requests_superseded_while_debouncing_send_nothing(tmp_path: Path, fake_deepseek):
    config = Config.model_validate({"inline_completion": {"debounce_ms": 2000, "index_hits": 0}})
    completer = InlineCompleter(config, tmp_path, tell=lambda message: None)
    try:
        older = asyncio.ensure_future(completer.suggest(CompletionRequest("app.py", "def f():\n    ", 13)))
        await asyncio.sleep(0)  # the older request is waiting out its debounce
        newer = asyncio.ensure_future(completer.suggest(CompletionRequest("app.py", "def f():\n    r", 14)))
        assert await older is None  # superseded: no suggestion, not an error
        newer.cancel()  # the editor cancels the newer one too
        await asyncio.gather(newer, return_exceptions=True)
        assert newer.cancelled()
    finally:
        await completer.aclose()
    assert completer.stats.superseded_before_send == 2 and completer.stats.sent == 0
    assert fake_deepseek.requests == []

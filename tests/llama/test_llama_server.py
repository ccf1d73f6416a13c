"""Against a real OpenAI-compatible server we did not write: llama.cpp's, with SmolLM2-135M.

A 135M model answers poorly; what is tested is that we talk to the server correctly (what we
send, how we read what it sends) and that plan/run stop honestly with a readable message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_harness import N_CTX, local_config

from deepseek_ls.config_models import Config
from deepseek_ls.llm import ContextLengthError, LLMClient
from deepseek_ls.sink import ListSink

pytestmark = pytest.mark.llama

TOOL = {"type": "function", "function": {
    "name": "fs_read", "description": "Read a file of the workspace.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}


def client_for(base_url: str, sink: ListSink, **entry) -> LLMClient:
    values = {"preset": "llama-cpp", "id": "smollm2", "base_url": base_url, "context_window": N_CTX,
              "max_output_tokens": 512, "default_max_tokens": 24, "first_token_timeout_seconds": 300, **entry}
    config = Config.model_validate({"llm": {"max_retries": 3, "retry_base_seconds": 0.05},
                                    "models": {"smol": values}})
    config.llm.profiles["fast"] = config.llm.profiles["fast"].model_copy(update={"model": "smol", "temperature": 0.0})
    return LLMClient(config.llm, sink=sink, env={})


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_answers_with_usage_counted(llama_server, stream):
    sink = ListSink()
    async with client_for(llama_server, sink) as llm:
        result = await llm.complete([{"role": "user", "content": "Say hello."}], role="ask", stream=stream)
    assert result.content.strip()
    assert result.finish_reason in ("stop", "length")
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0  # reported, or estimated and marked
    assert result.usage.completion_tokens <= 24 or result.usage.estimated  # the output cap was sent and kept


async def test_streamed_tool_call_name_is_not_glued(llama_server):
    # llama.cpp repeats the function name in every tool-call chunk; we used to append it each time.
    sink = ListSink()
    async with client_for(llama_server, sink, default_max_tokens=40) as llm:
        result = await llm.complete(
            [{"role": "user", "content": "Read the file calc.py."}], role="executor", tools=[TOOL],
            tool_choice={"type": "function", "function": {"name": "fs_read"}},
        )
    assert result.tool_calls, result.content
    assert [c.function.name for c in result.tool_calls] == ["fs_read"]
    kind, payload = sink.events[-1]
    named = [c for c in payload["chunks"] for ch in (c.get("choices") or [])
             for t in (ch.get("delta") or {}).get("tool_calls") or [] if (t.get("function") or {}).get("name")]
    assert len(named) >= 1  # the raw chunks are kept for replay


async def test_prompt_over_the_servers_window_is_a_context_error_not_retried(llama_server):
    # The entry claims a bigger window than the server has (a common misconfiguration): the server
    # cannot take the prompt; we say so after one request instead of retrying a "network" error.
    sink = ListSink()
    long_text = "word " * 3000
    async with client_for(llama_server, sink, context_window=16384, max_output_tokens=1024) as llm:
        with pytest.raises(ContextLengthError) as caught:
            await llm.complete([{"role": "user", "content": long_text}], role="ask")
    assert caught.value.attempts == 1
    assert "context" in caught.value.user_message


async def test_prompt_fitted_to_the_real_window_gets_an_answer(llama_server):
    sink = ListSink()
    messages = [
        {"role": "system", "content": "You are terse."},
        # Prose-like lines (about 4 characters a token for SmolLM2): the estimate alone fits it. How the
        # estimate corrects itself when a server says "too long" is tested against the fake server.
        {"role": "user", "content": "".join(f"The module number {i} handles the routing of the page requests.\n"
                                            for i in range(400)), "_fit": {"priority": 10, "label": "the repo map"}},
        {"role": "user", "content": "Say ok."},
    ]
    async with client_for(llama_server, sink) as llm:
        result = await llm.complete(messages, role="ask")
    assert result.content.strip()
    kind, payload = sink.events[-1]
    assert payload["fit"]["shortened"][0]["label"] == "the repo map"
    assert payload["error"] is None


def _llm_calls(workspace: Path) -> list[dict]:
    calls = []
    for log in (workspace / ".deepseek" / "sessions").glob("*/events.jsonl"):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event["kind"] == "LLMCall@v1":
                calls.append(event["payload"])
    return calls


def _honest(result) -> None:
    """Exit 0, or a readable one-line error: never a traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    if result.returncode != 0:
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("deepseek-ls:"), result.stderr
        assert len(last) < 600


def test_cli_ask_streams_the_local_answer(cli, workspace):
    result = cli("ask", "Say hello.")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    (call,) = _llm_calls(workspace)
    assert call["model"] == "smollm2" and call["error"] is None


@pytest.mark.parametrize("command", [
    pytest.param(["plan", "add a subtract function to calc.py"], id="plan"),
    pytest.param(["run", "add a subtract function to calc.py"], id="run"),
])
def test_cli_plan_and_run_talk_to_it_and_stop_honestly(cli, workspace, command):
    before = (workspace / "calc.py").read_text()
    result = cli(*command)
    _honest(result)
    calls = _llm_calls(workspace)
    assert calls, result.stderr
    # Every call went to the local model, max-think included (never deepseek-v4-pro to this server),
    # and none was refused by the server for what we sent.
    assert {c["model"] for c in calls} == {"smollm2"}
    assert not [c for c in calls if c.get("error_kind") in ("bad_request", "auth", "network")], calls
    if result.returncode != 0:
        assert (workspace / "calc.py").read_text() == before  # a failed run leaves the file alone


def test_local_config_is_valid(tmp_path):
    # The config the CLI tests use parses (a broken one would make them fail for the wrong reason).
    import tomllib

    Config.model_validate(tomllib.loads(local_config("http://127.0.0.1:1/v1")))

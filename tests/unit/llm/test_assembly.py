"""Streaming assembly: text, reasoning, tool-call deltas by index, usage placement."""

from hypothesis import given
from hypothesis import strategies as st

from deepseek_ls.llm.assembly import StreamAssembler, completion_from_body


def chunk(delta=None, finish=None, usage=None, choices=True):
    data = {"model": "deepseek-chat"}
    data["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if choices else []
    if usage is not None:
        data["usage"] = usage
    return data


def test_reasoning_then_content_are_assembled_and_reported_in_order():
    assembler = StreamAssembler()
    deltas = []
    for c in [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": None, "reasoning_content": "Let me "}),
        chunk({"content": None, "reasoning_content": "think."}),
        chunk({"content": "The answer"}),
        chunk({"content": " is 4."}, finish="stop"),
    ]:
        deltas += assembler.feed(c)
    result = assembler.result()
    assert result.reasoning_content == "Let me think."
    assert result.content == "The answer is 4."
    assert result.finish_reason == "stop"
    assert [(d.kind, d.text) for d in deltas] == [
        ("reasoning", "Let me "), ("reasoning", "think."), ("content", "The answer"), ("content", " is 4.")
    ]


def test_tool_calls_split_across_many_chunks_are_merged_by_index():
    assembler = StreamAssembler()
    assembler.feed(chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                          "function": {"name": "read_file", "arguments": ""}}]}))
    assembler.feed(chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                          "function": {"name": "search", "arguments": ""}}]}))
    # Fragments of both calls interleave, as parallel tool calls do.
    for index, piece in [(0, '{"pa'), (1, '{"q": '), (0, 'th": "a'), (1, '"foo"}'), (0, '.py"}')]:
        assembler.feed(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    assembler.feed(chunk({}, finish="tool_calls"))
    result = assembler.result()
    assert [(c.id, c.function.name, c.function.arguments) for c in result.tool_calls] == [
        ("call_a", "read_file", '{"path": "a.py"}'),
        ("call_b", "search", '{"q": "foo"}'),
    ]
    assert result.finish_reason == "tool_calls"
    assert result.content == ""


def test_usage_only_final_chunk_is_read():
    assembler = StreamAssembler()
    assembler.feed(chunk({"content": "ok"}, finish="stop"))
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12, "prompt_cache_hit_tokens": 8,
             "prompt_cache_miss_tokens": 2, "completion_tokens_details": {"reasoning_tokens": 1}}
    assert assembler.feed(chunk(usage=usage, choices=False)) == []
    result = assembler.result()
    assert result.usage.prompt_cache_hit_tokens == 8
    assert result.usage.prompt_cache_miss_tokens == 2
    assert result.usage.reasoning_tokens == 1
    assert result.chunks == 2


def test_usage_in_the_finishing_chunk_is_read_too():
    assembler = StreamAssembler()
    assembler.feed(chunk({"content": "ok"}, finish="stop", usage={"prompt_tokens": 3, "completion_tokens": 1}))
    assert assembler.result().usage.prompt_tokens == 3


def test_no_reasoning_deltas_means_reasoning_is_none_not_empty():
    assembler = StreamAssembler()
    assembler.feed(chunk({"content": "plain"}, finish="stop"))
    assert assembler.result().reasoning_content is None


def test_non_streamed_body_gives_the_same_completion_shape():
    body = {
        "model": "deepseek-reasoner",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "", "reasoning_content": "because",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7},
    }
    result = completion_from_body(body)
    assert result.reasoning_content == "because"
    assert result.tool_calls[0].function.name == "ls"
    assert result.usage.completion_tokens == 7
    assert result.message()["tool_calls"][0]["id"] == "c1"


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:])]


@given(text=st.text(min_size=1), args=st.text(min_size=1), cuts=st.lists(st.integers(min_value=0), max_size=20))
def test_any_split_of_content_and_tool_arguments_reassembles_exactly(text, args, cuts):
    assembler = StreamAssembler()
    for piece in _split(text, cuts):
        assembler.feed(chunk({"content": piece}))
    assembler.feed(chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}]}))
    for piece in _split(args, cuts):
        assembler.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    result = assembler.result()
    assert result.content == text
    assert result.tool_calls[0].function.arguments == args

"""The thinking-mode rule: reasoning_content goes back only on tool-call turns."""

from deepseek_ls.llm.history import prepare_messages

CONVERSATION = [
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "first answer", "reasoning_content": "old thoughts"},
    {"role": "user", "content": "now use a tool"},
    {"role": "assistant", "content": "", "reasoning_content": "I need the file",
     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "file text"},
]


def test_thinking_mode_keeps_reasoning_of_tool_call_turns_and_drops_the_rest():
    prepared = prepare_messages(CONVERSATION, thinking=True)
    assert "reasoning_content" not in prepared[1]
    assert prepared[3]["reasoning_content"] == "I need the file"


def test_thinking_mode_sends_empty_reasoning_when_a_tool_call_turn_had_none():
    turns = [dict(m) for m in CONVERSATION]
    del turns[3]["reasoning_content"]
    assert prepare_messages(turns, thinking=True)[3]["reasoning_content"] == ""


def test_non_thinking_mode_sends_no_reasoning_at_all():
    prepared = prepare_messages(CONVERSATION, thinking=False)
    assert all("reasoning_content" not in m for m in prepared)


def test_the_callers_messages_are_not_modified():
    turns = [dict(m) for m in CONVERSATION]
    prepare_messages(turns, thinking=False)
    assert turns[1]["reasoning_content"] == "old thoughts"

"""The chat's pieces that need no terminal: one command table drives completion and dispatch,
a line is a command or a prompt, Tab's cycle skips YOLO in an untrusted workspace, and the one
lines the agent gives the chat (what a prompt was taken for, a tool call) stay short and redacted."""

from __future__ import annotations

from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from deepseek_ls.agent.intent import IntentDecision, describe
from deepseek_ls.agent.runtime import tool_summary
from deepseek_ls.cli.chat import commands, modes
from deepseek_ls.cli.chat.completion import ChatCompleter


def completions(text: str, files: list[str] | None = None) -> list[str]:
    completer = ChatCompleter(lambda: commands.COMMANDS, lambda: files or [])
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]


def test_every_command_of_the_table_completes_and_nothing_else():
    assert completions("/") == [f"/{name}" for name in commands.COMMANDS]
    assert completions("/mo") == ["/mode", "/model"]
    assert completions("/mode pl") == []  # past the name: a command's argument
    assert completions("fix @ap", ["src/app.py", "app.py", "lib/mapper.py"]) == ["@app.py", "@src/app.py",
                                                                                  "@lib/mapper.py"]


def test_a_slash_line_is_a_command_and_a_double_slash_a_prompt():
    assert commands.parse("  /Mode  plan ") == ("mode", "plan")
    assert commands.parse("//etc/hosts is odd") is None
    assert commands.parse("why /tmp?") is None


def test_a_taken_name_is_refused_not_shadowed():
    taken = commands.COMMANDS["help"]
    try:
        commands.register(commands.SlashCommand("help", "", "mine", taken.handler))
    except ValueError as exc:
        assert "/help" in str(exc)
    else:
        raise AssertionError("a second /help was registered")
    assert commands.COMMANDS["help"] is taken


def test_tab_skips_yolo_until_the_workspace_is_trusted(tmp_path):
    change = modes.next_mode("agent", tmp_path)
    assert change.mode == "hetun" and "YOLO skipped" in (change.note or "")
    assert modes.next_mode("hetun", tmp_path, backwards=True).mode == "agent"
    assert modes.next_mode("hetun", tmp_path).mode == "plan"


def test_the_lines_the_agent_gives_the_chat():
    decision = IntentDecision(intent="question", route="answer", source="heuristic", sure=True, reason="EN_QUESTION_WORD")
    assert describe(decision) == "→ a question (EN_QUESTION_WORD): answering, nothing changed"
    assert tool_summary({"path": "src/app.py", "limit": 20, "recursive": True}) == "src/app.py 20"
    long = tool_summary({"query": "x" * 200})
    assert len(long) == 60 and long.endswith("…")

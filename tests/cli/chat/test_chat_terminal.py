"""`deepseek-ls chat` driven as a person drives it: in a pseudo-terminal, keys typed, the screen read,
against the fake DeepSeek server over loopback (whose request log says what reached the model).

A chat process costs seconds to start, so each test is one process driven through several steps:
the conversation (routing, and every answer at an approval), the keys and commands that stay in
the terminal, and cancelling a running turn."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from chat_kit import ADD_FIX, CTRL_C, CTRL_D, ESC, TAB, UP, ChatTerminal, make_workspace, plan_reply
from deepseek_ls.config_layers import user_config_path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Verification runs `python -m pytest`: the test interpreter's, first on PATH.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def chat(workspace, fake_deepseek):
    started: list[ChatTerminal] = []

    def start(*args: str) -> ChatTerminal:
        term = ChatTerminal(workspace, *args)
        started.append(term)
        term.wait_prompt()
        return term

    yield start
    for term in started:
        term.close()


def roles(fake) -> list[str]:
    return [r.role for r in fake.requests]


def events(workspace: Path, kind: str) -> list[dict]:
    """Every event of `kind` in the workspace's sessions, oldest session first (ids are UUIDv7)."""
    found = []
    for log in sorted((workspace / ".deepseek" / "sessions").glob("*/events.jsonl")):
        found += [e for e in map(json.loads, log.read_text().splitlines()) if e["kind"] == kind]
    return found


def test_a_question_is_answered_a_change_planned_and_every_approval_answer_ends_cleanly(chat, fake_deepseek,
                                                                                        workspace):
    fake_deepseek.add({"match": {"role": "chat"}, "content": "## Why\n\n`add` **subtracts**: it returns `a - b`."})
    term = chat()
    term.type_line("why does test_add fail?")
    term.wait("it returns a - b")  # rendered Markdown: no backticks, no asterisks
    term.wait_prompt()
    screen = term.text()
    assert "→ a question (EN_QUESTION_WORD)" in screen and "`add`" not in screen and "**" not in screen
    assert "Plan v" not in screen
    assert roles(fake_deepseek) == ["chat"]
    # The context meter in the prompt: the answer's prompt tokens out of the model's window, from its call.
    [call] = events(workspace, "LLMCall@v1")
    used = call["payload"]["fit"]["prompt_tokens"]
    assert f"ctx {used / 1000:.1f}k/1M (0%)" in term.prompt_line()
    term.type_line("/compact the failing test")  # nothing runs: said so, with what fills the context
    term.wait("nothing to compact")
    term.wait("instructions ")
    term.wait_prompt()
    assert roles(fake_deepseek) == ["chat"]  # a slash command never reaches the model

    # The same change request four times: refused with "n", Esc and Ctrl-D (no answer), then allowed.
    for key in ("n\r", ESC, CTRL_D, "y\r"):
        fake_deepseek.add(plan_reply())
        fake_deepseek.add(ADD_FIX)
        term.type_line("fix the add function")
        term.wait("allow? [y]es once")
        screen = term.text()
        assert "Plan v1: make add add" in screen and "Fix add" in screen  # the plan as a table
        assert "-    return a - b" in screen and "+    return a + b" in screen  # the hunk as a diff
        term.send(key)
        term.wait("Completed" if key == "y\r" else "Paused")
        term.wait_prompt()
        assert ("return a + b" if key == "y\r" else "return a - b") in (workspace / "app.py").read_text()
        assert ("(dismissed: cancelled)" in term.text()) == (key in (ESC, CTRL_D))
        term.send("\x0c")  # Ctrl-L clears the screen: the next round's text is its own
        term.wait_for(lambda: "Paused" not in term.text() and "Completed" not in term.text(), "Ctrl-L did not clear")

    resolved = [e["payload"]["answer"] for e in events(workspace, "ApprovalResolved@v1")]
    assert resolved == ["deny", "cancel", "cancel", "allow_once"]  # a dismissed prompt is no deny
    states = [e["payload"]["to_state"] for e in events(workspace, "SessionStateChanged@v1")]
    assert "Failed" not in states
    assert [e["payload"]["route"] for e in events(workspace, "IntentClassified@v1")] == ["answer"] + ["execute"] * 4

    fake_deepseek.add({"match": {"role": "chat"}, "content": "Still here."})
    term.type_line("what does greet do?")  # the chat goes on
    term.wait("Still here.")
    assert roles(fake_deepseek) == ["chat"] + ["planner", "executor"] * 4 + ["chat"]
    assert term.leave() == 0


# What each says is not in /help's text: the wait ends on the command's own output.
LOCAL_COMMANDS = [
    ("/help", "/exit"), ("/mode", "● agent"), ("/model", "model: auto"),
    ("/model max_think", "model: max_think"), ("/diff", "no pending patches"), ("/apply", "no pending patch to apply"),
    ("/undo", "nothing to undo"), ("/cost", "no model call in this chat yet"), ("/sessions", "no sessions"),
    ("/resume", "nothing to continue"), ("/run", "nothing to continue"), ("/trust", "not trusted"),
    ("/reasoning", "without reasoning"), ("/nosuch thing", "unknown command /nosuch"),
    ("/ask", "usage: /ask QUESTION"), ("/plan", "usage: /plan REQUEST"),
]


def test_commands_keys_and_history_stay_in_the_terminal(chat, fake_deepseek, workspace):
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4"
    mine = user_config_path().parent / "commands"  # the person's own custom command
    mine.mkdir(parents=True)
    (mine / "standup.md").write_text("---\ndescription: what I did yesterday\n---\nSummarise $ARGUMENTS\n")
    term = chat()
    term.send("/stan")  # completed beside the built-in commands, with its description
    term.wait("what I did yesterday (user)")
    term.send(CTRL_C)
    term.wait_for(lambda: term.prompt_line().endswith("›"), "Ctrl-C did not clear the line")
    for line, said in LOCAL_COMMANDS:
        term.type_line(line)
        term.wait(said)
        term.wait_prompt()

    # Tab cycles the mode; yolo is skipped (and /mode yolo refused) until the workspace is trusted.
    assert " agent " in term.prompt_line()
    term.send(TAB)  # agent -> yolo, refused: not trusted -> hetun
    term.wait("YOLO skipped")
    term.wait_for(lambda: " hetun " in term.prompt_line(), "Tab did not move on to hetun")
    assert "not a trusted workspace" in term.text()
    term.send(TAB)
    term.wait_for(lambda: " plan " in term.prompt_line(), "Tab did not move on to plan")
    term.send(TAB)
    term.wait_for(lambda: " agent " in term.prompt_line(), "Tab did not come back to agent")
    term.type_line("/mode yolo")
    term.wait("mode unchanged (agent)")
    term.wait_prompt()
    term.type_line("/trust yes")
    term.wait("yolo mode is available")
    term.wait_prompt()
    term.send(TAB)
    term.wait_for(lambda: " yolo " in term.prompt_line(), "Tab did not offer yolo once trusted")

    # History: ↑ recalls; a key pasted by mistake is refused and not kept in the file.
    term.type_line(f"/model {key}")
    term.wait("unknown profile")
    term.wait_prompt()
    term.type_line("/mode plan")
    term.wait("mode: plan")
    term.wait_prompt()
    term.send(UP)
    term.wait_for(lambda: term.prompt_line().endswith("/mode plan"), "↑ did not recall the last message")
    term.send(CTRL_C)  # clears the line
    term.wait_for(lambda: term.prompt_line().endswith("›"), "Ctrl-C did not clear the line")
    term.send(CTRL_D)  # leaves
    term.wait_for(lambda: term.ended, "Ctrl-D did not leave")
    term.child.wait()
    assert term.child.exitstatus == 0
    history = (workspace / ".deepseek" / "chat_history").read_text()
    assert "/mode plan" in history and "/model [REDACTED" in history and key not in history
    assert fake_deepseek.requests == []
    assert events(workspace, "AgentRequest@v1") == []  # no session was even started


def test_esc_cancels_a_turn_the_session_continues_and_requests_go_without_their_command(chat, fake_deepseek,
                                                                                      workspace):
    words = " ".join(f"word{i}" for i in range(60))
    fake_deepseek.add({"match": {"role": "chat"}, "content": words, "chunk_chars": 6, "chunk_delay": 0.5})
    fake_deepseek.add({**plan_reply(), "chunk_chars": 4, "chunk_delay": 0.5})
    fake_deepseek.add(plan_reply())
    fake_deepseek.add(ADD_FIX)
    fake_deepseek.add({"match": {"role": "chat"}, "content": "It adds."})
    fake_deepseek.add(plan_reply())
    fake_deepseek.add({"match": {"role": "chat"}, "content": "It doubles x."})
    term = chat()

    # Esc while the answer streams: the stream is closed, the chat waits for the next message.
    term.type_line("why does test_add fail?")
    term.wait("word1")
    term.send(ESC)
    term.wait("cancelled")
    term.wait_prompt()
    assert "word59" not in term.text()
    request = fake_deepseek.requests[0]
    assert request.finished.wait(30) and request.disconnected  # closed, not read to its end

    # Ctrl-C while planning: the session pauses and /run continues it.
    term.type_line("fix the add function")
    term.wait("planner: asking")
    # "asking" is printed before the request is sent: Ctrl-C must land while the planner streams
    # (on a loaded machine it could come first, and the streaming plan would answer the /run below).
    term.wait_for(lambda: len(fake_deepseek.requests) >= 2, "the planner request never reached the model")
    term.send(CTRL_C)
    term.wait("is paused — /run continues it")
    term.wait_prompt()
    assert "a - b" in (workspace / "app.py").read_text()
    term.type_line("/run")
    term.wait("allow? [y]es once")
    term.type_line("y")
    term.wait("Completed")
    term.wait_prompt()
    assert "return a + b" in (workspace / "app.py").read_text()

    # /ask and /plan send their request, routed as they say, never the command itself.
    term.type_line("/ask fix the add function")  # reads as a change, asked as a question
    term.wait("It adds.")
    term.wait_prompt()
    term.type_line("/plan why does add fail?")  # reads as a question, only planned
    term.wait("planning only")
    term.wait_prompt()

    # @ completes a workspace file and the message carries it.
    term.send("what does @ut")
    term.wait("util.py")  # the completion menu
    term.send(TAB + "\r")  # choose it (the menu closes)
    term.wait_for(lambda: term.prompt_line().endswith("what does @util.py"), "the completion was not inserted")
    term.type_line(" do?")
    term.wait("It doubles x.")

    assert roles(fake_deepseek) == ["chat", "planner", "planner", "executor", "chat", "planner", "chat"]
    asked = [r.body["messages"][-1]["content"] for r in fake_deepseek.requests]
    assert asked[4] == "fix the add function" and not any(text.startswith("/") for text in asked)
    assert "def double(x):" in "\n".join(m["content"] for m in fake_deepseek.requests[-1].body["messages"])
    routes = [e["payload"]["route"] for e in events(workspace, "IntentClassified@v1")]
    assert routes == ["answer", "execute", "answer", "plan", "answer"]
    assert term.leave() == 0

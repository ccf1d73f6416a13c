"""`/rewind` in `deepseek-ls chat` off a terminal (messages piped): the chat's prompts listed, a rewind
of the conversation asked for ("no" and no answer rewind nothing), the prompt taken back no longer sent
with the next message, `/rewind redo` putting it back. In-process (`cli.main`, the real agent) against
the fake DeepSeek server over loopback: cheap."""

from __future__ import annotations

import io
import json

from chat_kit import make_workspace
from deepseek_ls.cli import main


def _sent(request) -> str:
    return json.dumps(request.body.get("messages", []))


def test_chat_rewind_conversation_asks_then_drops_the_prompt_and_redo_puts_it_back(tmp_path, monkeypatch,
                                                                                      fake_deepseek, capsys):
    workspace = make_workspace(tmp_path / "ws")
    fake_deepseek.add({"match": {"role": "chat"}, "repeat": True, "content": "An answer."})
    typed = "\n".join([
        "what does add return?",
        "what does greet return?",
        "/rewind",
        "/rewind 2 conversation", "n",  # asked: no
        "/rewind 2 conversation", "y",
        "what about util?",  # sent without the greet question
        "/rewind redo",
        "and double?",  # the greet question is back
        "/rewind 9",
        "/rewind 1 sideways",
    ]) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    assert main(["chat", "--workspace", str(workspace), "--tools=false"]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "1. what does add return?" in text and "2. what does greet return?" in text
    assert text.count("takes back 1 prompt(s); no file to restore") == 2  # shown before each question
    assert "not rewound: nothing was changed" in text and "rewound conversation: no file changed" in text
    assert "1 prompt(s) back in this chat" in text
    assert "no prompt 9 in this chat" in text and "usage: /rewind" in text
    chats = [r for r in fake_deepseek.requests if r.role == "chat"]
    assert len(chats) == 4  # slash commands and answers never reach the model
    assert "what does add return?" in _sent(chats[2]) and "what does greet return?" not in _sent(chats[2])
    assert "what does greet return?" in _sent(chats[3]) and "what about util?" in _sent(chats[3])
    # Recorded in the rewound prompt's session, with its redo.
    logs = sorted((workspace / ".deepseek" / "sessions").glob("*/events.jsonl"))
    kinds = [json.loads(line)["kind"] for line in logs[1].read_text().splitlines()]
    assert kinds.count("Rewound@v1") == 1 and kinds.count("RewindRedone@v1") == 1

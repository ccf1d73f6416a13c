"""`/rewind` in the chat: this chat's prompts as checkpoints; take code, conversation or both back.

`/rewind` lists this chat's prompts, numbered, with the files each changed. `/rewind N [code|
conversation|both]` (N a number of that list or a session id) shows what it takes back and asks;
"no", an empty answer or none rewinds nothing. The conversation part drops the prompts from this
chat (what goes with the next message as context); `/rewind redo` puts the latest rewind back
(its code 3-way, its prompts in the chat again). The work is `Agent.rewind` (agent/rewind.py).
"""

from __future__ import annotations

from deepseek_ls.agent.rewind import WHATS, RewindRefused
from deepseek_ls.cli.chat.slash import ChatLike, SlashCommand, register

USAGE = "usage: /rewind [N|ID] [code|conversation|both] — alone: list this chat's prompts; /rewind redo undoes one"


async def _rewind(chat: ChatLike, argument: str) -> None:
    words = argument.split()
    if not words:
        _list(chat)
        return
    if words[0].lower() == "redo":
        await _redo(chat, words[1] if len(words) > 1 else None)
        return
    what = words[1].lower() if len(words) > 1 else "both"
    if what not in WHATS or len(words) > 2:
        chat.say(USAGE)
        return
    target = _target(chat, words[0])
    if target is None:
        return
    rewinder = chat.agent.rewinder
    try:
        sessions, ids = rewinder.scope(target, what != "conversation")
    except (RewindRefused, LookupError) as exc:
        chat.say(str(exc))
        return
    files = rewinder.covered(ids) if what != "conversation" else []
    chat.say(f"rewind {what} to before “{_prompt(chat, target)}”: takes back {len(sessions)} prompt(s)"
             + (f"; restores {', '.join(files)} (edits made since are kept)" if files else "; no file to restore"))
    answer = await chat.ui.ask_line("Rewind? [y/N] ")
    if (answer or "").strip().lower() not in ("y", "yes"):
        chat.say("not rewound: nothing was changed")
        return
    try:
        result = await chat.agent.rewind(target, what)
    except (RewindRefused, LookupError) as exc:
        chat.say(str(exc))
        return
    if what != "code":
        dropped = [s for s in chat.sessions if s in result.sessions]
        chat.rewound[result.rewind_id] = dropped
        chat.set_conversation([s for s in chat.sessions if s not in dropped])
    chat.say(f"rewound {what}: " + (", ".join(result.files) or "no file changed")
             + (f"; kept as they are: {', '.join(result.kept)}" if result.kept else "")
             + " — /rewind redo puts it back")


async def _redo(chat: ChatLike, rewind_id: str | None) -> None:
    try:
        result = await chat.agent.redo_rewind(rewind_id)
    except (RewindRefused, LookupError) as exc:
        chat.say(str(exc))
        return
    back = chat.rewound.pop(result.rewind_id, [])
    if back:
        chat.set_conversation(sorted(set(chat.sessions) | set(back)))
    chat.say(f"redone: {', '.join(result.files) or 'no file changed'}"
             + (f"; {len(back)} prompt(s) back in this chat" if back else ""))


def _target(chat: ChatLike, word: str) -> str | None:
    if word.isdigit():
        n = int(word)
        if 1 <= n <= len(chat.sessions):
            return chat.sessions[n - 1]
        chat.say(f"no prompt {n} in this chat: /rewind lists them")
        return None
    try:
        return chat.agent.store.resolve(word)
    except LookupError as exc:
        chat.say(str(exc))
        return None


def _prompt(chat: ChatLike, session_id: str) -> str:
    text = (chat.agent.session_view(session_id).get("prompt") or "").replace("\n", " ")
    return text if len(text) <= 50 else text[:47] + "..."


def _list(chat: ChatLike) -> None:
    if not chat.sessions:
        chat.say("no prompt in this chat yet (/sessions lists the workspace's; /rewind ID takes one)")
        return
    listed = {c.session_id: c for c in chat.agent.checkpoints()}
    for n, sid in enumerate(chat.sessions, 1):
        c = listed.get(sid)
        files = f" — changed {', '.join(c.files)}" if c and c.files else ""
        chat.say(f"{n:>3}. {_prompt(chat, sid)}{files}")
    chat.say(USAGE)


register(SlashCommand("rewind", "[N|redo] [what]", "back to before prompt N (code, conversation, both)", _rewind))

"""`/rewind` in an ACP session: its prompts as checkpoints; code, conversation or both back to before one.

`/rewind` lists the prompts of this conversation, numbered, with the files each changed. `/rewind N
[code|conversation|both]` (N from that list, or a session id) says what it takes back and asks with a
permission ("Rewind" / "Cancel"; rejected, cancelled or unanswered rewinds nothing). The code goes back
through the client's files when it offers them (the agent's restorer), 3-way: what was typed since
stays, an overlap refuses naming the files. The conversation part drops the prompts from the session's
record (what `session/load` replays). `/rewind redo` puts the latest rewind back. The work is
`Agent.rewind` (agent/rewind.py).
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.agent.rewind import WHATS, RewindRefused
from deepseek_ls.store.ids import new_id

USAGE = "usage: /rewind [N|ID] [code|conversation|both] — alone: this conversation's prompts; /rewind redo undoes one"


async def rewind_turn(agent: Any, ui: Any, record: Any, text: str) -> str:
    """What to tell the person; changes `record.ours` when the conversation goes back (or returns)."""
    words = text.split()
    try:
        if not words:
            return _listing(agent, record)
        if words[0].lower() == "redo":
            result = await agent.redo_rewind(words[1] if len(words) > 1 else None)
            back = record.rewound.pop(result.rewind_id, [])
            record.ours = sorted(set(record.ours) | set(back))
            return f"Rewind redone: {', '.join(result.files) or 'no file changed'}."
        what = words[1].lower() if len(words) > 1 else "both"
        if what not in WHATS or len(words) > 2:
            return USAGE
        target = _target(agent, record, words[0])
        sessions, ids = agent.rewinder.scope(target, what != "conversation")
        files = agent.rewinder.covered(ids) if what != "conversation" else []
        detail = (f"Takes back {len(sessions)} prompt(s)"
                  + (f" and restores {', '.join(files)} (what you typed since is kept)." if files else "."))
        if not await ui.confirm(f"rewind-{new_id()}", f"Rewind {what} to before this prompt", detail, "Rewind"):
            return "Not rewound: nothing was changed."
        result = await agent.rewind(sessions[0], what)
    except (RewindRefused, LookupError, ValueError) as exc:
        return f"[rewind refused] {exc}"
    if what != "code":
        record.rewound[result.rewind_id] = [s for s in record.ours if s in result.sessions]
        record.ours = [s for s in record.ours if s not in result.sessions]
    lines = [f"Rewound {what}: {', '.join(result.files) or 'no file changed'} ({result.rewind_id}; /rewind redo puts it back)."]
    if result.kept:
        lines.append(f"Left as they are (changed since): {', '.join(result.kept)}.")
    return "\n".join(lines)


def _target(agent: Any, record: Any, word: str) -> str:
    if word.isdigit():
        n = int(word)
        if not 1 <= n <= len(record.ours):
            raise LookupError(f"no prompt {n} in this conversation: /rewind lists them")
        return record.ours[n - 1]
    return agent.store.resolve(word)


def _listing(agent: Any, record: Any) -> str:
    if not record.ours:
        return "No prompt in this conversation yet."
    listed = {c.session_id: c for c in agent.checkpoints()}
    lines = []
    for n, sid in enumerate(record.ours, 1):
        c = listed.get(sid)
        prompt = (c.prompt if c else "").replace("\n", " ")[:60]
        lines.append(f"{n}. {prompt}" + (f" — changed {', '.join(c.files)}" if c and c.files else ""))
    return "\n".join([*lines, USAGE])

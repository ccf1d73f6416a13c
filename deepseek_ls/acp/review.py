"""`/review [--staged | --base REF] [path...]` over ACP: the agent's review, its findings as a message with locations.

The review itself is the core's (agent/review.py: read-only, recorded as a review session the
ACP session adopts). The client gets one `tool_call` (kind `read`, completed) whose `locations`
are the findings' files and first lines — a client jumps to them — and whose content is the
report; then the same report as the agent's message. Bad input (a base that does not exist, a
change over the limits) is the turn's error, as for the CLI; so is an incomplete review (a piece
whose answers were never findings, the CLI's exit 11), after the findings of the other pieces were
sent: a client sees the failure, not an end of turn that reads like a clean review.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import start_tool_call, text_block, tool_content, update_agent_message_text
from acp.schema import ToolCallLocation


def review_source(text: str) -> Any:
    """`--staged`, `--base REF` and paths, as `deepseek-ls review` takes them."""
    from deepseek_ls.agent.review_input import ReviewInputError, ReviewSource

    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ReviewInputError(f"/review: {exc}") from None
    kind, base, paths = "worktree", None, []
    while words:
        word = words.pop(0)
        if word == "--staged":
            kind = "staged"
        elif word == "--base":
            if not words:
                raise ReviewInputError("/review --base needs a branch, tag or commit")
            kind, base = "base", words.pop(0)
        elif word.startswith("-"):
            raise ReviewInputError(f"/review: unknown option {word!r} (use --staged, --base REF, or paths)")
        else:
            paths.append(word)
    return ReviewSource(kind=kind, base=base, paths=paths)


class ReviewIncomplete(Exception):
    """Some part of the change was not reviewed: the model's answers for it were never findings."""

    kind = "review_incomplete"

    def __init__(self, failed: list[dict[str, Any]]) -> None:
        parts = "; ".join(f"{', '.join(f['files'])}: {f['error']}" for f in failed)
        super().__init__(f"review incomplete: {parts}. The findings of the other parts were sent; "
                         "run /review again, or on fewer paths")

    @property
    def user_message(self) -> str:
        return str(self)


async def review_turn(agent: Any, ui: Any, text: str, profile: str | None,
                      on_session: Callable[[str], None] | None = None) -> str | None:
    """Run the review and tell the client; returns our session id (None: nothing to review).
    Raises `ReviewInputError` for bad input and `ReviewIncomplete` once the client was told."""
    from deepseek_ls.agent.review_dismiss import DismissedFindings
    from deepseek_ls.agent.review_report import text_report

    source = review_source(text)
    dismissed = DismissedFindings(agent.state_dir, agent.root).fingerprints()
    result = await agent.review(source, dismissed=dismissed, profile=profile, on_session=on_session)
    review = result.to_json()
    report = text_report(review)
    if result.note:
        ui.send(update_agent_message_text(f"{result.note}\n{report}"))
        return None
    root = Path(agent.root)
    locations = [ToolCallLocation(path=str(root / f["file"]), line=f["start_line"]) for f in result.findings]
    n = len(result.findings)
    title = f"Review of {source.describe()}: {n} finding{'s' if n != 1 else ''}"
    ui.send(start_tool_call(f"review-{result.review_id}", title, kind="read",
                            status="completed" if result.complete else "failed",
                            locations=locations or None, content=[tool_content(text_block(report))],
                            raw_output=review))
    ui.send(update_agent_message_text(report))
    if not result.complete:
        raise ReviewIncomplete(result.failed)
    return result.session_id

"""Our session state and events as ACP `session/update`s (pure functions, no I/O).

- a plan -> `plan` entries whose statuses follow our step statuses, and say what a failed step
  waits for (retried or revised while the session runs; the person once it is paused or failed);
- a staged patch -> a `tool_call` of kind `edit` with `diff` content per file;
- its outcome (applied / rejected) -> a `tool_call_update`;
- a verification run -> a `tool_call` of kind `execute`, completed or failed;
- the event log of a past session -> the same updates, for `session/load`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)

# Our step status -> ACP PlanEntryStatus (pending | in_progress | completed).
STEP_STATUS = {"pending": "pending", "running": "in_progress", "done": "completed", "skipped": "completed",
               "failed": "pending"}
STEP_MARK = {"failed": " (failed: will be retried or revised)", "skipped": " (skipped)"}
STOPPED = {"Paused": "paused", "Failed": "failed"}  # states where nothing retries a failed step


def plan_update(plan: dict[str, Any] | None, state: str | None = None, reason: str = "") -> Any | None:
    """The whole plan as one `plan` update (ACP replaces the list each time). `state` (the session's)
    and its `reason` say what a failed step waits for: nothing retries it once the session stopped."""
    if not plan or not plan.get("steps"):
        return None
    entries = []
    for i, step in enumerate(plan["steps"], 1):
        status = step.get("status", "pending")
        mark = STEP_MARK.get(status, "")
        if status == "failed" and state in STOPPED:
            mark = f" ({STOPPED[state]}: {reason or 'waiting for you'}; send 'run' to try again)"
        files = f" ({', '.join(step.get('files') or [])})" if step.get("files") else ""
        entries.append(plan_entry(f"{i}. {step.get('title', '')}{files}{mark}",
                                  priority="high" if i == 1 else "medium", status=STEP_STATUS.get(status, "pending")))
    return update_plan(entries)


def patch_tool_call(patch_id: str, files: list[str], diffs: list[tuple[str, str | None, str]], *,
                    status: str = "pending") -> Any:
    """A staged patch as a tool call: `diffs` are (absolute path, old text or None, new text)."""
    title = f"Edit {', '.join(files)}" if files else "Edit"
    return start_tool_call(
        f"patch-{patch_id}", title, kind="edit", status=status,
        content=[tool_diff_content(path, new, old) for path, old, new in diffs],
        # No `locations`: CodeCompanion then opens the file to follow the agent, which blocks a
        # headless Neovim; the diff content already carries each absolute path.
        locations=None,
        raw_input={"patch_id": patch_id, "files": files},
    )


def patch_outcome(patch_id: str, applied: bool, message: str = "") -> Any:
    content = [tool_content(text_block(message))] if message else None
    return update_tool_call(f"patch-{patch_id}", status="completed" if applied else "failed", content=content)


def verification_call(call_id: str, command: str, ok: bool | None, output: str = "") -> Any:
    status = "in_progress" if ok is None else ("completed" if ok else "failed")
    content = [tool_content(text_block(output[-4000:]))] if output else None
    return start_tool_call(call_id, f"Run {command}", kind="execute", status=status, content=content,
                           raw_input={"command": command})


def replay_updates(events: Iterable[Any], diff_of: Callable[[dict[str, Any]], list[tuple[str, str | None, str]]]) -> list[Any]:
    """The updates a client shows for a past session, from its event log (`session/load`).

    `diff_of(PatchStaged payload)` gives the (path, old, new) texts of a staged patch."""
    out: list[Any] = []
    plan: dict[str, Any] | None = None
    state, reason = None, ""
    for e in events:
        kind, p = e.kind, e.payload
        if kind == "TurnAdded@v1":
            if p.get("role") == "user" and p.get("agent_role") in ("planner", "ask", "chat"):
                out.append(update_user_message_text(p.get("content", "")))
            elif p.get("role") == "assistant":
                if p.get("reasoning_content"):
                    out.append(update_agent_thought_text(p["reasoning_content"]))
                if p.get("content") and p.get("agent_role") in ("ask", "chat"):
                    out.append(update_agent_message_text(p["content"]))
        elif kind in ("PlanCreated@v1", "PlanRevised@v1"):
            plan = dict(p["plan"])
            update = plan_update(plan, state, reason)
            if update is not None:
                out.append(update)
        elif kind == "StepMarked@v1" and plan is not None:
            for step in plan.get("steps", []):
                if step.get("step_id") == p.get("step_id"):
                    step["status"] = p.get("status")
            update = plan_update(plan, state, reason)
            if update is not None:
                out.append(update)
        elif kind == "PatchStaged@v1":
            out.append(patch_tool_call(p["patch_id"], list(p.get("files", [])), diff_of(p)))
        elif kind == "PatchApplied@v1":
            out.append(patch_outcome(p["patch_id"], True, f"applied to {', '.join(p.get('files', []))}"))
        elif kind == "PatchRejected@v1":
            out.append(patch_outcome(p["patch_id"], False, p.get("reason") or "rejected"))
        elif kind == "VerificationRun@v1":
            out.append(verification_call(f"verify-{e.seq_no}", p.get("command", ""), bool(p.get("ok")), p.get("output", "")))
        elif kind == "SessionStateChanged@v1":
            state, reason = p.get("to_state"), p.get("reason") or ""
            if state in STOPPED and plan is not None and any(s.get("status") == "failed" for s in plan["steps"]):
                out.append(plan_update(plan, state, reason))  # what the failed step now waits for
            if state in ("Completed", "Failed", "Paused") and (state != "Paused" or reason):
                out.append(update_agent_message_text(f"\n[{state}] {reason}\n"))
    return out

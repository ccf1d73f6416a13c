"""`patch.stage` and `patch.apply`: the only way a tool changes a file."""

from __future__ import annotations

import asyncio
import uuid

from pydantic import BaseModel, Field

from deepseek_ls.patch.gate import exec_config_content
from deepseek_ls.tools.registry import Tool, ToolContext
from deepseek_ls.ui_port import ApprovalRequest


class StageArgs(BaseModel):
    diff: str = Field(min_length=1, description="a unified diff (git diff format) against the current file contents")


class ApplyArgs(BaseModel):
    patch_id: str
    hunk_ids: list[str] | None = Field(default=None, description="apply only these hunks (default: all pending)")


def _store(ctx: ToolContext):
    if ctx.patches is None:
        raise RuntimeError("patch staging is not available in this tool host")
    return ctx.patches


async def patch_stage(ctx: ToolContext, args: StageArgs) -> dict:
    allowed = ctx.extras.get("allowed_files")
    ps = await asyncio.to_thread(_store(ctx).stage, args.diff, session_id=ctx.session_id, allowed_files=allowed)
    return {
        "patch_id": ps.patch_id,
        "files": ps.files,
        "hunks": [
            {"hunk_id": h.hunk_id, "file": h.file, "old_start": h.old_start, "old_lines": h.old_lines,
             "new_start": h.new_start, "new_lines": h.new_lines, "located": h.located}
            for h in ps.hunks
        ],
        "approval_required": ps.approval_required,
        "approval_reasons": ps.approval_reasons,
        "exec_config_files": ps.exec_config_files,
    }


async def patch_apply(ctx: ToolContext, args: ApplyArgs) -> dict:
    store = _store(ctx)
    ps = await asyncio.to_thread(store.get, args.patch_id)
    hunks = [ps.hunk(h) for h in args.hunk_ids] if args.hunk_ids else ps.pending_hunks()
    files = sorted({h.file for h in hunks})
    request = ApprovalRequest(
        request_id=str(uuid.uuid4()),
        kind="patch.apply",
        title=f"Apply {len(hunks)} hunk(s) to {', '.join(files)}",
        detail="\n".join(f"{h.file}: hunk {h.hunk_id} (lines {h.old_start}-{h.end_index})" for h in hunks)
        + ("\n" + "; ".join(ps.approval_reasons) if ps.approval_reasons else "")
        + ("\n" + exec_config_content(ps) if ps.exec_config_files else ""),
        files=files,
        hunk_ids=[h.hunk_id for h in hunks],
        patch_id=ps.patch_id,
    )
    await ctx.approve(request, force_explicit=ps.approval_required, tool="patch.apply")
    result = await asyncio.to_thread(store.apply, args.patch_id, args.hunk_ids)
    if not result.ok:
        raise ValueError(result.message)
    return result.model_dump()


TOOLS = [
    Tool(
        "patch.stage",
        "Stage a unified diff for review. Validates paths, locates hunks (tolerates wrong line numbers) "
        "and returns the patch id and hunk ids. Files are NOT changed until the patch is applied.",
        StageArgs,
        patch_stage,
        effect="write",
    ),
    Tool(
        "patch.apply",
        "Apply a staged patch (all pending hunks or the chosen ones) to disk, after approval.",
        ApplyArgs,
        patch_apply,
        effect="write",
    ),
]

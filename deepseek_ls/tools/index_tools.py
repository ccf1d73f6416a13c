"""`index.query`: search the code index (when one is wired into the tool host).

A hit's lines are read from the disk: under an editor that may refuse reads (ACP's client), a hit in
a file it did not let us read is withheld, and the result says so (`overlay.withheld_reads`)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from deepseek_ls.patch.overlay import withheld_note, withheld_reads
from deepseek_ls.policy.secret_files import file_is_secret
from deepseek_ls.tools.registry import Tool, ToolContext


class QueryArgs(BaseModel):
    q: str = Field(min_length=1, description="words or identifiers to look for")
    top_k: int = Field(default=10, gt=0, le=100)
    path_glob: str | None = Field(default=None, description="limit to paths matching this glob")
    lang: str | None = Field(default=None, description="limit to one language, e.g. python")


async def index_query(ctx: ToolContext, args: QueryArgs) -> dict:
    if ctx.index is None:
        raise RuntimeError("the code index is not available; use fs.search_rg instead")
    def query() -> dict:
        result = ctx.index.query(args.q, top_k=args.top_k, path_glob=args.path_glob, lang=args.lang)
        # Serialised in the thread too: it reads each hit's file for its line hits.
        data = result.model_dump() if hasattr(result, "model_dump") else result
        if not isinstance(data, dict) or "hits" not in data:
            return data
        # Secret files are never indexed; an index built before a file became secret (or by
        # an older version) must still not hand it out.
        data["hits"] = [
            h for h in data["hits"]
            if ctx.paths.is_allowed(h.get("path", "")) and not file_is_secret(ctx.root, h.get("path", ""))
        ]
        reasons = withheld_reads(ctx.overlay, [h.get("path", "") for h in data["hits"]])
        data["hits"] = [h for h in data["hits"] if h.get("path", "") not in reasons]
        data.update(withheld_note({p: 1 for p in reasons}, reasons, "hits"))
        return data

    return await asyncio.to_thread(query)


TOOLS = [
    Tool(
        "index.query",
        "Ranked search of the code index (BM25 over files and symbols). Reports whether the index is fresh.",
        QueryArgs,
        index_query,
    )
]

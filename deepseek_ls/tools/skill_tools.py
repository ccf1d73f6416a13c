"""`skill.load`: the instructions of one Agent Skill, read when the model asks for it.

Offered only when the workspace has skills (`extensions/skills.py` lists them in the system
prompt); the skill set is handed to the tool host by the agent, so this module imports no
extension. A name no skill has is an error naming the skills there are.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from deepseek_ls.tools.registry import Tool, ToolContext


class SkillArgs(BaseModel):
    name: str = Field(min_length=1, max_length=64, description="the skill's name, as the list of skills gives it")


async def skill_load(ctx: ToolContext, args: SkillArgs) -> dict:
    skills = ctx.extras.get("skills")
    if skills is None or not skills.skills:
        raise LookupError(f"no skill named {args.name!r}: this workspace has no skills")
    return await asyncio.to_thread(skills.load, args.name, ctx.root)


SKILL_LOAD = Tool(
    "skill.load",
    "Read the instructions of one of the Agent Skills listed in the system prompt (and the files it ships).",
    SkillArgs,
    skill_load,
)
TOOLS = [SKILL_LOAD]

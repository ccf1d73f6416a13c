"""Claude Code's tool names and ours: what `Read`, `Edit`, `Bash(git diff:*)` mean here.

Claude Code's commands (`allowed-tools`) and hooks (matchers) name its own tools; ours have other
names. `CLAUDE_TOOLS` maps each of theirs to ours (documented in docs/extensions.md); a name of
ours (`fs.read`, `bash_run`) is accepted as well. Tools they have and we do not (`WebFetch`,
`Task`, ...) map to nothing and are said as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("fs.read",),
    "Glob": ("fs.list",),
    "LS": ("fs.list",),
    "Grep": ("fs.search_rg", "index.query"),
    "Edit": ("patch.stage", "patch.apply"),
    "MultiEdit": ("patch.stage", "patch.apply"),
    "Write": ("patch.stage", "patch.apply"),
    "NotebookEdit": ("patch.stage", "patch.apply"),
    "Bash": ("bash.run",),
    "Skill": ("skill.load",),
}

# Bash(git diff:*) / Bash(npm test) — a tool with a rule in parentheses.
_RULE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(?:\((.*)\))?\s*$")


@dataclass
class ToolLimit:
    """The tools a custom command's run may use (`tools`), and for `bash.run` the command prefixes
    allowed (`bash_prefixes`, empty: any command the policy allows). `unknown`: names that mean
    nothing here, said to the person."""

    tools: set[str] = field(default_factory=set)
    bash_prefixes: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"tools": sorted(self.tools), "bash_prefixes": list(self.bash_prefixes)}


def ours(name: str) -> tuple[str, ...]:
    """Our tool names for a Claude Code tool name or one of ours (`fs_read` -> `fs.read`); () if none."""
    if name in CLAUDE_TOOLS:
        return CLAUDE_TOOLS[name]
    if name.startswith("mcp__"):
        return (name,)
    dotted = name.replace("_", ".", 1) if "." not in name else name
    return (dotted,) if re.fullmatch(r"[a-z]+\.[a-z_]+", dotted) else ()


def parse_allowed_tools(value: str | list[str], known: set[str]) -> ToolLimit:
    """`allowed-tools` as written (`"Read, Grep, Bash(git diff:*)"` or a YAML list) -> `ToolLimit`.
    `known`: our tool names; a name mapping to none of them goes to `unknown`."""
    entries = value if isinstance(value, list) else _split(str(value))
    limit = ToolLimit()
    for entry in (str(e).strip() for e in entries):
        match = _RULE.match(entry)
        names = ours(match.group(1)) if match else ()
        names = tuple(n for n in names if n in known or n.startswith("mcp"))
        if not names:
            limit.unknown.append(entry)
            continue
        limit.tools.update(names)
        rule = (match.group(2) or "").strip() if match else ""
        if rule and "bash.run" in names:
            limit.bash_prefixes.append(rule.removesuffix("*").removesuffix(":").strip())
    return limit


def _split(text: str) -> list[str]:
    """Comma or space separated, a rule's parentheses kept whole (`Bash(git log:*), Read`)."""
    out, depth, word = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in ", ":
            if word.strip():
                out.append(word.strip())
            word = ""
            continue
        word += ch
    if word.strip():
        out.append(word.strip())
    return out

"""Agent Skills: folders holding a `SKILL.md` (frontmatter `name`, `description`) and maybe scripts.

Read from `.deepseek/skills/<skill>/SKILL.md`, `.claude/skills/...` and the user's config
`skills/` (`places.py`). Only the names and descriptions go into the prompt (`catalog`): sorted by
name and written the same way every time, after the system prompt, so the stable prefix stays
byte-identical from turn to turn and DeepSeek's prompt cache keeps hitting. The body is read when
the model asks for it with the `skill.load` tool (`SkillSet.load`), which also lists the files the
skill ships; a script among them runs only as any command does — as a verification command of a
plan, under the command policy, the person's approval and the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepseek_ls.extensions import places
from deepseek_ls.extensions.frontmatter import FrontmatterError, read, text_field

MAX_IN_CATALOG = 100
MAX_DESCRIPTION = 300  # characters of a description in the catalog
MAX_LISTED_FILES = 50
_NAME = re.compile(r"^[a-z0-9][a-z0-9\-_.]{0,63}$")
HEADER = ("Agent Skills you can use. Each is a folder of instructions (and sometimes scripts) for one kind of "
          "task. When a task matches a skill's description, call the skill.load tool with its name and follow "
          "what it says; never guess what a skill contains. Skills:")


class SkillNotFound(LookupError):
    """`skill.load` of a name no skill has."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path  # its SKILL.md
    place: places.Place

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "origin": self.place.scope,
                "path": str(self.path)}


@dataclass
class SkillSet:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def sorted(self) -> list[Skill]:
        return [self.skills[n] for n in sorted(self.skills)]

    def catalog(self) -> str:
        """The skills' names and descriptions for the system prompt ('' when there are none)."""
        if not self.skills:
            return ""
        lines = [f"- {s.name}: {_one_line(s.description)}" for s in self.sorted()[:MAX_IN_CATALOG]]
        return HEADER + "\n" + "\n".join(lines)

    def load(self, name: str, root: Path) -> dict[str, Any]:
        """What `skill.load` returns: the skill's instructions and the files it ships.
        Raises `SkillNotFound` (naming the skills there are) or `FrontmatterError` (naming the file)."""
        skill = self.skills.get(name.strip().lower())
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            raise SkillNotFound(f"no skill named {name!r}; the skills here are: {known}")
        _, body = read(skill.path)
        folder = skill.path.parent
        shipped = [p for p in sorted(folder.rglob("*")) if p.is_file() and p != skill.path and skill.place.contains(p)]
        result: dict[str, Any] = {"name": skill.name, "instructions": body.strip(),
                                  "folder": _shown(folder, root),
                                  "files": [_shown(p, root) for p in shipped[:MAX_LISTED_FILES]]}
        if len(shipped) > MAX_LISTED_FILES:
            result["files_not_listed"] = len(shipped) - MAX_LISTED_FILES
        if skill.place.scope == "user" and shipped:
            result["note"] = ("this skill lives in the person's config directory, outside the workspace: commands "
                              "run in the sandbox cannot see its files. Read them with its instructions only.")
        elif shipped:
            result["note"] = ("the files are relative to the workspace; read them with fs.read. A script runs only "
                              "as a verification command of the plan, through the command policy, the person's "
                              "approval and the sandbox like any command")
        return result


@dataclass(frozen=True)
class OfferedSkills:
    """What a session recorded it offered (`SkillsOffered@v1`): a replay offers the same catalog and
    the same `skill.load`, whose answers come from the log."""

    names: tuple[str, ...]
    catalog_text: str
    live: SkillSet | None = None  # the skills on disk now, which skill.load reads (None in a replay)

    @property
    def skills(self) -> dict[str, None]:
        return dict.fromkeys(self.names)

    def catalog(self) -> str:
        return self.catalog_text

    def load(self, name: str, root: Path) -> dict[str, Any]:
        if self.live is None or name.strip().lower() not in self.names:
            known = ", ".join(self.names) or "none"
            raise SkillNotFound(f"no skill named {name!r}; the skills here are: {known}")
        return self.live.load(name, root)


def load_skills(root: Path, *, trusted: bool | None = None, env: Mapping[str, str] | None = None) -> SkillSet:
    """The skills of workspace `root` (only when `trusted`; None asks the trust store) and of the user."""
    trusted = places.is_trusted(root, env) if trusted is None else trusted
    out = SkillSet()
    for place in places.places(root, "skills", trusted=trusted, env=env):
        for path in places.files(place, "*/SKILL.md"):
            try:
                skill = _skill(place, path)
            except FrontmatterError as exc:
                out.problems.append(f"skill left out: {exc}")
                continue
            if skill.name in out.skills:
                out.problems.append(f"skill {path} not used: '{skill.name}' is already {out.skills[skill.name].path}")
                continue
            out.skills[skill.name] = skill
    return out


def _skill(place: places.Place, path: Path) -> Skill:
    meta, _ = read(path)
    name = (text_field(meta, "name", path) or path.parent.name).lower()
    if not _NAME.match(name):
        raise FrontmatterError(f"{path}: name '{name}' must be lowercase letters, digits and '-' (64 at most)")
    description = text_field(meta, "description", path)
    if not description:
        raise FrontmatterError(f"{path}: 'description' is missing (the model decides from it when to load the skill)")
    return Skill(name=name, description=description, path=path, place=place)


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_DESCRIPTION else line[: MAX_DESCRIPTION - 1] + "…"


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)

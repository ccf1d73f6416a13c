"""Custom commands: Markdown prompts a person or a team keeps as files, run as `/name args`.

Read from `.deepseek/commands/`, `.claude/commands/` (Claude Code's, as they are) and the user's
config `commands/` (`places.py`). A file `review.md` is `/review`; one in a subdirectory
(`frontend/component.md`) is `/component` as in Claude Code, shown with its namespace
(`workspace:frontend`), and `/frontend:component` when two share a name. Frontmatter (all
optional): `description`, `argument-hint`, `allowed-tools`, `model`.

Running one expands it into a prompt (`expand`), which then goes to the agent like a typed one:
`$ARGUMENTS` is the whole argument text, `$1`..`$9` its words (shell quoting respected); with
neither in the body, the arguments are added at the end. `@path` references stay as they are: the
agent attaches those files under its path policy. A Claude Code `` !`command` `` line is never run
while expanding: it becomes a note that its output was wanted and not run (at most the model makes
it a verification command of its plan, which goes through the command policy, the person's
approval and the sandbox like any other).
`allowed-tools` narrows the tools of that run (`tool_names.ToolLimit`), never widening the policy;
`model` picks a profile (`fast`, `max_think`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deepseek_ls.extensions import places
from deepseek_ls.extensions.frontmatter import FrontmatterError, read, text_field
from deepseek_ls.extensions.tool_names import ToolLimit, parse_allowed_tools

PROFILES = {"fast": "fast", "max_think": "max_think", "max-think": "max_think", "auto": None}
_NAME = re.compile(r"^[A-Za-z0-9][\w.\-]*$")
_BANG = re.compile(r"!`([^`\n]+)`")
_POSITIONAL = re.compile(r"\$([1-9])")


@dataclass(frozen=True)
class CustomCommand:
    name: str  # what the person types after the slash
    description: str
    argument_hint: str
    body: str
    path: Path
    origin: str  # "workspace:frontend", "user", ... (scope and namespace)
    allowed_tools: str | list[str] | None = None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "argument_hint": self.argument_hint,
                "origin": self.origin, "path": str(self.path)}


@dataclass
class Expansion:
    """A custom command ready to send: the prompt and how its run is shaped."""

    command: str
    prompt: str
    profile: str | None = None  # a profile to force, None: the router's choice
    limit: ToolLimit | None = None  # None: every tool the mode allows
    notes: list[str] = field(default_factory=list)  # said to the person (an unknown tool, a bad model)


@dataclass
class CommandSet:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # a file left out and why, naming it

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)

    def sorted(self) -> list[CustomCommand]:
        return [self.commands[n] for n in sorted(self.commands)]


def load_commands(root: Path, *, reserved: Iterable[str] = (), trusted: bool | None = None,
                  env: Mapping[str, str] | None = None) -> CommandSet:
    """The custom commands of workspace `root` and of the user. `reserved`: names taken by built-in
    commands (a custom one with such a name is left out, said). `trusted`: None asks the trust store."""
    trusted = places.is_trusted(root, env) if trusted is None else trusted
    out = CommandSet()
    found: list[CustomCommand] = []
    for place in places.places(root, "commands", trusted=trusted, env=env):
        for path in places.files(place, "**/*.md"):
            try:
                found.append(_command(place, path))
            except FrontmatterError as exc:
                out.problems.append(f"custom command left out: {exc}")
    _name(found, out, {r.lower() for r in reserved})
    return out


def _command(place: places.Place, path: Path) -> CustomCommand:
    meta, body = read(path)
    rel = path.relative_to(place.directory)
    namespace = "/".join(rel.parts[:-1])
    hint = meta.get("argument-hint")
    if isinstance(hint, list):  # `argument-hint: [pr-number]` is YAML for a list
        hint = " ".join(f"[{h}]" for h in hint)
    tools = meta.get("allowed-tools")
    if tools is not None and not isinstance(tools, (str, list)):
        raise FrontmatterError(f"{path}: 'allowed-tools' must be a list or comma-separated text")
    description = text_field(meta, "description", path) or _first_line(body) or f"custom command ({place.label})"
    return CustomCommand(
        name=path.stem, description=description, argument_hint=str(hint or "").strip(), body=body, path=path,
        origin=place.scope + (f":{namespace}" if namespace else ""), allowed_tools=tools,
        model=text_field(meta, "model", path),
    )


def _name(found: list[CustomCommand], out: CommandSet, reserved: set[str]) -> None:
    """Give each command its name: the file's stem, or `namespace:stem` where stems collide within
    a scope; a name already taken (by an earlier place or a built-in) is left out and said."""
    stems: dict[tuple[str, str], int] = {}
    for c in found:
        key = (c.origin.split(":")[0], c.name.lower())
        stems[key] = stems.get(key, 0) + 1
    for c in found:
        scope, _, namespace = c.origin.partition(":")
        name = c.name.lower()
        if stems[(scope, name)] > 1 and namespace:
            name = f"{namespace.replace('/', ':')}:{name}"
        if not _NAME.match(name.replace(":", "")):
            out.problems.append(f"custom command left out: {c.path}: '{c.name}' is not a command name "
                                "(letters, digits, '.', '-', '_')")
        elif name in reserved:
            out.problems.append(f"custom command left out: {c.path}: /{name} is a built-in command")
        elif name in out.commands:
            out.problems.append(f"custom command {c.path} not used: /{name} is already "
                                f"{out.commands[name].path} ({out.commands[name].origin})")
        else:
            out.commands[name] = CustomCommand(**{**c.__dict__, "name": name})


def expand(command: CustomCommand, arguments: str, known_tools: set[str]) -> Expansion:
    """The prompt of `/command arguments` and how its run is shaped (see the module docstring)."""
    text = command.body.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unclosed quote: split on spaces rather than refuse the line
        words = arguments.split()
    used = "$ARGUMENTS" in text or _POSITIONAL.search(text) is not None
    text = text.replace("$ARGUMENTS", arguments.strip())
    text = _POSITIONAL.sub(lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text)
    if arguments.strip() and not used:
        text += f"\n\nARGUMENTS: {arguments.strip()}"
    text = _BANG.sub(lambda m: f"(the output of `{m.group(1)}`, which deepseek-ls did not run: if it must run, "
                     "make it a verification command of the plan, which runs only through the command policy "
                     "and the person's approval)", text)
    out = Expansion(command=command.name, prompt=text)
    if command.allowed_tools is not None:
        out.limit = parse_allowed_tools(command.allowed_tools, known_tools)
        if out.limit.unknown:
            out.notes.append(f"/{command.name}: allowed-tools {', '.join(out.limit.unknown)} mean no tool here; "
                             "left out")
    if command.model:
        wanted = command.model.strip().lower()
        if wanted in PROFILES:
            out.profile = PROFILES[wanted]
        else:
            out.notes.append(f"/{command.name}: model '{command.model}' is not a deepseek-ls profile "
                             "(fast, max_think); the router chooses")
    return out


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:100]
    return ""

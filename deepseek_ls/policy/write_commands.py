"""Commands that rewrite files in place: the fix modes of linters, the write modes of formatters.

A verification command in a safe shape runs without a prompt (`policy/commands.py`); one that
rewrites the person's files (`ruff check --fix-only`, `black .`, `prettier --write`) would change
them with no patch review. `writes(argv)` names such a command; the approval path then treats it
like an edit (docs/tools.md, "Commands that write"). Each program's check form (`--check`,
`--diff`, no `-w`) is not a write. Runners are looked through (`npx`, `uvx`, `python -m`,
`poetry run`, ...), and `npm run SCRIPT` is judged by the script `package.json` gives it.

`check_form(argv)` is the argv to run for a command that only checks: `ruff check` gets
`--no-fix`, since a repository's `fix = true` would make the plain check rewrite files.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

# A program's rule: (arguments after the program) -> why it writes, or None.
Rule = Callable[[list[str]], "str | None"]

_INFO = {"--help", "-h", "--version", "-V"}  # print and exit, whatever else is given


def _has(args: list[str], *flags: str, attached: bool = False) -> str | None:
    """The first of `flags` in `args` (also as `--flag=value`, and a short flag in a cluster: `-wl`;
    `attached`: also with its value attached, `-i.bak`)."""
    for arg in args:
        name = arg.split("=", 1)[0]
        if arg in flags or name in flags:
            return arg if arg in flags else name
        shorts = [f for f in flags if len(f) == 2 and f[0] == "-"]
        if re.fullmatch(r"-[A-Za-z]{2,}", arg):
            short = next((f for f in shorts if f[1] in arg[1:]), None)
            if short is not None:
                return short
        if attached and not arg.startswith("--"):
            short = next((f for f in shorts if arg.startswith(f)), None)
            if short is not None:
                return short
    return None


def _flag_writes(program: str, *flags: str, unless: tuple[str, ...] = ()) -> Rule:
    """`program` writes when given one of `flags` (and none of `unless`)."""

    def rule(args: list[str]) -> str | None:
        flag = _has(args, *flags, attached=True)
        if flag is None or _has(args, *unless):
            return None
        return f"{program} {flag} rewrites files in place"

    return rule


def _writes_unless(program: str, *checks: str) -> Rule:
    """`program` writes by default; one of `checks` makes it only report."""

    def rule(args: list[str]) -> str | None:
        if _has(args, *checks, *_INFO):
            return None
        hint = " or ".join(checks[:2])
        return f"{program} rewrites files in place" + (f" (with {hint} it only reports)" if hint else "")

    return rule


def _subcommands(program: str, rules: dict[str, Rule]) -> Rule:
    """Rules by the first positional argument (`cargo fmt`, `go mod tidy`: "mod tidy")."""

    def rule(args: list[str]) -> str | None:
        positional = [a for a in args if not a.startswith(("-", "+"))]  # +nightly: a toolchain
        for words in (2, 1):
            key = " ".join(positional[:words])
            if len(positional) >= words and key in rules:
                rest = list(args)
                for word in positional[:words]:
                    rest.remove(word)
                return rules[key](rest)
        return None

    return rule


def _ruff_check(args: list[str]) -> str | None:
    fix = None  # the last word wins: --fix --no-fix does not fix
    for arg in args:
        name = arg.split("=", 1)[0]
        fix = name if name in ("--fix", "--fix-only") else None if name == "--no-fix" else fix
    if fix is None or _has(args, "--diff"):
        return None
    return f"ruff check {fix} rewrites files in place (without it, or with --diff, it only reports)"


_RULES: dict[str, Rule] = {
    "ruff": _subcommands("ruff", {
        "check": _ruff_check,
        "format": _writes_unless("ruff format", "--check", "--diff"),
    }),
    "black": _writes_unless("black", "--check", "--diff", "--code", "-c"),
    "isort": _writes_unless("isort", "--check-only", "--check", "-c", "--diff", "-d", "--stdout", "--show-files"),
    "autopep8": _flag_writes("autopep8", "--in-place", "-i"),
    "yapf": _flag_writes("yapf", "--in-place", "-i"),
    "autoflake": _flag_writes("autoflake", "--in-place", "-i"),
    "pyupgrade": _writes_unless("pyupgrade"),
    "docformatter": _flag_writes("docformatter", "--in-place", "-i"),
    "prettier": _flag_writes("prettier", "--write", "-w"),
    "eslint": _flag_writes("eslint", "--fix"),
    "standard": _flag_writes("standard", "--fix"),
    "stylelint": _flag_writes("stylelint", "--fix"),
    "biome": _flag_writes("biome", "--write", "--apply", "--apply-unsafe", "--fix"),
    "gofmt": _flag_writes("gofmt", "-w"),
    "goimports": _flag_writes("goimports", "-w"),
    "gofumpt": _flag_writes("gofumpt", "-w"),
    "golangci-lint": _flag_writes("golangci-lint", "--fix"),
    "go": _subcommands("go", {
        "fmt": _writes_unless("go fmt", "-n"),
        "fix": _writes_unless("go fix"),
        "generate": _writes_unless("go generate", "-n"),
        "mod tidy": _writes_unless("go mod tidy", "-diff"),
        "mod vendor": _writes_unless("go mod vendor"),
        "mod edit": _writes_unless("go mod edit", "-json", "-print"),
        "get": _writes_unless("go get"),
    }),
    "cargo": _subcommands("cargo", {
        "fmt": _writes_unless("cargo fmt", "--check"),
        "fix": _writes_unless("cargo fix"),
        "clippy": _flag_writes("cargo clippy", "--fix"),
    }),
    "rustfmt": _writes_unless("rustfmt", "--check"),
    "clang-format": _flag_writes("clang-format", "-i"),
    "clang-tidy": _flag_writes("clang-tidy", "--fix", "-fix", "--fix-errors", "-fix-errors"),
    "sed": _flag_writes("sed", "--in-place", "-i"),
    "perl": _flag_writes("perl", "-i"),
    "dotnet": _subcommands("dotnet", {"format": _writes_unless("dotnet format", "--verify-no-changes")}),
    "terraform": _subcommands("terraform", {"fmt": _writes_unless("terraform fmt", "-check", "-write=false")}),
    "mix": _subcommands("mix", {"format": _writes_unless("mix format", "--check-formatted", "--dry-run")}),
    "deno": _subcommands("deno", {"fmt": _writes_unless("deno fmt", "--check"), "lint": _flag_writes("deno lint", "--fix")}),
    "dart": _subcommands("dart", {"format": _writes_unless("dart format", "--output", "-o"),
                                  "fix": _flag_writes("dart fix", "--apply")}),
    "stylua": _writes_unless("stylua", "--check"),
    "shfmt": _flag_writes("shfmt", "--write", "-w"),
    "rubocop": _flag_writes("rubocop", "-a", "-A", "--autocorrect", "--autocorrect-all", "--auto-correct", "--auto-correct-all"),
    "php-cs-fixer": _subcommands("php-cs-fixer", {"fix": _writes_unless("php-cs-fixer fix", "--dry-run")}),
    "ktlint": _flag_writes("ktlint", "--format", "-F"),
    "scalafmt": _writes_unless("scalafmt", "--test", "--check", "--list"),
    "swiftformat": _writes_unless("swiftformat", "--lint", "--dryrun"),
    "swift-format": _flag_writes("swift-format", "--in-place", "-i"),
    "buf": _subcommands("buf", {"format": _flag_writes("buf format", "--write", "-w")}),
    "taplo": _subcommands("taplo", {"fmt": _writes_unless("taplo fmt", "--check"),
                                    "format": _writes_unless("taplo format", "--check")}),
    "pre-commit": _subcommands("pre-commit", {
        "run": lambda args: "pre-commit run runs the repository's hooks, which may fix files in place",
    }),
}

# Programs that run another program given as their first positional argument(s).
_RUNNERS: dict[str, int] = {"npx": 0, "pnpx": 0, "bunx": 0, "uvx": 0}
_RUNNER_SUBCOMMANDS = {("pipx", "run"), ("poetry", "run"), ("uv", "run"), ("pdm", "run"), ("hatch", "run"),
                       ("pnpm", "exec"), ("pnpm", "dlx"), ("npm", "exec"), ("npm", "x"), ("yarn", "exec"),
                       ("yarn", "dlx"), ("bun", "x"), ("rye", "run"), ("pipenv", "run")}
_SCRIPT_RUNNERS = {"npm", "pnpm", "yarn", "bun"}
_SCRIPT_SPLIT = re.compile(r"&&|\|\||;|\|")
_MAX_DEPTH = 4


def _program(argv: list[str]) -> tuple[str, list[str]] | None:
    """(program, its arguments) with runners looked through, or None when nothing runs."""
    argv = list(argv)
    for _ in range(_MAX_DEPTH):
        if not argv:
            return None
        name = Path(argv[0]).name
        name = re.sub(r"(\.exe|\.cmd)$", "", name)
        args = argv[1:]
        if re.fullmatch(r"python[0-9.]*", name) and args[:1] == ["-m"] and len(args) > 1:
            argv = args[1:]
            continue
        if name in _RUNNERS:
            argv = _after_options(args)
            continue
        if args and (name, args[0]) in _RUNNER_SUBCOMMANDS:
            argv = _after_options(args[1:])
            continue
        return name, args
    return None


def _after_options(args: list[str]) -> list[str]:
    """A runner's arguments from the program it runs (its own options and `--` skipped)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        if rest.pop(0) == "--":
            break
    return rest


def _script(root: Path | None, name: str) -> str | None:
    """The body of the package.json script `name` (None: no such script, or no readable file)."""
    if root is None:
        return None
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
    except (OSError, ValueError, AttributeError):
        return None
    body = scripts.get(name) if isinstance(scripts, dict) else None
    return body if isinstance(body, str) else None


def _script_writes(runner: str, args: list[str], root: Path | None, depth: int) -> str | None:
    extra = args[args.index("--") + 1:] if "--" in args else []  # npm run lint -- --fix
    args = args[: len(args) - len(extra) - (1 if extra or args[-1:] == ["--"] else 0)]
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        return None
    if positional[0] in ("run", "run-script"):
        positional = positional[1:]
    elif runner == "npm" and positional[0] not in ("test", "t", "start"):
        return None  # npm's own commands (npm ci, npm ls) are not scripts
    if not positional:
        return None
    name = {"t": "test"}.get(positional[0], positional[0])
    body = _script(root, name)
    if body is None:
        if re.search(r"(^|[:_-])(format|fmt|fix|prettier|write)($|[:_-])", name):
            return f"{runner} run {name}: a script of that name usually rewrites files in place"
        return None
    parts = _SCRIPT_SPLIT.split(body)
    parts[-1] = f"{parts[-1]} {shlex.join(extra)}" if extra else parts[-1]
    for part in parts:
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]  # FOO=bar prettier --write .
        why = writes(words, root, depth + 1)
        if why:
            return f"{runner} run {name} runs {part.strip()!r}: {why}"
    return None


def writes(argv: list[str], root: Path | None = None, depth: int = 0) -> str | None:
    """Why the command `argv` rewrites files in place (None: it does not, as far as the rules
    know). `root`: the workspace, to read the scripts of `package.json` for `npm run ...`."""
    if depth > _MAX_DEPTH:
        return None
    found = _program(argv)
    if found is None:
        return None
    name, args = found
    if name in _SCRIPT_RUNNERS:
        return _script_writes(name, args, root, depth)
    rule = _RULES.get(name)
    return rule(args) if rule is not None else None


def check_form(argv: list[str]) -> list[str]:
    """`argv` as it is run when it only checks: `ruff check` gets `--no-fix`, so a repository's
    `fix = true` cannot turn it into a write. Other commands are unchanged."""
    found = _program(argv)
    if found is None or found[0] != "ruff":
        return argv
    args = found[1]
    positional = [a for a in args if not a.startswith("-")]
    if positional[:1] != ["check"] or _has(args, "--fix", "--fix-only", "--no-fix", "--diff"):
        return argv
    at = len(argv) - len(args) + args.index("check") + 1
    return [*argv[:at], "--no-fix", *argv[at:]]

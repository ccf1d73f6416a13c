"""Command policy: which command lines `bash.run` and verification may execute.

A command line is parsed with `shlex` and must start with one of the
allowlisted prefixes (whole tokens: `cargo test` allows `cargo test -q` but not
`cargo testx` or `cargo build`). Refused outright: shell metacharacters
(chaining, pipes, redirection, command substitution, backticks, newlines)
unless `allow_shell_metacharacters`, environment-variable prefixes
(`FOO=bar cmd`), argument files (`pytest @args.txt`: arguments this check would
not see), flags that make an allowed program run another program or
write files (`rg --pre`, `git -c`, `find -exec`, ...), and arguments that point
outside the workspace (absolute paths, `..`). Long options are matched as the
programs themselves match them: an unambiguous abbreviation (`make --ev`,
`npm --usercon`) is the option, and Go takes `--exec` for `-exec`.

Passing that check is not enough to run unprompted. `CheckedCommand.review`
lists why a command has an unsafe *shape*: any option or argument outside the
small table of known-harmless options for its program (`_SAFE_OPTIONS`), a
`make VAR=value` override, any extra argument to a program the table does not
know. Such a command always needs an explicit approval (docs/tools.md).
`CheckedCommand.writes` says why a command rewrites files in place (a formatter
in write mode, a linter's fix mode: `policy/write_commands.py`); it is approved
like an edit. A command that only checks runs in its check form (`ruff check
--no-fix`). Commands run without a shell, inside the OS sandbox (`policy/sandbox.py`).
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy.errors import PolicyViolation
from deepseek_ls.policy.write_commands import check_form, writes

_META = {
    ";": "';' chains commands",
    "&": "'&' chains or backgrounds commands",
    "|": "'|' pipes into another command",
    ">": "'>' redirects output to a file",
    "<": "'<' redirects input from a file",
    "`": "backticks run a command substitution",
    "$": "'$' expands variables or runs command substitution",
    "(": "parentheses start a subshell",
    ")": "parentheses start a subshell",
    "\n": "a newline starts another command",
    "\r": "a carriage return can hide another command",
}
_ENV_PREFIX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# Flags that turn a harmless program into a way to run arbitrary programs or
# write arbitrary files. Matched on the token itself and as `--flag=value`.
_DANGEROUS_FLAGS: dict[str, set[str]] = {
    "rg": {"--pre", "--pre-glob", "--search-zip", "-z", "--follow", "-L", "--hostname-bin"},
    "git": {
        "-c", "--config-env", "--exec-path", "--ext-diff", "--output", "-o", "--upload-pack",
        "--receive-pack", "--git-dir", "--work-tree", "-C", "--textconv",
    },
    "find": {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
    "make": {"-f", "--file", "--makefile", "-C", "--directory", "--eval", "-E", "-I", "--include-dir",
             "-o", "--old-file", "--assume-old", "-W", "--what-if", "--new-file", "--assume-new"},
    "npm": {"--prefix", "--userconfig", "--globalconfig", "--script-shell", "--node-options", "--cache",
            "--init-module", "--shell", "--registry"},
    "cargo": {"--config", "-Z", "--manifest-path", "--target-dir", "--out-dir", "--artifact-dir"},
    "pytest": {"--basetemp", "--rootdir", "-c", "--config-file", "--inifile", "--confcutdir", "--override-ini", "-o",
               "-p", "--junitxml", "--junit-xml", "--debug", "--log-file", "--resultlog", "--result-log",
               "--pastebin", "--cov-report", "--import-mode", "--report-log", "--html"},
    "python": {"-c"},
    "go": {"-exec", "-toolexec", "-o", "-c", "-C", "-overlay", "-modfile", "-pkgdir", "-coverprofile", "-cpuprofile",
           "-memprofile", "-blockprofile", "-mutexprofile", "-trace", "-outputdir", "-ldflags", "-gcflags",
           "-asmflags", "-gccgoflags", "-args"},
    "mypy": {"--config-file", "--cache-dir"},
    "ruff": {"--config", "--cache-dir"},  # --fix: a write, asked for (policy/write_commands.py)
}


# Programs that read more arguments from a file named `@FILE` (argparse's fromfile_prefix_chars:
# pytest 8.2+, mypy). The policy cannot see those arguments, so such an argument is refused.
_ARGUMENT_FILES = {"pytest", "mypy"}

# Programs whose short options can be clustered (`-zi` is `-z -i`).
_GETOPT = {"rg", "git", "make", "pytest", "cargo", "ruff", "mypy", "npm", "python"}


def _flag_names(program: str, arg: str) -> list[str]:
    name = arg.split("=", 1)[0]
    if program == "go" and name.startswith("--"):
        name = name[1:]  # Go's flag package takes --exec for -exec
    names = [name]
    if program in _GETOPT and name.startswith("-") and not name.startswith("--") and len(name) > 2:
        names += [f"-{c}" for c in name[1:]]
    return names


def _abbreviates(program: str, name: str, flags: set[str]) -> str | None:
    """The dangerous long option `name` abbreviates (`--ev` for `--eval`): getopt_long, argparse
    and npm's nopt all accept an unambiguous prefix."""
    if program == "go" or not name.startswith("--") or len(name) < 4:
        return None
    return next((f for f in sorted(flags) if f.startswith("--") and f.startswith(name)), None)


# Options each known program may take without an explicit approval: option -> whether it takes a
# value. Everything else (including options that are harmless but not listed) needs approval.
_B, _V = False, True
_SAFE_OPTIONS: dict[str, dict[str, bool]] = {
    "pytest": {
        "-q": _B, "--quiet": _B, "-v": _B, "--verbose": _B, "-x": _B, "--exitfirst": _B, "-s": _B, "-l": _B,
        "--showlocals": _B, "-k": _V, "-m": _V, "--tb": _V, "--maxfail": _V, "--lf": _B, "--last-failed": _B,
        "--ff": _B, "--failed-first": _B, "--no-header": _B, "--no-summary": _B, "-r": _V, "--durations": _V,
        "--color": _V, "--co": _B, "--collect-only": _B, "--strict-markers": _B, "--runxfail": _B,
        "--disable-warnings": _B, "-n": _V, "--sw": _B, "--stepwise": _B, "--capture": _V, "--full-trace": _B,
    },
    "cargo": {
        "-q": _B, "--quiet": _B, "-v": _B, "--verbose": _B, "--all": _B, "--workspace": _B, "--lib": _B,
        "--bins": _B, "--tests": _B, "--doc": _B, "--release": _B, "--locked": _B, "--offline": _B, "--frozen": _B,
        "--no-fail-fast": _B, "--all-features": _B, "--all-targets": _B, "--no-default-features": _B,
        "--check": _B, "-p": _V, "--package": _V, "--test": _V, "--features": _V, "-j": _V, "--jobs": _V,
    },
    "npm": {"--silent": _B, "-s": _B, "--quiet": _B},
    "go": {
        "-v": _B, "-short": _B, "-race": _B, "-cover": _B, "-failfast": _B, "-json": _B, "-count": _V,
        "-run": _V, "-skip": _V, "-timeout": _V, "-bench": _V, "-benchtime": _V, "-tags": _V, "-shuffle": _V,
        "-p": _V, "-parallel": _V, "-vet": _V,
    },
    "git": {
        "--stat": _B, "--name-only": _B, "--name-status": _B, "--oneline": _B, "-n": _V, "--max-count": _V,
        "--cached": _B, "--staged": _B, "--short": _B, "-s": _B, "--porcelain": _B, "-p": _B, "--patch": _B,
        "--no-color": _B, "--shortstat": _B, "--graph": _B, "--decorate": _B, "-b": _B, "--branch": _B,
        "--word-diff": _B, "-w": _B, "--ignore-all-space": _B, "--since": _V, "--until": _V, "--author": _V,
        "--grep": _V, "--all": _B, "--reverse": _B, "--unified": _V, "-U": _V, "--untracked-files": _V,
        "--check": _B, "--no-ext-diff": _B, "--no-textconv": _B, "--format": _V, "--pretty": _V,
    },
    "rg": {
        "-i": _B, "--ignore-case": _B, "-S": _B, "--smart-case": _B, "-n": _B, "--line-number": _B,
        "-l": _B, "--files-with-matches": _B, "-c": _B, "--count": _B, "-w": _B, "--word-regexp": _B,
        "-F": _B, "--fixed-strings": _B, "-g": _V, "--glob": _V, "-t": _V, "--type": _V, "-T": _V,
        "--type-not": _V, "-A": _V, "-B": _V, "-C": _V, "--context": _V, "--files": _B, "-m": _V,
        "--max-count": _V, "--hidden": _B, "-e": _V, "--regexp": _V, "-v": _B, "--invert-match": _B,
        "-o": _B, "--only-matching": _B, "--json": _B, "--no-heading": _B, "-H": _B, "--heading": _B,
        "--sort": _V, "--max-columns": _V, "--color": _V, "-N": _B, "--no-line-number": _B,
    },
    "ruff": {
        "-q": _B, "--quiet": _B, "--select": _V, "--ignore": _V, "--extend-select": _V, "--statistics": _B,
        "--output-format": _V, "--show-fixes": _B, "--no-cache": _B, "--diff": _B,
    },
    "mypy": {
        "--strict": _B, "--ignore-missing-imports": _B, "--no-incremental": _B, "--show-error-codes": _B,
        "--pretty": _B, "--no-error-summary": _B, "-p": _V, "--package": _V, "-m": _V, "--module": _V,
        "--python-version": _V, "--check-untyped-defs": _B, "--follow-imports": _V,
    },
    "make": {"-k": _B, "--keep-going": _B, "-s": _B, "--silent": _B, "-j": _V, "--jobs": _V},
}
# What `cargo test -- ...` may pass to the test binary without approval.
_CARGO_TEST_ARGS = {"--nocapture", "--exact", "--ignored", "--include-ignored", "--quiet", "-q", "--show-output"}


def shape_review(program: str, args: list[str]) -> list[str]:
    """Why `program args...` (the arguments after the allowlisted prefix) is not a known-safe shape."""
    table = _SAFE_OPTIONS.get(program)
    if table is None:
        if args:
            return [f"extra arguments {shlex.join(args)!r} for {program}, which has no table of safe options"]
        return []
    reasons: list[str] = []
    i = 0
    after_dashdash = False
    while i < len(args):
        arg = args[i]
        i += 1
        if after_dashdash or arg == "-" or not arg.startswith("-"):
            if program == "make" and "=" in arg:
                reasons.append(f"{arg!r} overrides a make variable (it can change the commands make runs)")
            elif after_dashdash and program == "cargo" and arg.startswith("-") and arg.split("=", 1)[0] not in (
                *_CARGO_TEST_ARGS, "--test-threads"
            ):
                reasons.append(f"{arg!r} is passed to the test binary and is not a known-safe option")
            elif after_dashdash and program == "npm" and arg.startswith("-"):
                reasons.append(f"{arg!r} is passed to the package's script")
            continue
        if arg == "--":
            after_dashdash = True
            continue
        if program == "git" and arg[1:].isdigit():  # git log -5
            continue
        name, eq, _ = arg.partition("=")
        if program == "go":
            name = name[1:] if name.startswith("--") else name
        if name.startswith("--") or program == "go":
            if name not in table:
                reasons.append(f"option {arg!r} is not a known-safe option of {program}")
            elif table[name] and not eq:
                i += 1  # its value
            elif not table[name] and eq:
                reasons.append(f"option {name!r} of {program} takes no value")
            continue
        # Short options, possibly clustered (-qx) or with an attached value (-k expr, -kexpr, -n4).
        for pos in range(1, len(arg)):
            short = "-" + arg[pos]
            if short not in table:
                reasons.append(f"option {short!r} (in {arg!r}) is not a known-safe option of {program}")
                break
            if table[short]:
                if pos == len(arg) - 1:
                    i += 1  # the value is the next argument
                break
    return reasons


@dataclass(frozen=True)
class CheckedCommand:
    argv: list[str]
    matched_prefix: str
    shell: bool = False
    # Why this command needs an explicit approval whatever the approval mode (empty: a safe shape).
    review: tuple[str, ...] = ()
    # Why it rewrites files in place, outside any patch review (empty: it does not, as far as we know).
    writes: tuple[str, ...] = ()


# Git run as a command gets `policy/git_safety.py`'s hardening (`tools/shell.py`); inside a shell line
# it cannot (the line is /bin/sh's), so the approval says so.
_SHELL_GIT = ("git runs through /bin/sh here, without the hardening a plain git command gets: "
              "the repository's own configured programs (fsmonitor, filters, textconv) may run")


class CommandPolicy:
    def __init__(self, policy_config: PolicyConfig | None = None, root: Path | None = None) -> None:
        self.config = policy_config or PolicyConfig()
        self.prefixes = [shlex.split(p) for p in self.config.allowlist if p.strip()]
        self.root = root  # the workspace: its package.json says what `npm run SCRIPT` runs

    def check(self, cmd: str | list[str]) -> list[str]:
        """The argv to execute for `cmd`, or `PolicyViolation` saying why it is refused."""
        return self.inspect(cmd).argv

    def inspect(self, cmd: str | list[str]) -> CheckedCommand:
        line = cmd if isinstance(cmd, str) else shlex.join(cmd)
        if not line.strip():
            raise PolicyViolation(line, "empty_command", "the command is empty")
        if any(unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\r\t" for c in line):
            raise PolicyViolation(line, "control_character", "the command contains control or invisible characters")
        if self.config.allow_shell_metacharacters:
            return self._inspect_shell(line)
        for ch in line:
            if ch in _META:
                raise PolicyViolation(
                    line,
                    "metacharacter",
                    f"{_META[ch]}; shell metacharacters are refused (policy.allow_shell_metacharacters is off)",
                )
        if isinstance(cmd, list):
            argv = list(cmd)
        else:
            try:
                argv = shlex.split(line)
            except ValueError as exc:
                raise PolicyViolation(line, "unparsable", f"the command cannot be parsed: {exc}") from None
        prefix, review = self._check_argv(line, argv)
        why = writes(argv, self.root)
        return CheckedCommand(argv=argv if why else check_form(argv), matched_prefix=prefix, review=tuple(review),
                              writes=(why,) if why else ())

    def _inspect_shell(self, line: str) -> CheckedCommand:
        # Chaining is enabled, but every command in the chain must be allowlisted,
        # and redirection / substitution stay refused.
        for ch in "<>`$()\n\r":
            if ch in line:
                raise PolicyViolation(
                    line, "metacharacter", f"{_META[ch]}; refused even with shell metacharacters enabled"
                )
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError as exc:
            raise PolicyViolation(line, "unparsable", f"the command cannot be parsed: {exc}") from None
        segment: list[str] = []
        prefixes = []
        written: list[str] = []
        review = ["shell metacharacters are enabled: the line runs through /bin/sh"]
        for tok in tokens + [";"]:
            if tok and set(tok) <= set(";&|"):
                if tok not in (";", "&&", "||", "|"):
                    raise PolicyViolation(line, "metacharacter", f"{tok!r} is not an allowed operator")
                if not segment:
                    raise PolicyViolation(line, "empty_command", "an operator has no command before it")
                prefix, why = self._check_argv(line, segment)
                prefixes.append(prefix)
                review += why
                if segment[0].rsplit("/", 1)[-1] == "git" and _SHELL_GIT not in review:
                    review.append(_SHELL_GIT)
                if why := writes(segment, self.root):
                    written.append(why)
                segment = []
            else:
                segment.append(tok)
        return CheckedCommand(
            argv=["/bin/sh", "-c", line], matched_prefix=" ; ".join(prefixes), shell=True, review=tuple(review),
            writes=tuple(written),
        )

    def _check_argv(self, line: str, argv: list[str]) -> tuple[str, list[str]]:
        if not argv:
            raise PolicyViolation(line, "empty_command", "the command is empty")
        if _ENV_PREFIX.match(argv[0]):
            raise PolicyViolation(line, "env_prefix", "environment-variable prefixes (FOO=bar cmd) are refused")
        prefix = next((p for p in self.prefixes if argv[: len(p)] == p), None)
        if prefix is None:
            allowed = ", ".join(shlex.join(p) for p in self.prefixes)
            raise PolicyViolation(
                line, "not_allowlisted", f"the command is not in the allowlist (policy.allowlist: {allowed})"
            )
        program = argv[0]
        if program in ("python", "python3"):
            program = "pytest" if argv[1:3] == ["-m", "pytest"] else "python"
        flags = _DANGEROUS_FLAGS.get(program, set())
        safe = _SAFE_OPTIONS.get(program, {})
        for arg in argv[1:]:
            if program in _ARGUMENT_FILES and arg.startswith("@"):
                raise PolicyViolation(
                    line, "argument_file",
                    f"{arg!r} makes {program} read more arguments from a file, which this check cannot see; "
                    "give the arguments on the command line",
                )
            for name in _flag_names(program, arg):
                if name in flags:
                    raise PolicyViolation(
                        line, "dangerous_flag", f"{name!r} is refused for {program}: it can run other programs or write files"
                    )
                full = None if name in safe else _abbreviates(program, name, flags)
                if full is not None:
                    raise PolicyViolation(
                        line, "dangerous_flag",
                        f"{name!r} abbreviates {full!r}, which is refused for {program}: it can run other programs or write files",
                    )
            self._check_path_arg(line, arg)
        return shlex.join(prefix), shape_review(program, argv[len(prefix):])

    @staticmethod
    def _check_path_arg(line: str, arg: str) -> None:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", value):
            raise PolicyViolation(line, "absolute_path", f"argument {arg!r} points outside the workspace")
        if ".." in re.split(r"[\\/]", value):
            raise PolicyViolation(line, "dotdot", f"argument {arg!r} climbs out with '..'")

"""Command policy: which command lines `bash.run` and verification may execute.

A command line is parsed with `shlex` and must start with one of the
allowlisted prefixes (whole tokens: `cargo test` allows `cargo test -q` but not
`cargo testx` or `cargo build`). Refused outright: shell metacharacters
(chaining, pipes, redirection, command substitution, backticks, newlines)
unless `allow_shell_metacharacters`, environment-variable prefixes
(`FOO=bar cmd`), flags that make an allowed program run another program or
write files (`rg --pre`, `git -c`, `find -exec`, ...), and arguments that point
outside the workspace (absolute paths, `..`). Commands run without a shell.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy.errors import PolicyViolation

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
    "make": {"-f", "--file", "--makefile", "-C", "--directory", "--eval", "-E"},
    "npm": {"--prefix", "--userconfig", "--globalconfig", "--script-shell"},
    "cargo": {"--config", "-Z", "--manifest-path"},
    "pytest": {"--basetemp", "--rootdir", "-c", "--confcutdir", "--override-ini", "-o"},
    "python": {"-c"},
    "go": {"-exec", "-toolexec", "-o"},
    "mypy": {"--config-file", "--cache-dir"},
    "ruff": {"--config", "--fix", "--cache-dir"},
}


# Programs whose short options can be clustered (`-zi` is `-z -i`).
_GETOPT = {"rg", "git", "make", "pytest", "cargo", "ruff", "mypy", "npm", "python"}


def _flag_names(program: str, arg: str) -> list[str]:
    name = arg.split("=", 1)[0]
    names = [name]
    if program in _GETOPT and name.startswith("-") and not name.startswith("--") and len(name) > 2:
        names += [f"-{c}" for c in name[1:]]
    return names


@dataclass(frozen=True)
class CheckedCommand:
    argv: list[str]
    matched_prefix: str
    shell: bool = False


class CommandPolicy:
    def __init__(self, policy_config: PolicyConfig | None = None) -> None:
        self.config = policy_config or PolicyConfig()
        self.prefixes = [shlex.split(p) for p in self.config.allowlist if p.strip()]

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
        prefix = self._check_argv(line, argv)
        return CheckedCommand(argv=argv, matched_prefix=prefix)

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
        for tok in tokens + [";"]:
            if tok and set(tok) <= set(";&|"):
                if tok not in (";", "&&", "||", "|"):
                    raise PolicyViolation(line, "metacharacter", f"{tok!r} is not an allowed operator")
                if not segment:
                    raise PolicyViolation(line, "empty_command", "an operator has no command before it")
                prefixes.append(self._check_argv(line, segment))
                segment = []
            else:
                segment.append(tok)
        return CheckedCommand(argv=["/bin/sh", "-c", line], matched_prefix=" ; ".join(prefixes), shell=True)

    def _check_argv(self, line: str, argv: list[str]) -> str:
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
        for arg in argv[1:]:
            for name in _flag_names(program, arg):
                if name in flags:
                    raise PolicyViolation(
                        line, "dangerous_flag", f"{name!r} is refused for {program}: it can run other programs or write files"
                    )
            self._check_path_arg(line, arg)
        return shlex.join(prefix)

    @staticmethod
    def _check_path_arg(line: str, arg: str) -> None:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if value.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", value):
            raise PolicyViolation(line, "absolute_path", f"argument {arg!r} points outside the workspace")
        if ".." in re.split(r"[\\/]", value):
            raise PolicyViolation(line, "dotdot", f"argument {arg!r} climbs out with '..'")

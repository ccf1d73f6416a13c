"""Verification: the plan's commands, else commands derived from the project type.

Each command is policy-checked (allowlist) and run inside the OS sandbox with
`agent_loop.verify_timeout_seconds`; success is exit status 0. A command in an
unsafe shape (or any command without a sandbox) first needs an explicit approval
(`World.run_command`). A command refused by policy or not approved is not a
failure of the code: the outcome says `refused` and the loop pauses for the
person instead of asking the model to "fix" it. Nor is a command whose program
cannot run here (missing, not executable, hidden by the OS sandbox: `policy/launch.py`):
the outcome says `not_run` and the loop pauses with what to do. Every run is a
`VerificationRun@v1` with the failure fingerprint the classifier uses; one that could not
run is recorded with no exit status and its output starting `NOT_RUN_PREFIX`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from deepseek_ls.agent.failures import fingerprint
from deepseek_ls.policy import PolicyViolation
from deepseek_ls.policy.approvals import Refused, said
from deepseek_ls.policy.launch import ProgramNotRun
from deepseek_ls.sink import EventSink

# How a verification whose program could not run is recorded (replay raises it again from this).
NOT_RUN_PREFIX = "[not run] "


def derive_commands(root: Path) -> list[str]:
    """Commands for the project type when the plan gives none (pyproject/pytest, Cargo, package.json, Go)."""
    commands: list[str] = []
    if (root / "Cargo.toml").is_file():
        commands.append("cargo test")
    if (root / "go.mod").is_file():
        commands.append("go test ./...")
    package = root / "package.json"
    if package.is_file():
        try:
            if "test" in (json.loads(package.read_text(encoding="utf-8")).get("scripts") or {}):
                commands.append("npm test")
        except (OSError, ValueError):
            pass
    pythonish = any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini"))
    if pythonish or (root / "tests").is_dir():
        commands.append("python -m pytest -q")
    return commands


@dataclass
class VerifyOutcome:
    ok: bool
    command: str | None = None
    output: str = ""
    fingerprint: str | None = None
    commands: list[str] = field(default_factory=list)
    refused: str | None = None  # why `command` was not run (policy refusal, approval denied)
    not_run: str | None = None  # why `command`'s program could not run here, and what to do
    refusal: Refused | None = None  # the person did not approve it (deny, cancel, no answer)


class Verifier:
    def __init__(self, world, sink: EventSink, *, timeout: float, fingerprint_lines: int) -> None:
        self.world = world
        self.sink = sink
        self.timeout = timeout
        self.fingerprint_lines = fingerprint_lines

    async def verify(self, commands: list[str]) -> VerifyOutcome:
        """Run `commands` in order; stop at the first failure."""
        if not commands:
            commands = derive_commands(self.world.root)
        for command in commands:
            try:
                result = await self.world.run_command(command, self.timeout)
            except PolicyViolation as exc:
                output = f"refused by policy: {exc}"
                self._emit(command, None, False, output, 0.0, fingerprint(output, self.fingerprint_lines))
                return VerifyOutcome(False, command, output, None, commands, refused=str(exc))
            except ProgramNotRun as exc:
                output = NOT_RUN_PREFIX + str(exc)
                self._emit(command, None, False, output, 0.0, None)
                return VerifyOutcome(False, command, output, None, commands, not_run=str(exc))
            except Refused as exc:
                output = f"not approved: {said(exc.answer, exc.reason)}"
                self._emit(command, None, False, output, 0.0, fingerprint(output, self.fingerprint_lines),
                           refusal={"answer": exc.answer, "reason": exc.reason})
                return VerifyOutcome(False, command, output, None, commands, refused=output, refusal=exc)
            fp = None if result.ok else fingerprint(result.output, self.fingerprint_lines)
            self._emit(command, result.exit_code, result.ok, result.output, result.duration_ms, fp)
            if not result.ok:
                return VerifyOutcome(False, command, result.output, fp, commands)
        return VerifyOutcome(True, commands=commands)

    def _emit(self, command, exit_code, ok, output, duration_ms, fp, **extra) -> None:
        self.sink.emit(
            "VerificationRun@v1",
            {
                "command": command,
                "exit_code": exit_code,
                "ok": ok,
                "output": output[-8000:],
                "duration_ms": duration_ms,
                "fingerprint": fp,
                **extra,
            },
        )

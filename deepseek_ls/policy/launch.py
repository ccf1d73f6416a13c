"""Whether a program could run at all, told apart from what it answered.

An empty answer means "nothing there" only when the program ran. Three things look like an
answer and are not:

- an exec that fails here (missing, not executable, a directory of that name, a `#!` line naming
  an interpreter that does not exist, an exec format error): Python raises `OSError`;
- an exec that fails inside the OS sandbox: bubblewrap prints `bwrap: execvp PROG: <why>` (or
  `bwrap: <setup failure>`) and exits 1 — which `rg` uses for "no matches" and a test runner
  for "tests failed". A program bwrap could not exec and which is not ELF nor `#!` is handed to
  `/bin/sh` by execvp, which then exits 126/127;
- a process killed by a signal (negative status here, 128 + the signal through bwrap).

`check_program` is the pre-flight every run does on the host before starting anything;
`exec_error` turns a failed exec into `ProgramNotRun`; `sandbox_failure` recognises bwrap's own
failure after the run (`tools/proc.py` applies all three to every command a tool or a verification
starts); `killed_by` names the signal. Each says what happened and what to do.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import stat

# bwrap's own messages: every one starts with this (bubblewrap's die()), and it then exits 1.
_BWRAP = "bwrap: "
_EXECVP = re.compile(r"^bwrap: execvp (?P<program>.*?): (?P<why>[^:]+)$")
_BWRAP_ROOTS = ("/newroot", "/oldroot")  # where bwrap mounts the new and the host's root while it sets up
_SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/etc/")
_INSTALL_HINT = "install it, or check the path and PATH deepseek-ls runs with"


class ProgramNotRun(RuntimeError):
    """The program a tool or a verification needs could not run (or was killed), so it answered
    nothing about the question asked. `str()` says what happened and what to do."""

    def __init__(self, program: str, reason: str, remedy: str = "", *, task: str | None = None,
                 raced: bool = False) -> None:
        self.program, self.reason, self.remedy, self.task = program, reason, remedy, task
        # The sandbox failed on a path that vanished while it started (nothing ran): a command line
        # built afresh may start (`tools/proc.py` tries once more).
        self.raced = raced
        text = f"{program} could not run: {reason}" + (f"; {remedy}" if remedy else "")
        super().__init__(f"{task} failed: {text}" if task else text)

    def during(self, task: str) -> ProgramNotRun:
        """The same failure, said as the failure of `task` ("search failed: rg could not run: ...")."""
        return ProgramNotRun(self.program, self.reason, self.remedy, task=task, raced=self.raced)


def program_of(argv: list[str], *, sandboxed: bool) -> str:
    """The program `argv` runs: the word after bwrap's `--` when it is a sandbox's command line."""
    if sandboxed and "--" in argv:
        return argv[argv.index("--") + 1]
    return argv[0]


def check_program(program: str, path: str | None) -> str:
    """Pre-flight on the host: the file `program` runs as (looked up on `path` when it has no
    slash), raising `ProgramNotRun` when it is not there or is not something that can run."""
    if os.sep not in program:
        found = shutil.which(program, path=path)
        if found is None:
            raise _not_found(program, path)
        program = found
    problem = _problem(program)
    if problem is not None:
        raise ProgramNotRun(program, *problem)
    return program


def exec_error(program: str, error: OSError) -> ProgramNotRun:
    """Why starting `program` here failed (the `OSError` of the exec), as `ProgramNotRun`."""
    problem = _problem(program) if os.sep in program else None
    if problem is not None:
        return ProgramNotRun(program, *problem)
    if error.errno == errno.ENOEXEC:
        return ProgramNotRun(program, "it is not a program this machine can run (exec format error)",
                             "reinstall it for this platform")
    if error.errno == errno.ENOENT and os.path.exists(program):
        return ProgramNotRun(program, "the loader or interpreter it needs does not exist (built for another "
                             "system, or its environment moved)", "reinstall it")
    if error.errno == errno.ENOENT:
        return ProgramNotRun(program, "it is not installed (not found)", _INSTALL_HINT)
    if error.errno in (errno.EACCES, errno.EPERM):
        return ProgramNotRun(program, "permission denied", "make it executable (chmod +x) or reinstall it")
    return ProgramNotRun(program, error.strerror or str(error), _INSTALL_HINT)


def sandbox_failure(program: str, exit_code: int | None, stdout: bytes, stderr: bytes) -> ProgramNotRun | None:
    """`ProgramNotRun` when a sandboxed run ended as bubblewrap's own failure (it never ran
    `program`), else None (the program ran: its exit status and output are its answer)."""
    lines = [line for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if exit_code == 1 and not stdout.strip() and lines and all(line.startswith(_BWRAP) for line in lines):
        match = _EXECVP.match(lines[-1])
        if match is None:
            said = lines[-1][len(_BWRAP):]
            return ProgramNotRun(program, f"the OS sandbox could not start it ({said})",
                                 "check that bubblewrap works here (docs/tools.md, \"OS sandbox\")",
                                 raced=any(not os.path.lexists(path) for path in _paths_named(said)))
        return _hidden(match["program"], match["why"])
    if exit_code in (126, 127) and not stdout.strip() and os.sep in program and _not_loadable(program):
        return ProgramNotRun(program, "it is not a program this machine can run (neither a binary for it nor a "
                             "script with a #! line)", "reinstall it for this platform")
    return None


def _paths_named(said: str) -> list[str]:
    """The host paths a bwrap setup failure names ("Can't mkdir parents for /a/b: Read-only file
    system", "Can't bind mount /oldroot/a on /newroot/b: ..."), without bwrap's own prefixes."""
    head = said.rsplit(": ", 1)[0]  # the last part is strerror
    paths = []
    for part in head.split(" on "):
        start = part.find("/") if part.startswith("/") else part.find(" /") + 1
        if start > 0 or part.startswith("/"):
            path = part[start:]
            for prefix in _BWRAP_ROOTS:
                if path == prefix or path.startswith(prefix + "/"):
                    path = path[len(prefix):] or "/"
            paths.append(path)
    return paths


def killed_by(exit_code: int | None, *, sandboxed: bool) -> str | None:
    """The signal that ended a process ("SIGKILL"), or None when it exited by itself. Through
    bubblewrap a signal is reported as exit 128 + its number (there, exit 129+ is taken as one)."""
    if exit_code is None:
        return None
    number = -exit_code if exit_code < 0 else exit_code - 128 if sandboxed and exit_code > 128 else None
    if number is None:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# -- what is wrong with a program file ---------------------------------------------------------


def _problem(program: str) -> tuple[str, str] | None:
    """(what is wrong, what to do) with the file `program`, or None when it can be started."""
    try:
        st = os.stat(program)
    except FileNotFoundError:
        if os.path.islink(program):
            return f"it is a link to {os.readlink(program)}, which does not exist", "reinstall it"
        return "it does not exist", _INSTALL_HINT
    except OSError as error:
        return f"it cannot be looked at ({error.strerror})", _INSTALL_HINT
    if stat.S_ISDIR(st.st_mode):
        return "it is a directory, not a program", "remove or rename that directory, or install the program"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file", _INSTALL_HINT
    if not os.access(program, os.X_OK):
        return (f"it is not executable (mode {stat.S_IMODE(st.st_mode):o})",
                f"make it executable (chmod +x {program}) or reinstall it")
    interpreter = _interpreter(program)
    if interpreter is not None and not os.path.exists(interpreter):
        return (f"its interpreter {interpreter} (on its #! line) does not exist",
                "reinstall it (its environment may have moved or been deleted)")
    return None


def _interpreter(program: str) -> str | None:
    """The absolute interpreter a `#!` script names, or None."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    return words[0] if words and words[0].startswith("/") else None


def _not_loadable(program: str) -> bool:
    """Neither an ELF binary nor a `#!` script: execvp hands it to /bin/sh."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return not (head.startswith(b"\x7fELF") or head.startswith(b"#!"))


def _not_found(program: str, path: str | None) -> ProgramNotRun:
    """`program` is on no `path` directory as something that runs; say what is there instead."""
    for entry in (path or "").split(os.pathsep):
        candidate = os.path.join(entry, program) if entry else ""
        if candidate and os.path.lexists(candidate):
            problem = _problem(candidate)
            if problem is not None:
                return ProgramNotRun(candidate, *problem)
    return ProgramNotRun(program, "it is not installed (not found on PATH)", _INSTALL_HINT)


def _hidden(program: str, why: str) -> ProgramNotRun:
    """bwrap could not exec `program` inside the sandbox although the pre-flight found it here:
    the sandbox's view hides it (or its interpreter, or a directory on the way)."""
    if why == "No such file or directory":
        interpreter = _interpreter(program) if os.sep in program else None
        system = interpreter is None or interpreter.startswith(_SYSTEM_DIRS)  # the sandbox shows the system
        what = program if system else f"{program} (or {interpreter}, on its #! line)"
        return ProgramNotRun(
            program, f"the OS sandbox hides {what} (it lies where the sandbox shows an empty home or its own /tmp)",
            "install it outside the home directory and /tmp, or (under the home) show its directory read-only "
            "with policy.sandbox.readable_paths",
        )
    if why == "Permission denied":
        return ProgramNotRun(program, "inside the OS sandbox it cannot be executed (permission denied: a masked "
                             "path or a file that is not executable there)",
                             "check policy.sandbox.masked_paths and policy.deny_paths")
    return ProgramNotRun(program, f"inside the OS sandbox: {why}", _INSTALL_HINT)

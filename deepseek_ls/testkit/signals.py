"""Start a child process the way a terminal starts a command."""

from __future__ import annotations

import signal


def as_a_foreground_command() -> None:
    """`preexec_fn`: SIGINT at its default, as a terminal starts a command. A test run started in
    the background by a non-interactive shell inherits SIGINT ignored, and a command that inherits
    an ignored Ctrl-C rightly ignores it (tests/unit/cli/test_cli_interrupt.py checks that too)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

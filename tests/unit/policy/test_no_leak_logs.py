"""Never leak into a log: the records we log (stderr of the CLI and of the language server, the
editor's `window/logMessage`) pass through redaction (`policy/log_gate.py`); they were not
redacted at all. (What an MCP server prints on stderr: tests/mcp/test_no_leak_mcp_servers.py.)"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import pytest

from deepseek_ls.testkit.secret_shapes import pieces

OPENAI = ("sk-proj-" + "A1b2C3d4E5" * 7 + "F6g7" + "T3BlbkFJ" + "H8i9J0k1L2" * 2 + "-" + "m3N4o5P6q7" * 5 + "R8s")
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
KEYS = (OPENAI, SENDGRID)


def _leaks(text: str) -> list[str]:
    return [key[:10] for key in KEYS if pieces(key) & pieces(text)]


LOGS = f'''
import logging
log = logging.getLogger("deepseek_ls.demo")
log.warning("request failed for key %s", {OPENAI!r})
try:
    raise RuntimeError("bad key {SENDGRID}")
except RuntimeError:
    log.exception("the call failed")
'''


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param("from deepseek_ls.cli import _configure_logging; _configure_logging(1)", id="cli"),
        pytest.param("from deepseek_ls.lsp.logging import configure_stderr_logging; configure_stderr_logging()",
                     id="language-server"),
    ],
)
def test_no_leak_a_logged_key_on_stderr(setup: str) -> None:
    done = subprocess.run([sys.executable, "-c", setup + "\n" + LOGS], capture_output=True, text=True, timeout=60)
    assert "the call failed" in done.stderr and "RuntimeError" in done.stderr, done.stderr
    assert "[REDACTED:" in done.stderr
    assert _leaks(done.stderr) == []


def test_no_leak_a_logged_key_sent_to_the_editor() -> None:
    from deepseek_ls.lsp.logging import detach_client_logs, forward_logs_to_client

    sent: list[str] = []

    class Server:  # the one method the handler calls: what reaches the editor
        def window_log_message(self, params) -> None:
            sent.append(params.message)

    async def main() -> None:
        forward_logs_to_client(Server())  # type: ignore[arg-type]
        try:
            logging.getLogger("deepseek_ls.demo").warning("request failed for key %s and %s", OPENAI, SENDGRID)
        finally:
            detach_client_logs()

    asyncio.run(main())
    assert sent and "[REDACTED:" in sent[0]
    assert _leaks("".join(sent)) == []

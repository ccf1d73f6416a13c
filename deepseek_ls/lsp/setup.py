"""Assembling the language server: every feature module registered on one
`DeepSeekServer` (`create_server`), and running it (`run`, `deepseek-ls serve`).

Each feature lives in its own module with a `register(server)` function that adds
its handlers and, where it needs them, its hooks into other features' state. A
feature that fails to register is logged and left out (the person is told once
the client is ready); the others still work.
"""

from __future__ import annotations

import gc
import importlib
import logging

from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.transport.limits import Limits
from deepseek_ls.lsp.transport.serving import serve_stdio, serve_tcp

log = logging.getLogger(__name__)

# One module per feature, in registration order. Each exposes `register(server)`.
FEATURE_MODULES = (
    "deepseek_ls.lsp.lifecycle",
    "deepseek_ls.lsp.documents",
    "deepseek_ls.lsp.progress",
    "deepseek_ls.lsp.approvals",
    "deepseek_ls.lsp.questions",
    "deepseek_ls.lsp.edits",
    "deepseek_ls.lsp.code_lens",
    "deepseek_ls.lsp.hover",
    "deepseek_ls.lsp.commands",
    "deepseek_ls.lsp.mission",
    "deepseek_ls.lsp.rewind",
    "deepseek_ls.lsp.verification",
    "deepseek_ls.lsp.sessions",
    "deepseek_ls.lsp.transcript",
    "deepseek_ls.lsp.mcp",
    "deepseek_ls.lsp.trust",
    "deepseek_ls.lsp.lanes",
    "deepseek_ls.lsp.code_actions",
    "deepseek_ls.lsp.diagnostics",
    "deepseek_ls.lsp.review",
    "deepseek_ls.lsp.custom_commands",
    "deepseek_ls.lsp.hunk_actions",
    "deepseek_ls.lsp.comment_actions",
    "deepseek_ls.lsp.diagnostic_actions",
    "deepseek_ls.lsp.inline_completion",
)


def create_server() -> DeepSeekServer:
    """Build a server with every feature registered."""
    server = DeepSeekServer()
    for name in FEATURE_MODULES:
        try:
            importlib.import_module(name).register(server)
        except Exception as error:  # noqa: BLE001 - one feature must not take the others down
            server.failed_features[name] = f"{type(error).__name__}: {error}"
            log.exception("feature %s failed to register; continuing without it", name)
    return server


def run(
    transport: str = "stdio", host: str = "127.0.0.1", port: int = 2087, max_message_bytes: int | None = None
) -> int:
    """Run the server until the client sends `exit` or disconnects (`deepseek-ls
    serve`); the process exit code (0 after `shutdown`, else 1)."""
    from deepseek_ls.lsp.logging import configure_stderr_logging

    configure_stderr_logging()
    limits = Limits.from_env(max_message_bytes)
    server = create_server()
    # What start-up built lives as long as the process: out of every later collection (which
    # `serve` turned off while it was built, so none walked it on the way to the answer).
    gc.freeze()
    gc.enable()
    if transport == "tcp":
        return serve_tcp(server, limits, host, port)
    if transport == "stdio":
        return serve_stdio(server, limits)
    raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'tcp'")

"""`deepseek-ls acp`: serve the agent over the Agent Client Protocol on stdio (docs/acp.md)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from deepseek_ls.cli.common import add_command, resolve_context


def register(subparsers: argparse._SubParsersAction) -> None:
    add_command(
        subparsers,
        "acp",
        help="serve the agent over the Agent Client Protocol on stdio (Zed, JetBrains, CodeCompanion)",
        description=(
            "Speaks ACP v1 (JSON-RPC) on stdin/stdout for editors that host agents: Zed,\n"
            "JetBrains IDEs, CodeCompanion.nvim, avante.nvim, agent-shell. A session's workspace is\n"
            "the repository holding its cwd; --config and --profile apply to every session. Logs go\n"
            "to stderr. See docs/acp.md for the editors' settings."
        ),
        handler=_acp,
    )


def _acp(args: argparse.Namespace) -> int:
    from acp import run_agent, stdio_streams

    from deepseek_ls.acp.server import DeepSeekAcpAgent
    from deepseek_ls.acp.transport import StdioJsonRpc

    ctx = resolve_context(args, create_state=False)
    config_path = getattr(args, "config_path", None)
    agent = DeepSeekAcpAgent(ctx.root, ctx.loaded_config, config_path=Path(config_path).resolve() if config_path else None,
                             profile=getattr(args, "profile", None))

    async def serve() -> None:
        reader, writer = await stdio_streams(limit=1024 * 1024)  # the line cap is the transport's
        try:
            # Our transport, not the SDK's default framing: a stray line must not end the connection.
            await run_agent(agent, StdioJsonRpc(reader, writer))
        finally:
            await agent.aclose()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        return 130
    return 0

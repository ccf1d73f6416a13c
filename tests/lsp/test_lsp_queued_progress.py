"""A model call waiting for a slot shows "queued" in the editor's `$/progress`, then "asking".

The real server with `max_inflight = 1` for the model (user config), the fake DeepSeek on
loopback: one `deepseek.ask` is held at the server, a second one waits for the model's only slot.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from lsp_harness import run, start_client, wait_until
from lsprotocol import types

from deepseek_ls.lsp import names

QUEUED = "ask: queued for deepseek-v4-flash: 1 call(s) in flight, max_inflight 1"
ASKING = "ask: asking deepseek-v4-flash (fast)"
SETTINGS = {"index": {"enabled": False}, "llm": {"max_retries": 0}}


def messages(reports: list) -> list[str]:
    return [getattr(r, "title", None) or getattr(r, "message", None) or "" for r in reports]


async def test_a_call_waiting_for_a_model_slot_shows_queued_then_asking(
        fake_deepseek, app_workspace: Path, client_name: str, server_env: dict[str, str]) -> None:
    user_config = Path(server_env["XDG_CONFIG_HOME"]) / "deepseek-ls" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text("[models.deepseek-v4-flash]\nmax_inflight = 1\n")
    fake_deepseek.add({"match": {"role": "ask", "contains": "first"}, "content": "one", "fault": {"hold": "first"}})
    fake_deepseek.add({"match": {"role": "ask", "contains": "second"}, "content": "two"})
    env = {**server_env, "DEEPSEEK_BASE_URL": fake_deepseek.base_url, "DEEPSEEK_API_KEY": "test-key",
           "PATH": os.path.dirname(sys.executable) + os.pathsep + server_env.get("PATH", "")}
    client, _, _ = await start_client(app_workspace, client_name, env, initialization_options=SETTINGS)
    try:
        first = asyncio.ensure_future(run(client, names.CMD_ASK, {"prompt": "first question"}))
        await asyncio.to_thread(fake_deepseek.wait_for_requests, 1)  # held at the server: the slot is taken
        second = asyncio.ensure_future(run(client, names.CMD_ASK, {"prompt": "second question"}))
        (token,) = await wait_until(lambda: [t for t, r in client.progress_reports.items() if QUEUED in messages(r)])
        assert len(fake_deepseek.requests) == 1  # queued, not sent
        fake_deepseek.release("first")
        answers = await asyncio.wait_for(asyncio.gather(first, second), 60)
        assert [a["content"] for a in answers] == ["one", "two"]
        reports = await wait_until(lambda: (r := client.progress_reports[token])
                                   and isinstance(r[-1], types.WorkDoneProgressEnd) and r)
        # Begun as queued (with why), then asking once the call went to the server, then ended.
        assert messages(reports)[:2] == [QUEUED, ASKING]
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        held = [r for t, r in client.progress_reports.items() if ASKING in messages(r) and t != token]
        assert held and QUEUED not in messages(held[0])  # the first call never waited
        assert fake_deepseek.peak_inflight == {"deepseek-v4-flash": 1}
    finally:
        await client.shutdown_session()
        await client.stop()

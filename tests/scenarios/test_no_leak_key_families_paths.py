"""1,000 random real-shaped keys of each family, through the real paths: an ordinary file read
with `fs_read` (the tool host, its `ToolResult@v1` in a real `events.jsonl`), the tool message
and a pasted prompt sent by the LLM client to the fake DeepSeek server over HTTP. No
8-character piece of any key may be in what the server received or in the event log.

The keys are drawn from a seed Hypothesis chooses (a failure names the seed); the detector alone
is tested on many more draws in `tests/unit/policy/test_no_leak_key_families.py`.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.store.log import EventLog
from deepseek_ls.testkit.secret_shapes import FAMILIES, draw, line, pieces
from deepseek_ls.tools.host import ToolHost

KEYS = 1000
CHUNK = 250  # keys a file: one fs_read and one model request each, well inside the limits


async def _send_through_real_paths(root: Path, fake, lines: list[str]) -> tuple[str, str, int]:
    """(everything the fake server received, the event log's text, how many lines fs_read gave)
    after reading `lines` from ordinary files with fs_read and sending each result, and the
    lines as a pasted prompt."""
    cfg = Config()
    cfg.llm.max_retries = 0
    log = EventLog(root / "events.jsonl", str(uuid.uuid4()))
    host = ToolHost(root, cfg, sink=log)
    llm = LLMClient(cfg.llm)
    fake.requests.clear()
    read = 0
    try:
        for n in range(0, len(lines), CHUNK):
            rel = f"notes/keys-{n}.txt"
            (root / rel).parent.mkdir(exist_ok=True)
            (root / rel).write_text("".join(lines[n:n + CHUNK]))
            outcome = await host.call("fs_read", {"path": rel}, call_id=f"c{n}")
            # A file of AWS secrets or of private-key bodies is a credential file by its content,
            # never read at all: those keys take the prompt path only.
            assert outcome.ok or "secret files are never read" in (outcome.error or ""), outcome.error
            read += outcome.ok
            fake.add({"match": {"role": "planner"}, "content": "ok"})
            await llm.complete([
                {"role": "user", "content": "Here are my settings:\n" + "".join(lines[n:n + CHUNK])},
                {"role": "assistant", "content": None,
                 "tool_calls": [{"id": f"c{n}", "type": "function", "function": {"name": "fs_read", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": f"c{n}", "content": outcome.to_content()},
            ], role="planner", stream=False)
    finally:
        await llm.aclose()
        log.close()
    received = json.dumps([r.body for r in fake.requests], ensure_ascii=False)
    return received, (root / "events.jsonl").read_text(), read * CHUNK


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_leak_random_keys_through_the_request_body_and_the_event_log(family: str, tmp_path: Path,
                                                                        fake_deepseek) -> None:
    import asyncio

    @settings(max_examples=1, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2**64))
    def check(seed: int) -> None:
        rng = random.Random(seed)
        keys = [draw(family, rng) for _ in range(KEYS)]
        root = tmp_path / uuid.uuid4().hex
        root.mkdir()
        received, events, read = asyncio.run(_send_through_real_paths(root, fake_deepseek, [line(family, k) for k in keys]))
        # The keys did reach both places (masked): a test that sent nothing would prove nothing.
        assert received.count("[REDACTED:") >= KEYS + read and events.count("[REDACTED:") >= read
        seen = pieces(received) | pieces(events)
        leaked = {(k, p) for k in keys for p in pieces(k) & seen}
        assert not leaked, f"{len(leaked)} pieces of {len({k for k, _ in leaked})} keys leaked, e.g. {sorted(leaked)[:3]}"

    check()

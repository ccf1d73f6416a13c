"""1,000 random real-shaped keys of each family, through the real paths: an ordinary file read
with `fs_read` (the tool host, its `ToolResult@v1` in a real `events.jsonl`), the tool message
and a pasted prompt sent by the LLM client to the fake DeepSeek server over HTTP; and keys in
git output (the `git.diff` and `git.show` tools) and command output (`git log -p`, `git diff`, run as
verification runs them). No 8-character piece of any key may be in what the server received or
in the event log.

The keys are drawn from a seed Hypothesis chooses (a failure names the seed); the detector alone
is tested on many more draws in `tests/unit/policy/test_no_leak_key_families.py`.
"""

from __future__ import annotations

import json
import random
import subprocess
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


# Families whose keys the old redaction left half unmasked, and SendGrid's.
OUTPUT_FAMILIES = ["openai_project", "stripe_live", "sendgrid", "anthropic", "github_fine_grained"]


@pytest.mark.parametrize("family", OUTPUT_FAMILIES)
async def test_no_leak_random_keys_in_git_and_command_output(family: str, tmp_path: Path, fake_deepseek) -> None:
    """Keys of an ordinary committed file, changed in the work tree, as the `git.diff` and `git.show`
    tools show them and as an allowlisted command prints them (`git log -p`, `git diff`, run the way
    verification runs commands), sent to the model; the tools' results are in `events.jsonl`."""
    from deepseek_ls.agent.world import World
    from deepseek_ls.patch.overlay import DocumentOverlay

    rng = random.Random(f"{family}-output")
    old, new = ([draw(family, rng) for _ in range(100)] for _ in range(2))
    root = tmp_path / "ws"
    (root / "config").mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "config" / "keys.py").write_text("".join(f"KEY_{i} = '{k}'\n" for i, k in enumerate(old)))
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "keys"], cwd=root, check=True)
    (root / "config" / "keys.py").write_text("".join(f"KEY_{i} = '{k}'\n" for i, k in enumerate(new)))

    cfg = Config()
    cfg.llm.max_retries = 0
    log = EventLog(root / "events.jsonl", str(uuid.uuid4()))
    host = ToolHost(root, cfg, sink=log)
    world = World(root, cfg, sink=log, overlay=DocumentOverlay(root), patches=None)
    llm = LLMClient(cfg.llm)
    outputs = []
    try:
        for name, args in (("git_diff", {}), ("git_show", {"rev": "HEAD", "path": "config/keys.py"})):
            outcome = await host.call(name, args)
            assert outcome.ok, outcome.error
            outputs.append(outcome.to_content())
        for command in ("git log -p", "git diff"):
            result = await world.run_command(command, timeout=60)
            assert result.exit_code == 0, result.output
            outputs.append(result.output)
        for output in outputs:
            fake_deepseek.add({"match": {"role": "executor"}, "content": "ok"})
            await llm.complete([{"role": "user", "content": f"Output:\n{output}"}], role="executor", stream=False)
    finally:
        await llm.aclose()
        log.close()
    received = json.dumps([r.body for r in fake_deepseek.requests], ensure_ascii=False)
    events = (root / "events.jsonl").read_text()
    assert received.count("[REDACTED:") >= 4 * 100  # each output went, masked
    seen = pieces(received) | pieces(events)
    leaked = {k[:12] for k in old + new if pieces(k) & seen}
    assert not leaked, f"{len(leaked)} keys leaked, e.g. {sorted(leaked)[:3]}"

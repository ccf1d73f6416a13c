"""A search under a client that refuses reads, with a client we did not write: the official ACP
TypeScript SDK (`sdk_client.mjs`) refusing every `fs/read_text_file`. The planner's ripgrep search
matches a file the client refused; its line never reaches the model and the turn ends with the
refused read as its error (the client exits non-zero)."""

from __future__ import annotations

from pathlib import Path

from acp_kit import agent_env, fix_add_workspace, run_sdk_client

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

CODENAME = "launch_codename = 'BLUEHERON'\n"


def test_no_leak_acp_search_the_sdk_client_refusing_reads_sees_no_line_of_the_disk(tmp_path: Path):
    workspace = fix_add_workspace(tmp_path)
    (workspace / "notes.py").write_text(CODENAME)
    with FakeDeepSeek() as fake:
        fake.add({"match": {"role": "planner"},
                  "tool_calls": [{"name": "fs_search_rg", "arguments": {"query": "launch_codename"}}]})
        fake.add({"match": {"role": "planner"}, "content": "{}"})
        report, code = run_sdk_client(tmp_path, agent_env(fake, tmp_path), [
            {"op": "client", "refuse": {"read": True}},
            {"op": "new", "cwd": str(workspace)}, {"op": "prompt", "text": "Where is the codename set?"},
        ])
        sent = [str(m.get("content", "")) for r in fake.requests for m in r.body["messages"]]
    assert not [m for m in sent if "BLUEHERON" in m], "the refused file's line reached the model"
    prompt = next(s for s in report["steps"] if s["op"] == "prompt")
    assert code == 1 and "refused" in prompt["error"]["message"] and "notes.py" in prompt["error"]["message"], prompt
    assert str(workspace / "notes.py") in report["reads"], "the client was never asked"

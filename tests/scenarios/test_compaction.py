"""Compaction (agent/compaction.py) and the context meter (agent/context_meter.py), end to end against the
fake DeepSeek server: an executor reading big files passes the threshold, older turns are summarized by the
fast model, the pinned head (instructions, plan, files, request) is sent byte for byte as before, replay
reproduces it without the model, and a summarizer answering garbage loses nothing.

Every session is replayed by the `make_agent` fixture afterwards (`ContextCompacted@v1` is compared).
"""

from __future__ import annotations

import json

import pytest
from scenario_kit import ScriptedUI, diff, plan_json, scenario_config

from deepseek_ls.agent.replay import replay_session

PLAN = plan_json(("Fix add", ["app.py"]), verification=["python -m pytest -q -k add"])
ADD_FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
SUMMARY = {"decisions": ["read big1.py and big2.py to understand the constants"], "files_touched": ["app.py"],
           "open_questions": ["whether big3.py matters"], "plan_state": "step 1 (Fix add) under way"}
HEAD = 5  # the executor's first prompt: system (instructions), repo map, plan, files, step


def _events(agent, sid: str, kind: str) -> list[dict]:
    return [e.payload for e in agent.store.open(sid).read() if e.kind == kind]


def _big(workspace, name: str, marker: str) -> None:
    # ~6k tokens each: three of them pass a 12k threshold.
    (workspace / name).write_text("".join(f"{marker.upper()}_{i} = {i}  # {marker} constant\n" for i in range(900)))


def _script(fake, compactor: list[dict]) -> None:
    fake.add({"match": {"role": "planner"}, "content": PLAN})
    for name in ("big1.py", "big2.py", "big3.py"):
        fake.add({"match": {"role": "executor"}, "tool_calls": [{"name": "fs_read", "arguments": {"path": name}}]})
    fake.add({"match": {"role": "executor"}, "content": ADD_FIX})
    for reply in compactor:
        fake.add({"match": {"role": "compactor"}, **reply})


def summarizer_first_after(fake, executor_calls: int) -> bool:
    roles = [r.role for r in fake.requests]
    return roles.index("compactor") > [i for i, r in enumerate(roles) if r == "executor"][executor_calls - 1]


def _config(threshold: float = 0.012):
    config = scenario_config()
    config.agent_loop.compact_threshold = threshold  # of deepseek-v4-flash's 1M window: 12k tokens
    config.agent_loop.compact_keep_turns = 1
    return config


@pytest.fixture
def bigs(workspace):
    for i in (1, 2, 3):
        _big(workspace, f"big{i}.py", f"big{i}")


async def test_compaction_at_the_threshold_keeps_the_pinned_head_and_replays(make_agent, fake_deepseek, workspace,
                                                                             bigs):
    _script(fake_deepseek, [{"repeat": True, "content": json.dumps(SUMMARY)}])
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=_config())
    view = await agent.run("Fix add")
    sid = view["session_id"]
    assert view["state"] == "Completed", view.get("state_reason")
    compacted = _events(agent, sid, "ContextCompacted@v1")
    assert compacted and compacted[0]["trigger"] == "auto"
    first = compacted[0]
    # At the threshold (12k tokens), not before: the call before it was under, the first compaction over.
    calls = [p for p in _events(agent, sid, "LLMCall@v1") if p["role"] == "executor"]
    assert calls[1]["fit"]["prompt_tokens"] < 12_000 <= first["tokens_before"]
    assert summarizer_first_after(fake_deepseek, executor_calls=2)
    assert first["summary"] == SUMMARY and first["tokens_after"] < first["tokens_before"]
    assert first["replaced"]["roles"] == ["assistant", "tool"]  # the oldest answer and its tool result
    assert "BIG1_0 = 0" in first["replaced"]["text"]  # what it replaced is recorded

    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    summarizer = [r for r in fake_deepseek.requests if r.role == "compactor"]
    assert summarizer
    # Tool results are dropped first: the summarizer is told a tool ran, never sent what it read.
    assert "BIG1_0 = 0" not in json.dumps(summarizer[0].body["messages"])
    assert "called fs_read" in summarizer[0].body["messages"][1]["content"]
    # Pinned: instructions (with AGENTS.md), repo map, plan, files and the step are sent byte for byte as before.
    assert all(r.body["messages"][:HEAD] == executor[0].body["messages"][:HEAD] for r in executor)
    last = executor[-1].body["messages"]
    assert any("Summary of" in str(m.get("content")) and "big3.py matters" in str(m.get("content")) for m in last)
    assert "BIG1_0 = 0" not in json.dumps(last)  # the compacted tool result is gone from the prompt
    # The person is told, in numbers.
    told = [text for channel, text in ui.streamed if channel == "status" and text.startswith("compacted ")]
    assert told and "→" in told[0] and "tokens" in told[0]

    # The meter: the latest prompt's tokens out of the window, and what fills them, from the recorded call.
    meter = view["context"]
    assert meter["window"] == 1_000_000 and meter["role"] == "executor"
    assert meter["used"] == sum(meter["parts"].values()) > 0
    assert meter["parts"]["instructions"] > 0 and meter["parts"]["plan"] > 0 and meter["parts"]["tool_results"] > 0
    assert meter["compactions"] == len(compacted) and meter["text"].startswith("ctx ")

    # Replay reproduces the compaction without the model; under another threshold it does not, and says so.
    fake_deepseek.stop()
    assert (await replay_session(workspace, agent.state_dir, _config(), sid)).ok
    assert not (await replay_session(workspace, agent.state_dir, _config(threshold=0.5), sid)).ok


BAD_ANSWERS = [
    ({"content": ""}, "answered nothing"),
    ({"content": "Sure! Here is a summary: they read some files."}, "not the summary asked for"),
    ({"content": json.dumps({"decisions": ["x"]})}, "files_touched"),  # not the structure
    ({"content": json.dumps({"decisions": [], "files_touched": [], "open_questions": [], "plan_state": ""})},
     "summary is empty"),
    ({"fault": {"status": 429}}, "429"),
]


async def test_a_bad_summary_is_said_and_loses_nothing(make_agent, fake_deepseek, workspace):
    # Seven reads: a compaction is tried before each call from the third; the first five answers are garbage.
    reads = [f"big{i}.py" for i in range(1, 8)]
    for i, name in enumerate(reads, 1):
        _big(workspace, name, f"big{i}")
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    for name in reads:
        fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "fs_read", "arguments": {"path": name}}]})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    for answer, _ in BAD_ANSWERS:
        fake_deepseek.add({"match": {"role": "compactor"}, **answer})
    fake_deepseek.add({"match": {"role": "compactor"}, "repeat": True, "content": json.dumps(SUMMARY)})
    ui = ScriptedUI()
    agent = make_agent(ui=ui, config=_config())
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view.get("state_reason")
    failed = [text for channel, text in ui.streamed if channel == "status" and text.startswith("compaction failed")]
    assert len(failed) == len(BAD_ANSWERS)
    for text, (_, why) in zip(failed, BAD_ANSWERS):
        assert why in text and "the conversation is kept whole" in text, text
    executor = [r for r in fake_deepseek.requests if r.role == "executor"]
    # After five failed compactions the call still carried every turn, big1's result included.
    whole = json.dumps(executor[6].body["messages"])
    assert "BIG1_0 = 0" in whole and "Summary of" not in whole
    # The sixth answer was a summary: compacted then, once.
    [compacted] = _events(agent, view["session_id"], "ContextCompacted@v1")
    assert "Summary of" in json.dumps(executor[7].body["messages"])
    assert compacted["tokens_after"] < compacted["tokens_before"]


class CompactingUI(ScriptedUI):
    """Answers the executor's question, and asks for /compact while the session waits on it (as a person
    typing /compact in another window would)."""

    def __init__(self, agent_ref: list) -> None:
        super().__init__(answers=["keep the signature"])
        self.agent_ref = agent_ref
        self.compacted: list[dict] = []

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        agent = self.agent_ref[0]
        sid = agent.sessions()[0].session_id
        self.compacted.append(agent.compact(sid, "the signature"))
        return await super().ask_user(question, choices)


async def test_compact_when_asked_summarizes_before_the_next_call_and_replays(make_agent, fake_deepseek, workspace,
                                                                               bigs):
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    for name in ("big1.py", "big2.py"):
        fake_deepseek.add({"match": {"role": "executor"}, "tool_calls": [{"name": "fs_read", "arguments": {"path": name}}]})
    fake_deepseek.add({"match": {"role": "executor"}, "content": "ASK_USER|keep the signature of add?"})
    fake_deepseek.add({"match": {"role": "executor"}, "content": ADD_FIX})
    fake_deepseek.add({"match": {"role": "compactor"}, "content": json.dumps(SUMMARY)})
    holder: list = []
    ui = CompactingUI(holder)
    agent = make_agent(ui=ui, config=_config(threshold=0.9))  # far under the threshold: only the request compacts
    holder.append(agent)
    view = await agent.run("Fix add")
    assert view["state"] == "Completed", view.get("state_reason")
    [asked] = ui.compacted
    assert asked["pending"] is True and "before its next model call" in asked["message"]
    [compacted] = _events(agent, view["session_id"], "ContextCompacted@v1")
    assert compacted["trigger"] == "manual" and compacted["focus"] == "the signature"
    summarizer = [r for r in fake_deepseek.requests if r.role == "compactor"]
    assert "keep in particular: the signature" in summarizer[0].body["messages"][1]["content"]
    last = json.dumps([r for r in fake_deepseek.requests if r.role == "executor"][-1].body["messages"])
    assert "Summary of" in last and "BIG1_0 = 0" not in last
    # The make_agent fixture replays the session: the manual compaction is reproduced from the recording.

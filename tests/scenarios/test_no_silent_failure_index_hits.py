"""No silent failure: the planner's "no index hits" must mean "nothing there", never "could not look".

A broken code index (a damaged manifest, a query raising) is told to the model in the prompt, recorded
as a failed `agent.index_hits` in the session and told to the person once; an index not built yet is
told to the model as such (not as a failure); a working index that finds nothing stays silent.
Real index, fake DeepSeek server over HTTP; every session must replay (the `make_agent` fixture).
"""

from __future__ import annotations

from scenario_kit import ScriptedUI, plan_json, scenario_config

from deepseek_ls.index import CodeIndex
from deepseek_ls.workspace import state_dir

BROKEN = "could not be searched"
NOT_BUILT = "no code index has been built"


def _config():
    cfg = scenario_config()
    cfg.index.enabled = True
    return cfg


async def _plan(make_agent, fake_deepseek, index, prompt="Fix the add function"):
    fake_deepseek.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"])), "repeat": True})
    ui = ScriptedUI()
    agent = make_agent(ui, config=_config(), index=index)
    sid, _ = await agent.plan(prompt)
    request = [r for r in fake_deepseek.requests if r.role == "planner"][0].body["messages"][2]["content"]
    results = [e.payload for e in agent.store.open(sid).read()
               if e.kind == "ToolResult@v1" and e.payload["tool"] == "agent.index_hits"]
    told = [text for channel, text in ui.streamed if channel == "status" and "index" in text.lower()]
    return request, results, told


async def test_always_answers_a_corrupt_index_is_told_to_the_model_the_session_and_the_person(
        make_agent, fake_deepseek, workspace):
    cfg = _config()
    index = CodeIndex(workspace, state_dir(workspace), cfg.index)
    index.build()
    index.manifest_path.write_text("{ not a manifest")  # damaged on disk after the build
    request, results, told = await _plan(make_agent, fake_deepseek, index)
    assert BROKEN in request and "does not mean there is no related code" in request
    assert NOT_BUILT not in request
    assert len(results) == 1 and results[0]["ok"] is False and results[0]["error"]
    assert len(told) == 1 and "could not be searched" in told[0] and "index build" in told[0]


async def test_always_answers_a_query_that_raises_is_reported_redacted_and_told_once(workspace):
    from deepseek_ls.agent.world import World
    from deepseek_ls.patch.overlay import DocumentOverlay
    from deepseek_ls.sink import NullSink

    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"

    class Raising:
        def query(self, text, top_k=8):
            raise RuntimeError(f"tantivy: io error reading segment (key {secret})")

    class Tools:
        session_id = "s1"
        ui = ScriptedUI()

    class Sink(NullSink):
        events: list = []

        def emit(self, kind, payload):
            self.events.append((kind, payload))

    sink = Sink()
    world = World(workspace, _config(), sink=sink, overlay=DocumentOverlay(workspace),
                  patches=None, index=Raising(), tools=Tools())  # type: ignore[arg-type]
    first, _ = await world.index_hits("add")
    second, _ = await world.index_hits("greet")
    assert BROKEN in first and "io error reading segment" in first and secret not in first
    assert BROKEN in second  # every prompt says so, not only the first
    assert [p["ok"] for k, p in sink.events if k == "ToolResult@v1"] == [False, False]
    assert all(secret not in str(p) for _, p in sink.events)
    assert len(Tools.ui.streamed) == 1 and secret not in Tools.ui.streamed[0][1]  # the person is told once


async def test_always_answers_an_index_not_built_is_said_as_such_not_as_a_failure(make_agent, fake_deepseek, workspace):
    index = CodeIndex(workspace, state_dir(workspace), _config().index)  # never built
    request, results, told = await _plan(make_agent, fake_deepseek, index)
    assert NOT_BUILT in request and BROKEN not in request
    assert [r["ok"] for r in results] == [True] and told == []


async def test_a_working_index_with_no_hits_still_means_nothing_found(make_agent, fake_deepseek, workspace):
    index = CodeIndex(workspace, state_dir(workspace), _config().index)
    index.build()
    request, results, told = await _plan(make_agent, fake_deepseek, index, prompt="Rename zebraunicornqux")
    assert BROKEN not in request and NOT_BUILT not in request and "Index hits" not in request
    assert [r["ok"] for r in results] == [True] and results[0]["value"]["text"] == "" and told == []

"""One way to build the agent: `agent/assemble.build_agent`, used by the language server, ACP and the
CLI (and teammate lanes, through the factory `LaneRunner` is handed), which returns the agent wired
with what each adapter gives it, nothing assigned onto it afterwards.

The first tests read the package's source (an AST walk): no module but `agent/assemble.py` calls
`Agent(...)`, the three adapters call `build_agent`, and no module outside `agent/` assigns an
attribute onto an agent (`agent.applier = ...` was how the language server and ACP wired editor
applies). The others check that what is given arrives where it is used.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

import pytest

import deepseek_ls
from deepseek_ls.agent.assemble import build_agent, lane_agent
from deepseek_ls.config import load_config
from deepseek_ls.config_models import Config, McpServerConfig
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.patch import ApplyResult
from deepseek_ls.tools.mcp.servers import McpServerSpec
from deepseek_ls.ui_port import AutoApproveUI

PACKAGE = Path(deepseek_ls.__file__).resolve().parent
ADAPTERS = ("lsp/services.py", "acp/wiring.py", "cli/agent_cmd.py")
# Calls whose result is an agent (the builders and the language server's `agent(ls)`).
AGENT_CALLS = {"Agent", "build_agent", "lane_agent", "session_agent", "_agent", "agent"}


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, parsed once for all the checks."""
    return tuple((path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path)))
                 for path in sorted(PACKAGE.rglob("*.py")))


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _agent_names(tree: ast.Module) -> set[str]:
    """`agent`, and every name bound to the result of a call that builds or returns one."""
    names = {"agent"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) \
                and _callee(node.value) in AGENT_CALLS:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _is_agent(expr: ast.expr, names: set[str]) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.Attribute):  # session.agent, ls.services.agent
        return expr.attr == "agent"
    if isinstance(expr, ast.Subscript):  # holder["agent"]
        return isinstance(expr.slice, ast.Constant) and expr.slice.value == "agent"
    if isinstance(expr, ast.Call):  # agent(ls), build_agent(...)
        return _callee(expr) in AGENT_CALLS
    return False


def _assignments_onto_an_agent(tree: ast.Module) -> list[tuple[int, str]]:
    names = _agent_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and _callee(node) == "setattr" and node.args and _is_agent(node.args[0], names):
            found.append((node.lineno, ast.unparse(node)))
        while targets:
            target = targets.pop()
            if isinstance(target, (ast.Tuple, ast.List)):
                targets.extend(target.elts)
            elif isinstance(target, ast.Attribute) and _is_agent(target.value, names):
                found.append((node.lineno, ast.unparse(target)))
    return found


def test_only_assemble_constructs_the_agent():
    constructed = {(rel, node.lineno) for rel, tree in _modules() for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and _callee(node) == "Agent"}
    assert {rel for rel, _ in constructed} == {"agent/assemble.py"}, sorted(constructed)


def test_the_adapters_build_through_build_agent():
    calls = {rel: [node.lineno for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and _callee(node) == "build_agent"]
             for rel, tree in _modules() if rel in ADAPTERS}
    assert {rel for rel, lines in calls.items() if lines} == set(ADAPTERS), calls


def test_the_review_command_builds_a_read_only_agent():
    """A review only reads: its agent reads only in every session and runs no lanes."""
    tree = dict(_modules())["cli/review_cmd.py"]
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _callee(node) in AGENT_CALLS]
    assert calls, "cli/review_cmd.py builds no agent"
    for call in calls:
        flags = {kw.arg: kw.value for kw in call.keywords}
        assert isinstance(flags.get("read_only"), ast.Constant) and flags["read_only"].value is True, \
            ast.unparse(call)


def test_nothing_outside_agent_assigns_onto_an_agent():
    offences = {rel: found for rel, tree in _modules() if not rel.startswith("agent/")
                if (found := _assignments_onto_an_agent(tree))}
    assert offences == {}


@pytest.mark.parametrize("source, expected", [
    pytest.param("agent = make()\nagent.applier = f\n", [(2, "agent.applier")], id="name"),
    pytest.param("a = build_agent(r, c)\na.restorer, x.y = f, g\n", [(2, "a.restorer")], id="built-then-tuple"),
    pytest.param("session.agent.clock += 1\n", [(1, "session.agent.clock")], id="attribute-augmented"),
    pytest.param("agent(ls).teammate_mode = True\n", [(1, "agent(ls).teammate_mode")], id="returned-by-call"),
    pytest.param("setattr(agent, 'sink', s)\n", [(1, "setattr(agent, 'sink', s)")], id="setattr"),
    pytest.param("driven.agent = _agent(ctx, args)\nself.agent = agent\n", [], id="holding-one-is-not-patching-it"),
])
def test_the_assignment_check_sees_each_form(source: str, expected: list[tuple[int, str]]):
    assert _assignments_onto_an_agent(ast.parse(source)) == expected


# -- what is given arrives ----------------------------------------------------------------------


def _config() -> Config:
    cfg = Config()
    cfg.index.enabled = False
    cfg.llm.max_retries = 0
    return cfg


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    return root


async def test_an_editor_apply_restore_clock_and_state_listener_arrive(workspace: Path, fake_deepseek):
    applied: list[tuple[Any, str, Any]] = []
    changes: list[Any] = []

    async def applier(patches: Any, patch_id: str, hunk_ids: list[str] | None) -> ApplyResult:
        applied.append((patches, patch_id, hunk_ids))
        return ApplyResult(ok=True, patch_id=patch_id, message="applied in the editor")

    async def restorer(checkpoint_ids: list[str]) -> Any:
        raise AssertionError("not called here")

    def clock() -> float:
        return 42.0

    fake_deepseek.add({"match": {"role": "ask"}, "content": "It adds a and b."})
    cfg = _config()
    agent = build_agent(workspace, cfg, ui=AutoApproveUI(), llm=LLMClient(cfg.llm), index=None, applier=applier,
                        restorer=restorer, clock=clock, on_state_change=changes.append)
    try:
        answer = await agent.ask("What does add do?")
        assert answer["content"] == "It adds a and b."
        assert [c.to_state for c in changes][-1] == "Completed"
        assert {c.session_id for c in changes} == {answer["session_id"]}
        rt = agent._runtime(answer["session_id"])
        result = await rt.world.apply("p1", ["h1"])
        assert result.message == "applied in the editor"
        assert applied == [(agent.patches, "p1", ["h1"])]  # the editor is told which store holds the patch
        assert rt.world.clock() == 42.0
        assert agent.restorer is restorer
    finally:
        await agent.aclose()
        await agent.llm.aclose()


async def test_a_read_only_agent_reads_only_and_runs_no_lanes(workspace: Path):
    cfg = _config()
    cfg.agent_loop.teammate_mode = True
    for read_only in (False, True):
        agent = build_agent(workspace, cfg, ui=AutoApproveUI(), llm=None, index=None, read_only=read_only)
        try:
            rt = agent._new_session("look at add", "agent")
            assert rt.world.tools.read_only is read_only
            assert all(t.effect == "read" for t in rt.world.tools.tools()) is read_only
            assert (agent.lanes is None) is read_only
        finally:
            await agent.aclose()
            await agent.llm.aclose()


async def test_lanes_are_handed_the_lane_factory_and_it_builds_a_lane_agent(workspace: Path, tmp_path: Path):
    cfg = _config()
    owner = build_agent(workspace, cfg, ui=AutoApproveUI(), index=None)
    try:
        assert owner.lanes is not None and owner.lanes.make_agent is lane_agent
        extra = {"driver": "lane", "parent_session_id": "s", "lane_id": "l1"}
        lane = lane_agent(workspace, cfg, ui=AutoApproveUI(), llm=owner.llm, state_dir=owner.state_dir,
                          patch_dir=tmp_path / "lane-state", session_extra=extra)
        assert lane.lanes is None and lane.index is None and lane.mcp is None
        assert lane.models is owner.models  # one capacity: the owner's limits and 429 pause
        assert lane.patches.dir == tmp_path / "lane-state" / "patches" and lane.patches.sink is lane.sink
        assert lane.state_dir == owner.state_dir and lane.session_extra == extra
    finally:
        await owner.aclose()
        await owner.llm.aclose()


def test_the_index_is_used_when_built_or_shared(workspace: Path, isolated_user_dirs: Path):
    from deepseek_ls.index import CodeIndex

    cfg = _config()
    cfg.index.enabled = True
    warned: list[str] = []

    def agent_index(index: Any) -> Any:
        return build_agent(workspace, cfg, ui=AutoApproveUI(), llm=object(), index=index, lanes=False,
                           warn=warned.append).index

    assert agent_index("if_built") is None  # not built: a command does not wait for a build
    built = CodeIndex.for_workspace(workspace, workspace / ".deepseek", cfg)
    built.build()
    opened = agent_index("if_built")
    assert isinstance(opened, CodeIndex) and opened.is_built()
    assert agent_index(built) is built and agent_index(None) is None
    cfg.index.enabled = False
    assert agent_index("if_built") is None
    assert warned == []
    with pytest.raises(ValueError, match="if_built"):
        agent_index("always")


def test_mcp_servers_come_from_the_layers_plus_the_clients(workspace: Path, isolated_user_dirs: Path):
    (workspace / ".mcp.json").write_text('{"mcpServers": {"repo": {"command": "repo-server"}}}')
    loaded = load_config(workspace)
    client = McpServerSpec("client", McpServerConfig(command="client-server"), "the editor (session/new)", "user")

    agent = build_agent(workspace, loaded.config, ui=AutoApproveUI(), llm=object(), index=None, lanes=False,
                        loaded=loaded, extra_mcp_servers=[client])
    specs = agent.mcp.servers.servers
    assert specs["client"].startable and specs["client"].source == "the editor (session/new)"
    assert not specs["repo"].startable  # the repository's: waits for the person's approval
    assert set(agent.mcp.connections) == {"client"}

    bare = build_agent(workspace, loaded.config, ui=AutoApproveUI(), llm=object(), index=None, lanes=False)
    assert bare.mcp is None  # no layers, no servers
    with pytest.raises(ValueError, match="loaded"):
        build_agent(workspace, loaded.config, ui=AutoApproveUI(), llm=object(), index=None, lanes=False,
                    extra_mcp_servers=[client])

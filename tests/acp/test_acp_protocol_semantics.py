"""ACP semantics, with clients we did not write (the TypeScript SDK's `sdk_client.mjs`, acpx) where
they matter: failures are JSON-RPC errors a client can exit non-zero for (`auth_required` for a
missing key), the session's options are `configOptions` set with `session/set_config_option`,
`--config` / `--profile` and the repository's config hold for sessions opened in a subdirectory, and
a plan entry says what the session really waits for."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

from acp import PROTOCOL_VERSION, text_block
from acp.exceptions import RequestError
from acp_kit import (FS, RecordingClient, acp_agent, agent_env, fix_add_workspace, run_acpx, run_sdk_client, said,
                     updates_of)

from deepseek_ls.testkit.fake_deepseek import FakeDeepSeek

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import APP, diff, plan_json  # noqa: E402

FIX = diff("app.py", ["    return a - b"], ["    return a + b"], start=6)
PLAN = plan_json(("Fix add", ["app.py"]), verification=["git status"])


def _no_key(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "DEEPSEEK_API_KEY"}


# -- options and the plan's state: one SDK client, one agent ------------------------------------


@pytest.fixture(scope="module")
def options_run(tmp_path_factory):
    """In an untrusted workspace: read the session's options, set some (and some that are refused),
    plan in plan mode with max-think forced, deny the edit of a run in agent mode, then run again
    with approval `never`."""
    tmp = tmp_path_factory.mktemp("options")
    workspace = fix_add_workspace(tmp)
    with FakeDeepSeek() as fake:
        for reply in ({"match": {"role": "planner"}, "content": PLAN}, {"match": {"role": "planner"}, "content": PLAN},
                      {"match": {"role": "executor"}, "content": FIX}, {"match": {"role": "planner"}, "content": PLAN},
                      {"match": {"role": "executor"}, "content": FIX}):
            fake.add(reply)
        report, code = run_sdk_client(tmp, agent_env(fake, tmp), [
            {"op": "new", "cwd": str(workspace)},
            {"op": "set_config_option", "configId": "mode", "value": "plan"},
            {"op": "set_config_option", "configId": "model", "value": "max_think"},
            {"op": "set_config_option", "configId": "approval", "value": "sometimes"},
            {"op": "set_config_option", "configId": "approval", "value": "auto"},
            {"op": "set_mode", "modeId": "yolo"},
            {"op": "prompt", "text": "Fix add"},
            {"op": "set_config_option", "configId": "mode", "value": "agent"},
            {"op": "set_config_option", "configId": "model", "value": "auto"},
            {"op": "client", "permission": "reject_once"},
            {"op": "prompt", "text": "Fix add"},
            {"op": "set_config_option", "configId": "approval", "value": "never"},
            {"op": "prompt", "text": "Fix add"},
        ])
        models = [(r.role, r.body.get("model")) for r in fake.requests]
    return report, code, workspace, models


def test_session_new_advertises_the_sessions_options(options_run):
    report, _, _, _ = options_run
    options = {o["id"]: o for o in report["steps"][0]["result"]["configOptions"]}
    assert list(options) == ["mode", "model", "approval"]
    assert options["mode"]["currentValue"] == "agent" and options["mode"]["category"] == "mode"
    assert {o["value"] for o in options["mode"]["options"]} == {"ask", "plan", "agent", "yolo", "hetun"}
    assert options["model"]["currentValue"] == "auto"
    assert [o["value"] for o in options["model"]["options"]] == ["auto", "fast", "max_think"]
    assert options["approval"]["currentValue"] == "suggest"
    assert {o["value"] for o in options["approval"]["options"]} == {"suggest", "never", "auto"}


def test_set_config_option_sets_mode_and_model_profile(options_run):
    """The old code answered "Method not found"; the answer now holds every option's value, the mode
    is also a `current_mode_update`, and the prompt that follows plans only, with max-think."""
    report, _, workspace, models = options_run
    steps = report["steps"]
    mode, model = steps[1], steps[2]
    assert "error" not in mode and "error" not in model, (mode, model)
    current = {o["id"]: o["currentValue"] for o in model["result"]["configOptions"]}
    assert current == {"mode": "plan", "model": "max_think", "approval": "suggest"}
    assert any(u.get("currentModeId") == "plan" for u in updates_of(report, "current_mode_update"))
    assert updates_of(report, "config_option_update")
    plan_prompt = steps[6]
    assert plan_prompt["result"]["stopReason"] == "end_turn"
    assert "Plan ready (1 steps)" in said(report)
    assert models[0] == ("planner", "deepseek-v4-pro"), models
    assert models[1][1] == "deepseek-v4-flash", "'auto' gives the choice back to the router"


@pytest.mark.parametrize(
    ("index", "why"),
    [
        pytest.param(3, "approval: suggest, never, auto", id="unknown-approval"),
        pytest.param(4, "not trusted", id="auto-approval-in-an-untrusted-workspace"),
        pytest.param(5, "yolo mode approves edits", id="yolo-in-an-untrusted-workspace"),
    ],
)
def test_always_answers_a_refused_option_with_an_error_and_changes_nothing(options_run, index, why):
    report, code, _, _ = options_run
    error = report["steps"][index].get("error")
    assert error is not None and error["code"] == -32602, report["steps"][index]
    assert why in json.dumps(error["data"]), error
    assert code == 1, "the client saw the errors"
    assert report["steps"][6]["result"]["stopReason"] == "end_turn", "the session went on in plan mode"


def test_plan_entry_after_a_denied_edit_says_the_session_is_paused(options_run):
    """After the person denied the edit the session is Paused: the entry says so and what to do (the
    old code said "failed: will be retried or revised", which nothing was going to do)."""
    report, _, workspace, _ = options_run
    denied = report["steps"].index(next(s for s in report["steps"] if s["op"] == "client")) + 1
    assert report["steps"][denied]["result"]["stopReason"] == "end_turn"
    assert len(report["permissions"]) == 1, "only the denied edit asked"
    plans = [u for u in updates_of(report, "plan") if "denied" in u["entries"][0]["content"]]
    assert plans, [u["entries"] for u in updates_of(report, "plan")]
    entry = plans[-1]["entries"][0]
    assert "will be retried" not in entry["content"], entry
    assert "paused: the change was denied" in entry["content"] and "send 'run'" in entry["content"], entry
    assert entry["status"] == "pending"


# -- failures are JSON-RPC errors ---------------------------------------------------------------


def test_always_answers_a_missing_key_with_auth_required_to_the_sdk_client(fake_deepseek, tmp_path):
    """Without the key, `session/new` answers `-32000` (auth_required) naming the advertised method;
    the old code opened the session and ended the prompt `end_turn` with the message in the chat."""
    workspace = fix_add_workspace(tmp_path)
    report, code = run_sdk_client(tmp_path, _no_key(agent_env(fake_deepseek, tmp_path)),
                                  [{"op": "new", "cwd": str(workspace)}, {"op": "prompt", "text": "Fix add"}])
    assert code == 1
    (method,) = report["initialize"]["authMethods"]
    assert method["id"] == "deepseek-api-key" and "DEEPSEEK_API_KEY" in json.dumps(method)
    error = report["steps"][0]["error"]
    assert error["code"] == -32000 and "DEEPSEEK_API_KEY is not set" in error["message"], error
    assert error["data"]["methods"] == ["deepseek-api-key"]
    assert fake_deepseek.requests == []


def test_always_answers_a_missing_key_so_acpx_exits_non_zero(fake_deepseek, tmp_path):
    workspace = fix_add_workspace(tmp_path)
    out = run_acpx(tmp_path, _no_key(agent_env(fake_deepseek, tmp_path)), "--approve-all", "--format", "json",
                   prompt="Fix add", cwd=workspace)
    assert out.returncode != 0, out.stdout[-3000:]
    answers = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    errors = [a["error"] for a in answers if "error" in a]
    assert errors and errors[0]["code"] == -32000 and "DEEPSEEK_API_KEY" in errors[0]["message"], out.stdout[-3000:]
    assert (workspace / "app.py").read_text() == APP


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_always_answers_an_unreachable_model_with_an_error(fake_deepseek, tmp_path):
    """The model's server does not answer: the prompt is a JSON-RPC error saying so (the old code
    ended it `end_turn` with "[stopped]" in the chat), and the session still serves."""
    workspace = fix_add_workspace(tmp_path)
    env = {**agent_env(fake_deepseek, tmp_path), "DEEPSEEK_BASE_URL": f"http://127.0.0.1:{_closed_port()}"}
    client = RecordingClient()
    async with acp_agent(client, workspace, env) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=FS)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as err:
            await conn.prompt(session_id=new.session_id, prompt=[text_block("Fix add")])
        assert err.value.code == -32603
        assert "127.0.0.1" in str(err.value) and err.value.data["sessionId"], (str(err.value), err.value.data)
        assert (await conn.list_sessions(cwd=str(workspace))).sessions
    assert "[stopped]" not in client.text("agent_message_chunk")


# -- the workspace of a session opened in a subdirectory ----------------------------------------


def test_acp_config_and_profile_hold_for_a_session_in_a_subdirectory(fake_deepseek, tmp_path):
    """acpx starts `deepseek-ls acp --config X --profile scout` in a subdirectory of the repository and
    opens its session there: the MCP server of X is offered, the repository's own profile `scout` is
    used (its model and max_tokens), and the session lives in the repository's `.deepseek/`. The old
    code reloaded the subdirectory's config without --config and --profile: no MCP tool, no profile."""
    repo = fix_add_workspace(tmp_path)
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    (repo / ".deepseek").mkdir()
    (repo / ".deepseek" / "config.toml").write_text('[llm.profiles.scout]\nmodel = "deepseek-v4-pro"\nmax_tokens = 1234\n')
    extra = tmp_path / "extra.toml"
    extra.write_text(f'[mcp.servers.time]\ncommand = {json.dumps(str(Path(sys.executable).parent / "mcp-server-time"))}\n')
    fake_deepseek.add({"match": {"role": "planner"}, "content": PLAN})
    out = run_acpx(tmp_path, agent_env(fake_deepseek, tmp_path), "--approve-all", prompt="/plan Fix add", cwd=sub,
                   agent_args=["--config", str(extra), "--profile", "scout"])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (planner,) = [r for r in fake_deepseek.requests if r.role == "planner"]
    offered = {t["function"]["name"] for t in planner.body.get("tools", [])}
    assert any(name.startswith("mcp_time_") for name in offered), sorted(offered)
    assert planner.body["model"] == "deepseek-v4-pro" and planner.body.get("max_tokens") == 1234, planner.body
    assert list((repo / ".deepseek" / "sessions").glob("*/events.jsonl")), "not the repository's session store"
    assert not (sub / ".deepseek").exists()


def test_set_config_option_approval_never_stages_without_asking(options_run):
    """With approval `never` the edit is staged, not applied and not asked about: the session pauses
    saying `deepseek-ls apply` applies it."""
    report, _, workspace, _ = options_run
    chosen = report["steps"][-2]
    assert {o["id"]: o["currentValue"] for o in chosen["result"]["configOptions"]}["approval"] == "never"
    assert report["steps"][-1]["result"]["stopReason"] == "end_turn"
    assert len(report["permissions"]) == 1 and report["writes"] == []
    assert (workspace / "app.py").read_text() == APP
    assert "applying is off by policy" in said(report)

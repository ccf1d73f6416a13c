"""Never leak, with MCP servers we did not write: `@modelcontextprotocol/server-filesystem` and
`mcp-server-git`, driven by the agent (the fake DeepSeek server calls their tools), over a
workspace with secret canaries in `.env`, key files (`id_rsa`, `*.pem`, a key under an
ordinary name), a symlink to `.env`, a service-account JSON, and a committed env file.

Canaries are plain words (no redaction rule knows them): only the secret gate can stop them
(`policy/foreign_io.py`: refused arguments, hidden credential files and patch sections). Each
test asserts that no canary is in what the model was sent or in `events.jsonl`, that a call
naming a secret path never reached the server (the MCP session's `call_tool` is watched), and,
as a control, that the same server did answer the ordinary calls.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from deepseek_ls.agent import Agent
from deepseek_ls.config_models import McpConfig, McpServerConfig
from deepseek_ls.testkit.secret_shapes import pieces
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.tools.mcp import McpManager
from deepseek_ls.tools.mcp.servers import McpServerSet, McpServerSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scenarios"))
from scenario_kit import ScriptedUI, plan_json, scenario_config  # noqa: E402

PEM_BODY = "\n".join(["MIIEowIBAAKCAQEAx3Kq9Zb2" + "Qw8Lp4Rt6Yu1Io3Pa5Sd7Fg9Hj2Kl4Zx6Cv8Bn0Mq" [:40]] * 4)


def _key(canary: str) -> str:
    return (f"# {canary}\n-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA " + "PRIVATE KEY-----\n")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


@pytest.fixture
def secrets_workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A git repository with a canary in each secret place; returns (root, {place: canary})."""
    root = tmp_path / "ws"
    root.mkdir()
    canaries = {name: f"canary{uuid.uuid4().hex[:8].translate(str.maketrans('0123456789', 'ghijklmnop'))}{name}"
                for name in ("dotenv", "idrsa", "pem", "renamedkey", "staging", "stagingedit", "serviceaccount")}
    files = {
        ".env": f"MAIL_PASSWORD=CorrectHorseBatteryStaple\nNOTE={canaries['dotenv']}\n",
        "id_rsa": _key(canaries["idrsa"]),
        "certs/server.pem": _key(canaries["pem"]),
        "deploy/keys/deploy_key": _key(canaries["renamedkey"]),
        "deploy/.env.staging": f"MAIL_PASSWORD=CorrectHorseBatteryStaple\nNOTE={canaries['staging']}\n",
        "config/ci.json": json.dumps({"type": "service_account", "project_id": "p", "note": canaries["serviceaccount"]}),
        "README.md": "# Demo\nordinary words\n",
        "app.py": "def add(a, b):\n    return a + b\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "notes.txt").symlink_to(".env")
    _git(root, "init", "-q")
    _git(root, "add", "-A", "-f")
    _git(root, "commit", "-qm", "add the deployment settings")
    # An uncommitted change of the committed env file, for the worktree diff.
    (root / "deploy/.env.staging").write_text(f"MAIL_PASSWORD=Tr0ub4dor\nNOTE={canaries['stagingedit']}\n")
    return root, canaries


@pytest.fixture
def calls_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict]]:
    """Every (tool, arguments) an MCP session sent to a server."""
    from mcp import ClientSession

    made: list[tuple[str, dict]] = []
    real = ClientSession.call_tool

    async def call_tool(self, name, arguments=None, *args, **kwargs):
        made.append((name, dict(arguments or {})))
        return await real(self, name, arguments, *args, **kwargs)

    monkeypatch.setattr(ClientSession, "call_tool", call_tool)
    return made


async def _plan_with_calls(root: Path, fake, servers: dict[str, McpServerConfig],
                           calls: list[tuple[str, dict]]) -> tuple[str, list[dict]]:
    """The planner (the fake model) makes `calls` in one turn; returns (everything the model
    was sent and the event logs hold, the calls' ToolResult@v1 payloads in order)."""
    cfg = scenario_config()
    fake.add({"match": {"role": "planner", "last_role": "user"},
              "tool_calls": [{"name": name, "arguments": args} for name, args in calls]})
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"]))})
    specs = McpServerSet({n: McpServerSpec(n, c, "test", "user") for n, c in servers.items()})
    mcp = McpManager(root, specs, cfg.mcp, log_dir=root.parent / "mcp-logs")
    agent = Agent(root, cfg, llm=LLMClient(cfg.llm), ui=ScriptedUI(), mcp=mcp)
    try:
        await agent.plan("Where are the mail settings?")
    finally:
        await agent.aclose()
        await agent.llm.aclose()
    logs = [p.read_text() for p in (root / ".deepseek").rglob("events.jsonl")]
    results = [event["payload"] for text in logs for event in map(json.loads, text.splitlines())
               if event["kind"] == "ToolResult@v1" and event["payload"]["tool"].startswith("mcp_")]
    assert len(results) == len(calls)
    seen = json.dumps([r.body for r in fake.requests], ensure_ascii=False) + "".join(logs)
    return seen, results


def _leaked(seen: str, canaries: dict[str, str]) -> list[str]:
    return [name for name, canary in canaries.items() if canary in seen or canary[:-len(name)] in seen]


async def test_no_leak_filesystem_server_read_tools(secrets_workspace, fake_deepseek, filesystem_js, calls_made) -> None:
    root, canaries = secrets_workspace
    fs = {"fs": McpServerConfig(command="node", args=[filesystem_js, str(root)])}
    refused = [
        ("mcp_fs_read_text_file", {"path": str(root / ".env")}),
        ("mcp_fs_read_text_file", {"path": ".env"}),
        ("mcp_fs_read_file", {"path": f"file://{root}/.env"}),
        ("mcp_fs_read_text_file", {"path": str(root / "notes.txt")}),  # a symlink to .env
        ("mcp_fs_read_multiple_files", {"paths": [str(root / "README.md"), str(root / "id_rsa")]}),
        ("mcp_fs_read_text_file", {"path": str(root / "certs" / "server.pem"), "head": 5}),
        ("mcp_fs_read_text_file", {"path": str(root / "deploy" / "keys" / "deploy_key")}),  # a key by content
        ("mcp_fs_read_text_file", {"path": str(root / "config" / "ci.json")}),  # a service account by content
        ("mcp_fs_get_file_info", {"path": str(root / "deploy" / ".env.staging")}),
    ]
    allowed = [("mcp_fs_read_text_file", {"path": str(root / "README.md")}),
               ("mcp_fs_list_directory", {"path": str(root)})]
    seen, results = await _plan_with_calls(root, fake_deepseek, fs, refused + allowed)

    assert _leaked(seen, canaries) == []
    assert "CorrectHorseBatteryStaple" not in seen
    for i, (_name, args) in enumerate(refused):
        result = results[i]
        assert not result["ok"] and "policy refused" in result["error"] and "the call was not made" in result["error"], result
    sent = [args for name, args in calls_made]
    assert all(args not in sent for _, args in refused), sent
    # The control: the same server answered the ordinary calls (so a refusal is not a dead server).
    readme, listing = results[len(refused)], results[len(refused) + 1]
    assert readme["ok"] and "ordinary words" in json.dumps(readme["value"])
    assert listing["ok"] and "README.md" in json.dumps(listing["value"])


async def test_no_leak_git_server_show_and_diff(secrets_workspace, fake_deepseek, git_server, calls_made) -> None:
    root, canaries = secrets_workspace
    git = {"git": McpServerConfig(command=git_server, args=["--repository", str(root)])}
    refused = [
        ("mcp_git_git_show", {"repo_path": str(root), "revision": "HEAD:deploy/.env.staging"}),
        ("mcp_git_git_show", {"repo_path": str(root), "revision": "HEAD:id_rsa"}),
    ]
    shown = [
        ("mcp_git_git_show", {"repo_path": str(root), "revision": "HEAD"}),  # the commit adding every file
        ("mcp_git_git_diff_unstaged", {"repo_path": str(root)}),  # the edited env file
        ("mcp_git_git_log", {"repo_path": str(root)}),
    ]
    seen, results = await _plan_with_calls(root, fake_deepseek, git, refused + shown)

    assert _leaked(seen, canaries) == []
    for i in range(len(refused)):
        assert not results[i]["ok"] and "policy refused" in results[i]["error"]
    assert all(args not in [a for _, a in calls_made] for _, args in refused)
    show, diff, log = results[len(refused):]
    assert show["ok"] and diff["ok"] and log["ok"], (show, diff, log)
    show_text = json.dumps(show["value"])
    # Secret files are named, their content is not; ordinary files are shown as they are.
    for hidden in ("deploy/.env.staging", "id_rsa", "certs/server.pem", "deploy/keys/deploy_key", ".env"):
        assert f"the diff of {hidden} is hidden" in show_text, hidden
    assert "ordinary words" in show_text and "return a + b" in show_text
    assert "the diff of deploy/.env.staging is hidden" in json.dumps(diff["value"])
    assert "add the deployment settings" in json.dumps(log["value"])


# Keys the old redaction left half unmasked (OpenAI: detect-secrets masked a window first) or
# that a server's stderr log never redacted at all (SendGrid).
OPENAI = ("sk-proj-" + "A1b2C3d4E5" * 7 + "F6g7" + "T3BlbkFJ" + "H8i9J0k1L2" * 2 + "-" + "m3N4o5P6q7" * 5 + "R8s")
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"


async def test_no_leak_what_an_mcp_server_prints_on_stderr(tmp_path: Path, git_server: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    # mcp-server-git, started by a shell that first prints keys on stderr, as a server logging
    # its configuration or an error would.
    script = f"echo 'using OPENAI_API_KEY={OPENAI}' >&2; echo 'sendgrid {SENDGRID}' >&2; exec {shlex.quote(git_server)} --repository {shlex.quote(str(root))}"
    spec = McpServerSpec("git", McpServerConfig(command="sh", args=["-c", script]), "test", "user")
    manager = McpManager(root, McpServerSet({"git": spec}), McpConfig(), log_dir=tmp_path / "mcp")
    try:
        tools, problems = await manager.list_tools()
        assert tools and not problems, problems
    finally:
        await manager.aclose()
    log = tmp_path / "mcp" / "git.log"
    for _ in range(100):  # the copying thread ends when the server's end of the pipe closes
        if "sendgrid" in log.read_text():
            break
        await asyncio.sleep(0.05)
    text = log.read_text()
    assert "using OPENAI_API_KEY=" in text and "sendgrid" in text, text
    assert [key[:10] for key in (OPENAI, SENDGRID) if pieces(key) & pieces(text)] == []

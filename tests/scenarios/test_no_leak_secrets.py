"""Secret/path part of the bypass corpus: nothing secret reaches the model (or the event log).

Each case plants a canary in a secret place (or a secret-shaped value in an ordinary
file), lets the model (the fake DeepSeek server, over real HTTP on loopback) call a
read tool through the real agent, or runs an allowlisted command the way verification
does and sends its output to the model, then searches everything the fake server
received, and the session's event log, for the canary. Canaries of path cases are
plain words, so only the path/content policy can stop them (redaction would not);
canaries of redaction cases are secret-shaped values in ordinary files.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scenario_kit import ScriptedUI, plan_json, scenario_config

from deepseek_ls.agent import Agent
from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config
from deepseek_ls.llm.client import LLMClient
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.workspace import state_dir

Setup = Callable[[Path, Path, str], None]  # (workspace, outside dir, canary)


@dataclass
class Case:
    files: dict[str, str] = field(default_factory=dict)  # "{c}" is replaced by the canary
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    command: str | None = None  # run like a verification command, output sent to the model
    setup: Setup | None = None
    commit: list[str] | None = None  # files committed before the tool runs ("*" = all)
    buffers: dict[str, str] = field(default_factory=dict)  # open editor buffers
    index: bool = False
    index_deny: list[str] | None = None  # the deny-list the index was built with (an older index)
    allow: list[str] = field(default_factory=list)  # extra allowlisted commands
    canary: Callable[[str], str] | None = None  # a secret-shaped canary from a unique token


def plain(token: str) -> str:
    return f"canary{token}zebra"  # lower-case letters only: no redaction rule would touch it


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=root, check=True, capture_output=True)


def symlink(link: str, target: str) -> Setup:
    def make(root: Path, outside: Path, canary: str) -> None:
        path = root / link
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target.replace("{out}", str(outside)).replace("{root}", str(root)))
    return make


def hardlink(link: str, target: str) -> Setup:
    def make(root: Path, outside: Path, canary: str) -> None:
        path = root / link
        path.parent.mkdir(parents=True, exist_ok=True)
        os.link(target.replace("{out}", str(outside)).replace("{root}", str(root)), path)
    return make


def read(path: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, **extra}


SERVICE_ACCOUNT = '{\n  "type": "service_account",\n  "project_id": "p",\n  "client_email": "x@p.iam.gserviceaccount.com",\n  "note": "{c}"\n}\n'
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\nusers:\n- name: admin\n  user:\n    token: {c}\n"
DOCKER = '{\n  "auths": {\n    "registry.example.com": {\n      "auth": "dXNlcjpwYXNz", "note": "{c}"\n    }\n  }\n}\n'
NETRC = "machine api.example.com\n  login bot\n  password {c}\n"
PEM_IN_TEXT = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7abcdefghijklmnop\n{c}\n-----END RSA " + "PRIVATE KEY-----\n"
AWS_CREDS = "[default]\naws_access_key_id = AKIA0000\naws_secret_access_key = abcdefghijklmnop0123456789\nnote = {c}\n"
ENV = "DATABASE_URL=postgres://app@db/app\nNOTE={c}\n"

PATH_CASES: dict[str, Case] = {
    # fs.read of deny-listed names, at the root and deeper, in any case
    "read-dotenv": Case({".env": ENV}, "fs_read", read(".env")),
    "read-dotenv-dot-slash": Case({".env": ENV}, "fs_read", read("./.env")),
    "read-dotenv-upper": Case({".ENV": ENV}, "fs_read", read(".ENV")),
    "read-dotenv-production": Case({"config/.env.production": ENV}, "fs_read", read("config/.env.production")),
    "read-dotenv-local": Case({".env.local": ENV}, "fs_read", read(".env.local")),
    "read-named-env": Case({"deploy/prod.env": ENV}, "fs_read", read("deploy/prod.env")),
    "read-envrc": Case({".envrc": "export NOTE={c}\n"}, "fs_read", read(".envrc")),
    "read-envrc-nested": Case({"svc/.envrc": "export NOTE={c}\n"}, "fs_read", read("svc/.envrc")),
    "read-kube-config": Case({".kube/config": KUBECONFIG}, "fs_read", read(".kube/config")),
    "read-kubeconfig-name": Case({"ops/kubeconfig": KUBECONFIG}, "fs_read", read("ops/kubeconfig")),
    "read-docker-config": Case({"home/.docker/config.json": DOCKER}, "fs_read", read("home/.docker/config.json")),
    "read-underscore-netrc": Case({"_netrc": NETRC}, "fs_read", read("_netrc")),
    "read-netrc": Case({".netrc": NETRC}, "fs_read", read(".netrc")),
    "read-npmrc": Case({".npmrc": "//registry.npmjs.org/:_authToken={c}\n"}, "fs_read", read(".npmrc")),
    "read-pypirc": Case({".pypirc": "[pypi]\npassword = {c}\n"}, "fs_read", read(".pypirc")),
    "read-git-credentials": Case({".git-credentials": "https://bot:{c}@github.com\n"}, "fs_read", read(".git-credentials")),
    "read-aws-credentials": Case({"home/.aws/credentials": AWS_CREDS}, "fs_read", read("home/.aws/credentials")),
    "read-ssh-key": Case({".ssh/id_ed25519": "{c}\n"}, "fs_read", read(".ssh/id_ed25519")),
    "read-pem": Case({"deploy/server.pem": "{c}\n"}, "fs_read", read("deploy/server.pem")),
    "read-gcloud-dir": Case({".config/gcloud/credentials.db": "{c}\n"}, "fs_read", read(".config/gcloud/credentials.db")),
    "read-tfstate": Case({"infra/terraform.tfstate": '{"secret": "{c}"}\n'}, "fs_read", read("infra/terraform.tfstate")),
    "read-pgpass": Case({".pgpass": "db:5432:app:app:{c}\n"}, "fs_read", read(".pgpass")),
    "read-vault-token": Case({".vault-token": "{c}\n"}, "fs_read", read(".vault-token")),
    # secret files with ordinary names, recognised by content
    "read-service-account-json": Case({"deploy/ci.json": SERVICE_ACCOUNT}, "fs_read", read("deploy/ci.json")),
    "read-service-account-range": Case({"deploy/ci.json": SERVICE_ACCOUNT}, "fs_read", read("deploy/ci.json", start_line=5, end_line=5)),
    "read-kubeconfig-content": Case({"ops/cluster.yaml": KUBECONFIG}, "fs_read", read("ops/cluster.yaml")),
    "read-docker-content": Case({"ci/auth.json": DOCKER}, "fs_read", read("ci/auth.json")),
    "read-netrc-content": Case({"notes/hosts.txt": NETRC}, "fs_read", read("notes/hosts.txt")),
    "read-pem-in-text": Case({"src/keys.txt": PEM_IN_TEXT}, "fs_read", read("src/keys.txt")),
    "read-pem-body-range": Case({"src/keys.txt": PEM_IN_TEXT}, "fs_read", read("src/keys.txt", start_line=3, end_line=3)),
    "read-aws-content": Case({"config/creds.ini": AWS_CREDS}, "fs_read", read("config/creds.ini")),
    "read-buffer-service-account": Case(buffers={"scratch.json": SERVICE_ACCOUNT}, tool="fs_read", args=read("scratch.json")),
    "read-buffer-dotenv": Case(buffers={".env": ENV}, tool="fs_read", args=read(".env")),
    # links and reserved directories
    "read-symlink-to-dotenv": Case({".env": ENV}, "fs_read", read("notes.txt"), setup=symlink("notes.txt", "{root}/.env")),
    "read-symlink-outside": Case({}, "fs_read", read("notes.txt"), setup=symlink("notes.txt", "{out}/secret.txt")),
    "read-symlink-dir-outside": Case({}, "fs_read", read("vendor/secret.txt"), setup=symlink("vendor", "{out}")),
    "read-hardlink-outside": Case({}, "fs_read", read("notes.txt"), setup=hardlink("notes.txt", "{out}/secret.txt")),
    "read-hardlink-to-dotenv": Case({".env": ENV}, "fs_read", read("docs/env.txt"), setup=hardlink("docs/env.txt", "{root}/.env")),
    "read-dotdot": Case({".env": ENV}, "fs_read", read("src/../.env")),
    "read-absolute-outside": Case({}, "fs_read", read("{out}/secret.txt")),
    "read-git-config": Case({".git/deepseek-note": "{c}\n"}, "fs_read", read(".git/deepseek-note")),
    "read-deepseek-dir": Case({".deepseek/note.txt": "{c}\n"}, "fs_read", read(".deepseek/note.txt")),
    # fs.search_rg
    "search-dotenv": Case({".env": ENV}, "fs_search_rg", {"query": "canary"}),
    "search-dotenv-glob": Case({".env": ENV}, "fs_search_rg", {"query": "canary", "globs": [".env"]}),
    "search-dotenv-any-glob": Case({"a/.env.prod": ENV}, "fs_search_rg", {"query": "canary", "globs": ["**/.env*"]}),
    "search-upper-dotenv": Case({".ENV": ENV}, "fs_search_rg", {"query": "canary", "case_insensitive": True}),
    "search-envrc": Case({".envrc": "export NOTE={c}\n"}, "fs_search_rg", {"query": "canary"}),
    "search-pem-glob": Case({"k/server.pem": "{c}\n"}, "fs_search_rg", {"query": "canary", "globs": ["*.pem"]}),
    "search-nested-aws": Case({"x/.aws/credentials": AWS_CREDS}, "fs_search_rg", {"query": "canary"}),
    "search-service-account": Case({"deploy/ci.json": SERVICE_ACCOUNT}, "fs_search_rg", {"query": "canary"}),
    "search-kubeconfig-content": Case({"ops/cluster.yaml": KUBECONFIG}, "fs_search_rg", {"query": "canary"}),
    "search-netrc-content": Case({"notes/hosts.txt": NETRC}, "fs_search_rg", {"query": "canary"}),
    "search-pem-body": Case({"src/keys.txt": PEM_IN_TEXT}, "fs_search_rg", {"query": "canary"}),
    "search-hardlink-outside": Case({}, "fs_search_rg", {"query": "canary"}, setup=hardlink("notes.txt", "{out}/secret.txt")),
    "search-symlink-outside": Case({}, "fs_search_rg", {"query": "canary"}, setup=symlink("notes.txt", "{out}/secret.txt")),
    "search-buffer-service-account": Case(buffers={"scratch.json": SERVICE_ACCOUNT}, tool="fs_search_rg", args={"query": "canary"}),
    "search-git-dir": Case({".git/deepseek-note": "{c}\n"}, "fs_search_rg", {"query": "canary", "globs": [".git/**"]}),
    # git tools
    "git-diff-tracked-dotenv": Case({".env": "A=1\n"}, "git_diff", {}, commit=["*"],
                                    setup=lambda r, o, c: (r / ".env").write_text(f"NOTE={c}\n")),
    "git-diff-staged-dotenv": Case({".env": "A=1\n"}, "git_diff", {"staged": True}, commit=["*"],
                                   setup=lambda r, o, c: ((r / ".env").write_text(f"NOTE={c}\n"), git(r, "add", ".env"))),
    "git-diff-rev-dotenv": Case({".env": ENV}, "git_diff", {"rev": "HEAD~1"}, commit=["*"],
                                setup=lambda r, o, c: ((r / ".env").unlink(), git(r, "commit", "-qam", "rm"))),
    "git-diff-dir-with-dotenv": Case({"config/.env.production": "A=1\n"}, "git_diff", {"paths": ["config"]}, commit=["*"],
                                     setup=lambda r, o, c: (r / "config/.env.production").write_text(f"NOTE={c}\n")),
    "git-diff-envrc": Case({".envrc": "A=1\n"}, "git_diff", {}, commit=["*"],
                           setup=lambda r, o, c: (r / ".envrc").write_text(f"export NOTE={c}\n")),
    "git-diff-service-account": Case({"deploy/ci.json": SERVICE_ACCOUNT.replace("{c}", "old")}, "git_diff", {}, commit=["*"],
                                     setup=lambda r, o, c: (r / "deploy/ci.json").write_text(SERVICE_ACCOUNT.replace("{c}", c))),
    "git-show-dotenv": Case({".env": ENV}, "git_show", {"rev": "HEAD", "path": ".env"}, commit=["*"]),
    "git-show-service-account": Case({"deploy/ci.json": SERVICE_ACCOUNT}, "git_show", {"rev": "HEAD", "path": "deploy/ci.json"}, commit=["*"]),
    "git-show-kubeconfig-content": Case({"ops/cluster.yaml": KUBECONFIG}, "git_show", {"rev": "HEAD", "path": "ops/cluster.yaml"}, commit=["*"]),
    # index hits (the planner's prompt) and the index.query tool
    "index-prompt-service-account": Case({"deploy/ci.json": SERVICE_ACCOUNT}, index=True),
    "index-prompt-dotenv": Case({".env": ENV}, index=True),
    "index-prompt-kubeconfig-content": Case({"ops/cluster.yaml": KUBECONFIG}, index=True),
    "index-prompt-index-built-without-deny-list": Case({".env": ENV, "x/.envrc": "export NOTE={c}\n"}, index=True, index_deny=["nothing"]),
    "index-tool-index-built-without-deny-list": Case({".env": ENV}, "index_query", {"q": "canary NOTE"}, index=True, index_deny=["nothing"]),
    "index-tool-envrc": Case({".envrc": "export NOTE={c}\n"}, "index_query", {"q": "canary NOTE"}, index=True),
    "index-tool-netrc-content": Case({"notes/hosts.txt": NETRC}, "index_query", {"q": "canary password"}, index=True),
    # allowlisted commands with model-chosen arguments (verification path)
    "cmd-rg-dotenv-arg": Case({".env": ENV}, command="rg canary .env"),
    "cmd-rg-dotenv-dir": Case({".env": ENV}, command="rg canary"),
    "cmd-rg-unrestricted": Case({".env": ENV}, command="rg -uuu canary"),
    "cmd-rg-hidden-glob": Case({"a/.env.prod": ENV}, command="rg --hidden --iglob .env* canary"),
    "cmd-rg-envrc": Case({".envrc": "export NOTE={c}\n"}, command="rg --hidden canary"),
    "cmd-rg-service-account-arg": Case({"deploy/ci.json": SERVICE_ACCOUNT}, command="rg canary deploy/ci.json"),
    "cmd-rg-kube": Case({".kube/config": KUBECONFIG}, command="rg --hidden canary"),
    "cmd-git-diff-no-index": Case({".env": ENV, "empty.txt": ""}, command="git diff --no-index empty.txt .env"),
    "cmd-git-diff-no-index-abbrev": Case({".env": ENV, "empty.txt": ""}, command="git diff --no-inde empty.txt .env"),
    "cmd-git-diff-worktree": Case({".env": "A=1\n"}, command="git diff", commit=["*"],
                                  setup=lambda r, o, c: (r / ".env").write_text(f"NOTE={c}\n")),
    "cmd-git-diff-path": Case({".env": "A=1\n"}, command="git diff -- .env", commit=["*"],
                              setup=lambda r, o, c: (r / ".env").write_text(f"NOTE={c}\n")),
    "cmd-git-diff-magic-pathspec": Case({".env": "A=1\n"}, command="git diff -- :(literal).env", commit=["*"],
                                        setup=lambda r, o, c: (r / ".env").write_text(f"NOTE={c}\n")),
    "cmd-git-log-patch": Case({".env": ENV}, command="git log -p", commit=["*"]),
    "cmd-git-log-patch-path": Case({".env": ENV}, command="git log -p -- .env", commit=["*"]),
    "cmd-git-show-rev-path": Case({".env": ENV}, command="git show HEAD:.env", commit=["*"], allow=["git show"]),
    "cmd-git-show-commit": Case({".env": ENV}, command="git show HEAD", commit=["*"], allow=["git show"]),
    "cmd-git-grep": Case({".env": ENV}, command="git grep canary", commit=["*"], allow=["git grep"]),
    "cmd-cat-symlink": Case({".env": ENV}, command="rg canary notes.txt", setup=symlink("notes.txt", "{root}/.env")),
    "cmd-rg-hardlink": Case({}, command="rg canary notes.txt", setup=hardlink("notes.txt", "{out}/secret.txt")),
}


def aws_secret(t: str) -> str:
    return "wJalrXUtnFEMI/K7MDENG/" + t[:18].ljust(18, "Q")


REDACTION_CASES: dict[str, tuple[str, str, Callable[[str], str]]] = {
    # name: (file, text with {c}, canary maker) - read with fs_read from an ordinary file
    "deepseek-key": ("src/settings.py", 'CLIENT = make(key="{c}")\n', lambda t: "sk-" + (t * 4)[:32]),
    "sendgrid-key": ("src/mail.py", 'SENDGRID = "{c}"\n', lambda t: "SG." + (t * 3)[:22] + "." + (t * 4)[:43]),
    "azure-connection-string": ("src/storage.py",
                                'CONN = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={c};EndpointSuffix=core.windows.net"\n',
                                lambda t: (t * 8)[:86] + "=="),
    "azure-sas": ("src/blob.py", 'URL = "https://acct.blob.core.windows.net/c/x?sv=2022&sig={c}"\n', lambda t: (t * 3)[:40]),
    "aws-secret-json-escaped": ("config/app.json", '{"aws_secret_access_key": "{c}", "region": "eu"}\n', aws_secret),
    "password-json": ("config/app.json", '{\n  "db": {"password": "{c}"}\n}\n', lambda t: "Zx9" + t[:14]),
    "password-yaml": ("config/app.yaml", "db:\n  password: {c}\n", lambda t: "Qw3" + t[:14]),
    "token-assignment": ("src/client.py", 'API_TOKEN = "{c}"\n', lambda t: "a8F3" + t[:16]),
    "github-token": ("src/gh.py", 'GH = "ghp_{c}"\n', lambda t: (t * 3)[:36]),
    "github-fine-grained": ("src/gh.py", 'GH = "github_pat_{c}"\n', lambda t: "11AB" + (t * 3)[:50]),
    "slack-webhook": ("src/notify.py", 'HOOK = "https://hooks.slack.com/services/T0123/B0123/{c}"\n', lambda t: t[:24]),
    "stripe-live": ("src/pay.py", 'KEY = "sk_live_{c}"\n', lambda t: (t * 2)[:24]),
    "google-api-key": ("src/maps.py", 'KEY = "AIza{c}"\n', lambda t: (t * 3)[:35]),
    "jwt": ("src/auth.py", 'T = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.{c}"\n', lambda t: t[:30]),
    "basic-auth-url": ("src/db.py", 'URL = "postgres://admin:{c}@db.local/app"\n', lambda t: "P4" + t[:14]),
    "bearer-header": ("src/http.py", 'H = {{"Authorization": "Bearer {c}"}}\n', lambda t: (t * 2)[:32]),
    "npm-token": ("src/npm.py", 'T = "npm_{c}"\n', lambda t: (t * 2)[:36]),
    "huggingface-token": ("src/hf.py", 'T = "hf_{c}"\n', lambda t: (t * 2)[:34]),
    "pypi-token": ("src/pypi.py", 'T = "pypi-AgEIcHlwaS5vcmc{c}"\n', lambda t: (t * 4)[:80]),
    "telegram-token": ("src/bot.py", 'T = "123456789:{c}"\n', lambda t: (t * 2)[:35]),
    "pem-body-lines": ("src/embedded.py", 'KEY = """\n{c}\n"""\n', lambda t: ("Ab1" + t * 3)[:64]),
    "pem-body-with-end-line": ("src/embedded.py", 'KEY = """\n{c}\nAbCdEf0123456789==\n-----END ' + 'PRIVATE KEY-----\n"""\n',
                               lambda t: ("Cd2" + t * 3)[:48]),
}


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git(root, "init", "-q")
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, outside


def _plant(root: Path, outside: Path, case: Case, canary: str) -> None:
    (outside / "secret.txt").write_text(f"NOTE={canary}\n")
    for rel, text in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("{c}", canary))
    if case.commit is not None:
        git(root, "add", "-A", "-f")
        git(root, "commit", "-qm", "base")
    if case.setup is not None:
        case.setup(root, outside, canary)


def _seen(fake, root: Path) -> str:
    """Everything the model was sent, and everything the event log holds."""
    bodies = json.dumps([r.body for r in fake.requests], ensure_ascii=False)
    logs = "".join(p.read_text() for p in (root / ".deepseek").rglob("events.jsonl")) if (root / ".deepseek").exists() else ""
    return bodies + logs


async def _run_planner_with_tool(root: Path, fake, case: Case, canary: str) -> None:
    cfg = scenario_config()
    index = None
    if case.index:
        from deepseek_ls.index import CodeIndex

        cfg.index.enabled = True
        index = CodeIndex(root, state_dir(root), cfg.index, deny_paths=case.index_deny)
        index.build()
    if case.tool:
        args = json.loads(json.dumps(case.args).replace("{out}", str(root.parent / "outside")))
        fake.add({"match": {"role": "planner", "last_role": "user"}, "tool_calls": [{"name": case.tool, "arguments": args}]})
    fake.add({"match": {"role": "planner"}, "content": plan_json(("Fix", ["app.py"]))})
    overlay = DocumentOverlay(root)
    for rel, text in case.buffers.items():
        overlay.set(rel, text.replace("{c}", canary), 1)
    agent = Agent(root, cfg, llm=LLMClient(cfg.llm), ui=ScriptedUI(), overlay=overlay, index=index)
    try:
        # The request names the canary's surroundings so index hits would include the file.
        await agent.plan("Where is NOTE password token canary configured?")
    finally:
        await agent.llm.aclose()
    if case.tool:
        tool_messages = [m for r in fake.requests for m in r.body["messages"] if m.get("role") == "tool"]
        assert tool_messages, "the tool call ran and its result went back to the model"


async def _run_command(root: Path, fake, case: Case) -> str:
    cfg: Config = scenario_config()
    cfg.policy.allowlist = [*cfg.policy.allowlist, *case.allow]
    from deepseek_ls.sink import NullSink

    world = World(root, cfg, sink=NullSink(), overlay=DocumentOverlay(root), patches=None)
    try:
        result = await world.run_command(case.command or "", timeout=30)
        output = f"exit {result.exit_code}\n{result.output}"
    except Exception as exc:  # noqa: BLE001 - a refusal is an answer the model sees, too
        output = f"refused: {exc}"
    llm = LLMClient(cfg.llm)
    fake.add({"match": {"role": "executor"}, "content": "ok"})
    try:
        await llm.complete([{"role": "user", "content": f"Verification output:\n{output}"}], role="executor")
    finally:
        await llm.aclose()
    return output


@pytest.mark.parametrize("name", sorted(PATH_CASES), ids=str)
async def test_no_leak_secret_paths(name: str, ws, fake_deepseek) -> None:
    root, outside = ws
    case = PATH_CASES[name]
    canary = plain(uuid.uuid4().hex[:10].translate(str.maketrans("0123456789", "ghijklmnop")))
    _plant(root, outside, case, canary)
    if case.command:
        await _run_command(root, fake_deepseek, case)
    else:
        await _run_planner_with_tool(root, fake_deepseek, case, canary)
    assert fake_deepseek.requests, "the model was called"
    assert canary not in _seen(fake_deepseek, root)


@pytest.mark.parametrize("name", sorted(REDACTION_CASES), ids=str)
async def test_no_leak_secret_values_are_redacted(name: str, ws, fake_deepseek) -> None:
    root, outside = ws
    rel, text, make = REDACTION_CASES[name]
    canary = make(uuid.uuid4().hex + uuid.uuid4().hex.upper())
    case = Case({rel: text}, "fs_read", read(rel))
    _plant(root, outside, case, canary)
    await _run_planner_with_tool(root, fake_deepseek, case, canary)
    seen = _seen(fake_deepseek, root)
    assert canary not in seen
    assert "[REDACTED:" in seen  # the file was read; the value was replaced, not the whole file refused


def test_corpus_size() -> None:
    # The secret/path half of the issue-14 bypass corpus (the sandbox half lives with the sandbox tests).
    assert len(PATH_CASES) + len(REDACTION_CASES) >= 100

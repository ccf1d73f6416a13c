"""Never clobber a hunk's state from another process: the language server (one per editor) and the
CLI each read, change and write `.deepseek/patches/<id>.json`. A hunk moves from pending to
accepted or rejected once, by one of them; the other's change is refused and records nothing.

Before, `PatchStore.mark_applied` (what the server calls once the editor applied an Accept's edit)
set the status whatever it was: a hunk the person rejected in one editor while the Accept's edit
was out in another came back accepted, and both `PatchRejected@v1` and `PatchApplied@v1` were
logged; two rejects logged `PatchRejected@v1` twice. Now every transition is a compare-and-set
under the store's file lock.

Real processes: two worker processes (or a worker and the real CLI) released together; and two
real language servers on one workspace, as when Neovim and VS Code are both open on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_hostile_editor_buffers import DIFF, ORIGINAL, TYPED, Editor, capabilities_for

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.workspace import state_dir

from raw_client import RawServer, server_env

ROUNDS = 4  # per pair; each round races on a freshly staged patch

# One transition of hunk 0, as the process that makes it does it (after waiting for `go`).
WORKER = r"""
import json, os, sys, time
from pathlib import Path
from deepseek_ls.patch import PatchError, PatchStore
from deepseek_ls.policy import PathPolicy
from deepseek_ls.store.sessions import SessionStore
from deepseek_ls.workspace import state_dir
root, session_id, patch_id, hunk_id, action, go = sys.argv[1:]
store = PatchStore(Path(root), state_dir(Path(root)), policy=PathPolicy(Path(root)),
                   sink=SessionStore(state_dir(Path(root))).open(session_id))
store.get(patch_id)  # read the state first, as the server and the CLI do before they decide
while not os.path.exists(go):
    time.sleep(0.001)
try:
    if action == "editor-accept":  # the editor applied the Accept's edit: record it
        store.mark_applied(patch_id, [hunk_id])
    else:
        store.reject(patch_id, [hunk_id], reason="rejected in the editor")
except PatchError as error:  # HunkSettled: another process settled it first
    print(json.dumps({"won": False, "error": str(error)}))
else:
    print(json.dumps({"won": True}))
"""


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.session_id = SessionStore(state_dir(root)).create(root, prompt="a patch").session_id
        self.store = PatchStore(root, state_dir(root), policy=PathPolicy(root))

    def stage(self) -> tuple[str, str]:
        (self.root / "app.py").write_text(ORIGINAL)
        patch = PatchStore(self.root, state_dir(self.root), policy=PathPolicy(self.root)).stage(
            DIFF, session_id=self.session_id)
        return patch.patch_id, patch.hunks[0].hunk_id

    def events(self, kind: str, patch_id: str, hunk_id: str) -> int:
        """How many `kind` events of the session name `hunk_id` of `patch_id`."""
        log = self.root / ".deepseek" / "sessions" / self.session_id / "events.jsonl"
        events = [json.loads(line) for line in log.read_text().splitlines()]
        return sum(e["kind"] == kind and e["payload"].get("patch_id") == patch_id
                   and hunk_id in e["payload"].get("hunk_ids", []) for e in events)

    def status(self, patch_id: str, hunk_id: str) -> str:
        return self.store.get(patch_id).hunk(hunk_id).status


@pytest.fixture
def ws(tmp_path: Path, user_config_home: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return Workspace(root)


def env(ws: Workspace) -> dict[str, str]:
    return {**os.environ, "DEEPSEEK_API_KEY": "test-key", "XDG_CONFIG_HOME": str(ws.root.parent / "xdg-config")}


def start(ws: Workspace, action: str, patch_id: str, hunk_id: str, go: Path) -> subprocess.Popen:
    if action == "cli-apply":  # the real CLI; it starts racing as soon as it is up
        argv = [sys.executable, "-m", "deepseek_ls", "--workspace", str(ws.root), "apply", patch_id,
                "--hunk", hunk_id, "--yes", "--json"]
    else:
        argv = [sys.executable, "-c", WORKER, str(ws.root), ws.session_id, patch_id, hunk_id, action, str(go)]
    return subprocess.Popen(argv, cwd=ws.root, env=env(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def won(action: str, proc: subprocess.Popen) -> bool:
    out, err = proc.communicate(timeout=120)
    if action == "cli-apply":
        assert proc.returncode in (0, 1), err
        return proc.returncode == 0
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])["won"]


# What the winner leaves: the hunk's status, and the events the session must hold for it.
OUTCOME = {"editor-accept": ("accepted", 1, 0), "cli-apply": ("accepted", 1, 0), "editor-reject": ("rejected", 0, 1)}

PAIRS = [
    pytest.param("editor-reject", "editor-accept", id="reject-in-one-editor-vs-accept-in-another"),
    pytest.param("editor-accept", "editor-accept", id="accept-in-two-editors"),
    pytest.param("editor-reject", "editor-reject", id="reject-in-two-editors"),
    pytest.param("editor-reject", "cli-apply", id="reject-in-the-editor-vs-cli-apply"),
    pytest.param("editor-accept", "cli-apply", id="accept-in-the-editor-vs-cli-apply"),
]


@pytest.mark.parametrize(("first", "second"), PAIRS)
def test_never_clobber_a_hunk_settled_by_another_process(ws: Workspace, first: str, second: str) -> None:
    for round_ in range(ROUNDS):
        patch_id, hunk_id = ws.stage()
        go = ws.root.parent / f"go-{round_}"
        procs = [(first, start(ws, first, patch_id, hunk_id, go)), (second, start(ws, second, patch_id, hunk_id, go))]
        time.sleep(0.3)  # both read the state (the CLI may already be done: it does not wait for `go`)
        go.touch()
        winners = [action for action, proc in procs if won(action, proc)]
        assert len(winners) == 1, f"round {round_}: {winners} both changed hunk {hunk_id}"
        status, applied, rejected = OUTCOME[winners[0]]
        assert ws.status(patch_id, hunk_id) == status, round_
        # The winner's change is the session's only record of the hunk (the CLI logs to the patch's session too).
        assert (ws.events("PatchApplied@v1", patch_id, hunk_id), ws.events("PatchRejected@v1", patch_id, hunk_id)) == (applied, rejected)
        on_disk = (ws.root / "app.py").read_text()
        assert ("inserted A" in on_disk) is (winners[0] == "cli-apply"), on_disk  # only the CLI writes the disk


@pytest.fixture
def two_editors(ws: Workspace, tmp_path: Path) -> Iterator[tuple[Workspace, RawServer, Editor, RawServer, str, str, str]]:
    patch_id, hunk_id = ws.stage()
    servers = []
    editors = []
    uri = (ws.root / "app.py").as_uri()
    for hold in (True, False):
        editor = Editor(versioned=False, hold=hold)
        server = RawServer(ws.root, server_env(tmp_path, DEEPSEEK_LS_CLIENT_TIMEOUT_SCALE="0.5"), on_request=editor.on_request)
        editor.server = server
        server.initialize(capabilities_for(False))
        editor.buffers[uri] = [TYPED, 2]
        server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 2,
                                                                "text": TYPED}})
        servers.append(server)
        editors.append(editor)
    try:
        yield ws, servers[0], editors[0], servers[1], patch_id, hunk_id, uri
        for server in servers:
            assert server.close() == 0, server.stderr()[-3000:]
    finally:
        for server in servers:
            server.kill()


def command(server: RawServer, name: str, **args: Any) -> Any:
    return server.request("workspace/executeCommand", {"command": name, "arguments": [args]})


def test_never_clobber_a_reject_in_another_editor_while_an_accept_is_out(two_editors) -> None:
    """Editor 1 accepts; its edit is out (the editor has not answered yet) when the person rejects
    the hunk in editor 2. Editor 1 then applies the edit. The hunk stays rejected (the bug: it came
    back accepted, with both events logged); editor 1 is told the hunk was rejected elsewhere and
    how to take it out of its buffer."""
    ws, first, first_editor, second, patch_id, hunk_id, uri = two_editors
    accepting = command(first, names.CMD_ACCEPT_HUNK, patch_id=patch_id, hunk_id=hunk_id)
    assert first_editor.wait_held(1), "the accept sent no edit"
    rejected = second.answer(command(second, names.CMD_REJECT_HUNK, patch_id=patch_id, hunk_id=hunk_id))
    assert rejected.get("result", {}).get("rejected") is True, rejected
    first_editor.release()  # the editor applies the edit and answers applied: true
    result = first.answer(accepting)["result"]
    assert result["applied"] is False and result["settled_elsewhere"] == {hunk_id: "rejected"}, result
    assert "rejected there and stay rejected" in result["message"] and "undo the edit" in result["message"], result
    assert ws.status(patch_id, hunk_id) == "rejected"
    assert (ws.events("PatchApplied@v1", patch_id, hunk_id), ws.events("PatchRejected@v1", patch_id, hunk_id)) == (0, 1)
    assert (ws.root / "app.py").read_text() == ORIGINAL

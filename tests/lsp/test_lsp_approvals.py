"""Approvals: a patch the safety gate flagged needs an explicit answer before a
bulk accept — through `window/showMessageRequest` ("Allow once" before "Always
allow"), or the `deepseek.approve` / `deepseek.deny` commands while the
message request is still open."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import file_uri, run, wait_until
from lsprotocol import types

from deepseek_ls.lsp import names
from deepseek_ls.patch import PatchStore, SafetyGate
from deepseek_ls.policy import PathPolicy
from deepseek_ls.workspace import state_dir

from lsp_harness import CFG_DIFF as DIFF, CFG_ORIGINAL as ORIGINAL  # noqa: E402


@pytest.fixture
def gated(workspace: Path) -> tuple[PatchStore, str]:
    (workspace / "cfg.py").write_text(ORIGINAL)
    store = PatchStore(
        workspace, state_dir(workspace), policy=PathPolicy(workspace), gate=SafetyGate(max_loc_without_approval=1)
    )
    patch = store.stage(DIFF)
    assert patch.approval_required
    return store, patch.patch_id


async def test_allow_once_via_show_message_request(editor, workspace: Path, gated) -> None:
    client, state = editor
    store, patch_id = gated
    state.message_answer = lambda params: "Allow once"
    result = await run(client, names.CMD_ACCEPT_ALL, {"patch_id": patch_id})
    assert result["failed"] == [] and len(result["applied"]) == 1
    (request,) = state.message_requests
    assert [a.title for a in request.actions] == ["Allow once", "Always allow", "Deny"]
    assert "cfg.py" in request.message and "explicit approval" in request.message
    assert len(state.applied_edits) == 1
    assert {h.status for h in store.get(patch_id).hunks} == {"accepted"}


async def test_deny_via_show_message_request_applies_nothing(editor, workspace: Path, gated) -> None:
    client, state = editor
    store, patch_id = gated
    state.message_answer = lambda params: "Deny"
    result = await run(client, names.CMD_ACCEPT_FILE, {"patch_id": patch_id, "uri": file_uri(workspace, "cfg.py")})
    assert result["applied"] is False and result["message"] == "approval denied"
    assert state.applied_edits == []
    assert {h.status for h in store.get(patch_id).hunks} == {"pending"}


async def test_always_allow_is_remembered(editor, workspace: Path, gated) -> None:
    client, state = editor
    store, patch_id = gated
    state.message_answer = lambda params: "Always allow"
    await run(client, names.CMD_ACCEPT_ALL, {"patch_id": patch_id})
    (workspace / "other.py").write_text(ORIGINAL)
    second = store.stage(DIFF.replace("cfg.py", "other.py"))
    await run(client, names.CMD_ACCEPT_ALL, {"patch_id": second.patch_id})
    assert len(state.message_requests) == 1  # not asked again
    assert len(state.applied_edits) == 2


async def test_approve_command_answers_a_pending_request(editor, workspace: Path, gated) -> None:
    client, state = editor
    store, patch_id = gated
    never = asyncio.Event()

    async def wait_forever(params: types.ShowMessageRequestParams) -> None:
        state.message_requests.append(params)
        await never.wait()  # the person ignores the pop-up and uses the command instead

    client.protocol.fm.features.pop(types.WINDOW_SHOW_MESSAGE_REQUEST, None)
    client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(wait_forever)

    accepting = asyncio.ensure_future(run(client, names.CMD_ACCEPT_ALL, {"patch_id": patch_id}))
    # The pop-up is open (so the request is registered): list and answer it by command.
    await wait_until(lambda: state.message_requests)
    listed = await client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})
    assert len(listed.approvals) == 1
    request = listed.approvals[0]
    assert request.kind == "patch.apply" and request.patch_id == patch_id and list(request.files) == ["cfg.py"]

    answer = await run(client, names.CMD_APPROVE, {"request_id": request.request_id})
    assert answer == {"request_id": request.request_id, "answer": "allow_once"}
    result = await asyncio.wait_for(accepting, 60)
    assert len(result["applied"]) == 1
    assert (await client.protocol.send_request_async(names.REQ_PENDING_APPROVALS, {})).approvals == []
    never.set()


async def test_deny_command_of_unknown_request_is_a_clear_error(editor) -> None:
    client, _ = editor
    with pytest.raises(Exception, match="No pending approval"):
        await run(client, names.CMD_DENY, {"request_id": "nope"})

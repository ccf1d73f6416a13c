"""Approval modes: suggest asks, auto allows, never denies; the safety gate always asks."""

from __future__ import annotations

import pytest

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy.approvals import Approvals
from deepseek_ls.sink import ListSink
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest


class ScriptedUI:
    """Answers approvals from a list, recording what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision(request_id=request.request_id, answer=self.answers.pop(0))  # type: ignore[arg-type]

    async def ask_user(self, question, choices=None):
        return None

    def stream(self, channel, text, *, session_id=None):
        return None

    def progress(self, token, message, percentage=None, *, done=False):
        return None


def bash(cmd: str = "pytest -q") -> ApprovalRequest:
    return ApprovalRequest(request_id="r1", kind="bash.run", title=f"Run: {cmd}", command=cmd)


def patch() -> ApprovalRequest:
    return ApprovalRequest(request_id="r2", kind="patch.apply", title="Apply", files=["a.py"], hunk_ids=["h1"], patch_id="p")


async def test_suggest_asks_the_person_and_records_the_answer() -> None:
    ui, sink = ScriptedUI("deny"), ListSink()
    decision = await Approvals(PolicyConfig(), ui, sink=sink).request(bash())
    assert not decision.allowed
    assert ui.asked[0].command == "pytest -q"
    assert sink.kinds() == ["ApprovalRequested@v1", "ApprovalResolved@v1", "PolicyDecision@v1"]
    assert sink.events[-1][1]["allowed"] is False


async def test_auto_allows_without_asking() -> None:
    ui, sink = ScriptedUI(), ListSink()
    decision = await Approvals(PolicyConfig(approval_mode="auto"), ui, sink=sink).request(patch())
    assert decision.allowed and ui.asked == []
    assert sink.events[-1] == ("PolicyDecision@v1", {"subject": "patch.apply: a.py", "allowed": True, "rule": "approval_mode=auto", "reason": "allowed by policy"})


async def test_never_denies_without_asking() -> None:
    ui = ScriptedUI()
    decision = await Approvals(PolicyConfig(approval_mode="never"), ui).request(bash())
    assert not decision.allowed and ui.asked == []


async def test_safety_gate_asks_even_in_auto_mode() -> None:
    ui = ScriptedUI("allow_once")
    decision = await Approvals(PolicyConfig(approval_mode="auto"), ui).request(patch(), force_explicit=True)
    assert decision.allowed and len(ui.asked) == 1


async def test_always_allow_is_remembered_per_command() -> None:
    ui = ScriptedUI("always_allow", "deny")
    approvals = Approvals(PolicyConfig(), ui)
    assert (await approvals.request(bash("pytest -q"))).allowed
    assert (await approvals.request(bash("pytest -q"))).allowed  # not asked again
    assert not (await approvals.request(bash("ruff check"))).allowed  # a different command is asked
    assert [r.command for r in ui.asked] == ["pytest -q", "ruff check"]


@pytest.mark.parametrize(
    ("mode", "edits", "bash_setting", "expected_patch", "expected_bash"),
    [
        pytest.param("suggest", "ask", "ask", "suggest", "suggest", id="defaults"),
        pytest.param("suggest", "auto", "ask", "auto", "suggest", id="auto-edits-only"),
        pytest.param("auto", "ask", "never", "auto", "never", id="auto-but-no-bash"),
        pytest.param("never", "auto", "auto", "never", "never", id="never-wins"),
    ],
)
def test_per_kind_settings_refine_the_mode(mode, edits, bash_setting, expected_patch, expected_bash) -> None:
    approvals = Approvals(PolicyConfig(approval_mode=mode, approve_edits=edits, approve_bash=bash_setting), ScriptedUI())
    assert approvals.mode_for("patch.apply") == expected_patch
    assert approvals.mode_for("bash.run") == expected_bash

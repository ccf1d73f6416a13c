"""Approvals: who says yes before a patch is applied or a command runs.

Modes (`policy.approval_mode`, refined per kind by `approve_edits` /
`approve_bash`): `suggest` asks the person through the `UIPort`, `auto` allows
without asking, `never` denies without asking. A safety-gate hit
(`force_explicit`) asks even in `auto`. An "always allow" answer is remembered
for the rest of this `Approvals`' life: per command line for `bash.run`, for
all patches for `patch.apply`; never for a `force_explicit` request (an unsafe
command shape, no sandbox, a file that configures execution). A command
that rewrites files in place (`changes_files`: a formatter in write mode) is
decided like an edit too: by the stricter of its kind's mode and
`patch.apply`'s, so it runs unprompted only when edits are not reviewed
either. Every request and answer is an event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from deepseek_ls.config_models import ApprovalMode, PolicyConfig
from deepseek_ls.store.sink import EventSink, NullSink
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest, UIPort

if TYPE_CHECKING:
    from deepseek_ls.policy.commands import CheckedCommand
    from deepseek_ls.policy.sandbox import SandboxStatus

_LEGACY = {"ask": None, "auto": "auto", "never": "never"}
_STRICTNESS: dict[str, int] = {"auto": 0, "suggest": 1, "never": 2}


def command_review(checked: "CheckedCommand", sandbox: "SandboxStatus") -> list[str]:
    """Why a policy-checked command needs an explicit approval in every mode: an unsafe shape
    (options outside its safe table, make overrides, a shell line), or no OS sandbox to confine it.
    Empty: the command may run as its mode says (verification then runs unprompted)."""
    reasons = list(checked.review)
    if not sandbox.available:
        reasons.append(sandbox.describe())
    return reasons


class Approvals:
    def __init__(self, config: PolicyConfig, ui: UIPort, *, sink: EventSink | None = None) -> None:
        self.config = config
        self.ui = ui
        self.sink = sink if sink is not None else NullSink()
        self._always: set[tuple[str, str]] = set()

    def mode_for(self, kind: str) -> ApprovalMode:
        if self.config.approval_mode == "never":
            return "never"
        override: str | None = None
        if kind == "patch.apply":
            override = _LEGACY[self.config.approve_edits]
        elif kind == "bash.run":
            override = _LEGACY[self.config.approve_bash]
        if override == "never":
            return "never"
        if override == "auto":
            return "auto"
        return self.config.approval_mode

    async def request(self, request: ApprovalRequest, *, force_explicit: bool = False) -> ApprovalDecision:
        """Decide `request` by mode, asking the person when the mode (or the safety gate) says so."""
        decision, _ = await self.decide(request, force_explicit=force_explicit)
        return decision

    async def decide(
        self, request: ApprovalRequest, *, force_explicit: bool = False, changes_files: bool = False
    ) -> tuple[ApprovalDecision, Literal["user", "policy"]]:
        """As `request`, also saying who decided: the person or the policy. `changes_files`: the
        request (a command) rewrites files outside any patch review, so edits' mode applies too."""
        mode = self.mode_for(request.kind)
        if changes_files:
            mode = max(mode, self.mode_for("patch.apply"), key=_STRICTNESS.__getitem__)
        key = (request.kind, request.command or "*")
        if mode == "never":
            return self._decided(request, "deny", "approval_mode=never", f"{request.kind} is disabled by policy"), "policy"
        if not force_explicit:
            if mode == "auto":
                return self._decided(request, "allow_once", "approval_mode=auto", "allowed by policy"), "policy"
            if key in self._always:
                return self._decided(request, "allow_once", "always_allow", "allowed earlier with 'always allow'"), "policy"
        self.sink.emit(
            "ApprovalRequested@v1",
            {
                "request_id": request.request_id,
                "kind": request.kind,
                "title": request.title,
                "detail": request.detail,
                "command": request.command,
                "files": request.files,
                "hunk_ids": request.hunk_ids,
                "patch_id": request.patch_id,
                "force_explicit": force_explicit,
            },
        )
        decision = await self.ui.request_approval(request)
        self.sink.emit("ApprovalResolved@v1", {"request_id": request.request_id, "answer": decision.answer})
        if decision.answer == "always_allow" and not force_explicit:
            self._always.add(key)
        rule = "safety_gate" if force_explicit else "user"
        self._policy_event(request, decision.allowed, rule, decision.reason or f"answered {decision.answer}")
        return decision, "user"

    def _decided(
        self, request: ApprovalRequest, answer: Literal["allow_once", "deny"], rule: str, reason: str
    ) -> ApprovalDecision:
        self._policy_event(request, answer != "deny", rule, reason)
        return ApprovalDecision(request_id=request.request_id, answer=answer, reason=reason)

    def _policy_event(self, request: ApprovalRequest, allowed: bool, rule: str, reason: str) -> None:
        subject = request.command or ", ".join(request.files) or request.title
        self.sink.emit(
            "PolicyDecision@v1",
            {"subject": f"{request.kind}: {subject}", "allowed": allowed, "rule": rule, "reason": reason},
        )

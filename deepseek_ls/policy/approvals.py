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

The person has `policy.approval_timeout_seconds` to answer (`ask_person`); then the answer is
`timeout`. A request refused (deny, cancel, timeout) is not put to the person again while the same
person action goes on (`new_action` starts the next one): asked again, the same answer comes back
at once, recorded as a `PolicyDecision` with rule `asked_already`. `Refused` is how an approval
point that cannot go on says so; the agent loop turns it into a paused session
(`agent/refusals.py`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Literal

from deepseek_ls.config_models import ApprovalMode, PolicyConfig
from deepseek_ls.sink import EventSink, NullSink
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest, Refusal, UIPort

if TYPE_CHECKING:
    from deepseek_ls.policy.commands import CheckedCommand
    from deepseek_ls.policy.sandbox import SandboxStatus

_LEGACY = {"ask": None, "auto": "auto", "never": "never"}
_STRICTNESS: dict[str, int] = {"auto": 0, "suggest": 1, "never": 2}


class Refused(Exception):
    """A person's "no" that stops the work where it is: a cancel or no answer anywhere, a deny where
    nothing can go on without the thing refused. `kind` is the approval kind (or `ask_user`,
    `mission`), `subject` what was asked about, `reason` the adapter's words."""

    def __init__(self, kind: str, answer: Refusal, subject: str, reason: str = "", *,
                 patch_id: str | None = None) -> None:
        self.kind = kind
        self.answer: Refusal = answer
        self.subject = subject
        self.reason = reason
        self.patch_id = patch_id
        super().__init__(f"{subject}: {said(answer, reason)}")


def said(answer: str, reason: str = "") -> str:
    """How a refusal reads in a message: "denied", "cancelled", "no answer within 600 s"."""
    if answer == "timeout":
        return reason if reason.startswith("no answer") else "no answer in time"
    return {"deny": "denied", "cancel": "cancelled"}.get(answer, answer)


async def ask_person(ui: UIPort, request: ApprovalRequest, timeout: float) -> ApprovalDecision:
    """`ui.request_approval(request)`, waiting at most `timeout` seconds: then (or when the adapter's
    own wait ran out) the answer is `timeout` and the adapter's prompt is withdrawn."""
    try:
        return await asyncio.wait_for(ui.request_approval(request), timeout)
    except TimeoutError:
        return ApprovalDecision(request_id=request.request_id, answer="timeout", reason=f"no answer within {timeout:g} s")


async def ask_question(ui: UIPort, question: str, choices: list[str] | None, timeout: float) -> tuple[str | None, Refusal | None]:
    """`ui.ask_user`, bounded like `ask_person`: (the answer, None), or (None, "cancel" | "timeout")."""
    try:
        answer = await asyncio.wait_for(ui.ask_user(question, choices), timeout)
    except TimeoutError:
        return None, "timeout"
    if answer is None or not answer.strip():
        return None, "cancel"
    return answer, None


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
        self._refused: dict[tuple[str, ...], ApprovalDecision] = {}

    def new_action(self) -> None:
        """The person acted (a new request): what they refused before may be asked again."""
        self._refused.clear()

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
        asked = _asked_key(request)
        earlier = self._refused.get(asked)
        if earlier is not None:  # the loop came back to the same question: the person's answer stands
            reason = f"{said(earlier.answer, earlier.reason)} earlier; not asked again"
            self._policy_event(request, False, "asked_already", reason)
            return ApprovalDecision(request_id=request.request_id, answer=earlier.answer, reason=reason), "user"
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
        decision = await ask_person(self.ui, request, self.config.approval_timeout_seconds)
        self.sink.emit("ApprovalResolved@v1", {"request_id": request.request_id, "answer": decision.answer,
                                               **({"reason": decision.reason} if decision.reason else {})})
        if decision.answer == "always_allow" and not force_explicit:
            self._always.add(key)
        if not decision.allowed:
            self._refused[asked] = decision
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


def _asked_key(request: ApprovalRequest) -> tuple[str, ...]:
    """What makes two requests the same question: the kind and exactly what it would allow."""
    return (request.kind, request.command or "", request.patch_id or "", ",".join(request.hunk_ids), request.detail)

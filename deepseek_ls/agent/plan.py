"""The Plan artifact: JSON contract v1 (docs/agent.md, "The loop"), plus step status and confidence.

A plan is data: the planner produces it (from JSON or the ARCHITECT_PLAN_V1 line
protocol, see `plan_parse.py`), the session stores every version of it as
`PlanCreated@v1` / `PlanRevised@v1`, and the editor shows it as code lenses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deepseek_ls.store.ids import new_id

StepStatus = Literal["pending", "running", "done", "failed", "skipped"]


class Step(BaseModel):
    model_config = ConfigDict(extra="ignore")

    step_id: str = Field(default_factory=new_id)
    title: str
    intent: str = "edit"
    tools: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    # Earlier steps this one needs (their titles, ids or 1-based numbers): never run beside them in lanes.
    depends_on: list[str] = Field(default_factory=list)
    done: bool = False
    status: StepStatus = "pending"

    @field_validator("title")
    @classmethod
    def _title_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a step needs a non-empty title")
        return value.strip()

    @field_validator("files")
    @classmethod
    def _relative_files(cls, files: list[str]) -> list[str]:
        cleaned = []
        for f in files:
            f = f.strip().replace("\\", "/")
            if f.startswith("./"):
                f = f[2:]
            if not f:
                continue
            if f.startswith("/") or ".." in f.split("/"):
                raise ValueError(f"file paths must be workspace-relative: {f!r}")
            cleaned.append(f)
        return cleaned


class Plan(BaseModel):
    model_config = ConfigDict(extra="ignore")

    plan_id: str = Field(default_factory=new_id)
    version: int = Field(default=1, ge=1)
    goal: str
    assumptions: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    verification: list[str] = Field(default_factory=list)
    risk_notes: list[str] = Field(default_factory=list)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    # The ARCHITECT_PLAN_V1 protocol's ACCEPT / NO_EDIT lines.
    acceptance: list[str] = Field(default_factory=list)
    no_edit_reason: str | None = None

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamp_confidence(cls, value: object) -> float:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 0.5
        return min(1.0, max(0.0, number))

    # -- queries -------------------------------------------------------------

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.step_id == step_id:
                return s
        raise KeyError(f"no step {step_id!r} in plan {self.plan_id} v{self.version}")

    def next_pending(self) -> Step | None:
        """The first step still to do; a failed step (e.g. its change was denied) is retried."""
        for s in self.steps:
            if s.status in ("pending", "running", "failed"):
                return s
        return None

    @property
    def files(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.steps:
            for f in s.files:
                seen.setdefault(f, None)
        return list(seen)

    @property
    def finished(self) -> bool:
        return all(s.status in ("done", "skipped") for s in self.steps)

    def with_status(self, step_id: str, status: StepStatus) -> "Plan":
        steps = [
            s.model_copy(update={"status": status, "done": status == "done"}) if s.step_id == step_id else s
            for s in self.steps
        ]
        return self.model_copy(update={"steps": steps})

    def revised(self, new: "Plan") -> "Plan":
        """`new` as the next version of this plan: same plan_id, version + 1.

        Steps that were already done (same title) keep their id and status, so
        finished work is not redone after a revision.
        """
        done = {s.title: s for s in self.steps if s.status in ("done", "skipped")}
        steps = [done.get(s.title, s) for s in new.steps]
        return new.model_copy(update={"plan_id": self.plan_id, "version": self.version + 1, "steps": steps})

    def to_json(self) -> dict:
        return self.model_dump(mode="json")

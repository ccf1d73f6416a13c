"""Router decisions as the editor shows them: `RoutingExplanation` JSON and the
hover markdown ("why max-think")."""

from __future__ import annotations

from typing import Any



def explanation(decision: dict[str, Any]) -> dict[str, Any]:
    """`RoutingExplanation` (docs/protocol.md) of one `RouterDecision@v1` payload."""
    from deepseek_ls.router import explain  # the router loads with the agent, after start-up

    return {
        "decision_id": decision.get("decision_id"),
        "unit": decision.get("unit"),
        "role": decision.get("role"),
        "text": explain(decision),
        "score": decision.get("score"),
        "threshold": decision.get("threshold"),
        "profile": decision.get("profile"),
        "model": decision.get("model"),
        "escalation": bool(decision.get("escalation")),
        "contributions": dict(decision.get("contributions") or {}),
        "reason_codes": list(decision.get("reason_codes") or []),
    }


def find_decision(
    view: dict[str, Any], *, decision_id: str | None = None, step_id: str | None = None
) -> dict[str, Any] | None:
    """A decision of the session: by id; else the latest for the step's executor
    unit; else the latest planner decision; else the latest of all."""
    decisions = view.get("decisions") or []
    if decision_id:
        return next((d for d in decisions if d.get("decision_id") == decision_id), None)
    if step_id:
        mine = [d for d in decisions if d.get("unit") == f"executor:{step_id}"]
        if mine:
            return mine[-1]
    planner = [d for d in decisions if d.get("role") == "planner"]
    if planner:
        return planner[-1]
    return decisions[-1] if decisions else None


def markdown(expl: dict[str, Any]) -> str:
    """Hover text: verdict, each signal's contribution, score vs threshold, model."""
    name = "max-think" if expl["profile"] == "max_think" else "fast"
    head = f"**deepseek-ls router: {name}**" + (" — *escalation*" if expl["escalation"] else "")
    rows = [
        f"| {signal} | +{value:.2f} |"
        for signal, value in sorted(expl["contributions"].items(), key=lambda kv: -kv[1])
        if value
    ]
    table = ["| signal | contribution |", "|---|---|", *rows] if rows else ["_no signal contributed_"]
    cmp = "≥" if (expl["score"] or 0) >= (expl["threshold"] or 0) else "<"
    return "\n".join(
        [
            head,
            "",
            expl["text"],
            "",
            *table,
            "",
            f"score **{expl['score']:.2f}** {cmp} threshold {expl['threshold']:.2f} · "
            f"profile `{expl['profile']}` · model `{expl['model']}` · unit `{expl.get('unit')}`",
            "",
            "reason codes: " + ", ".join(f"`{c}`" for c in expl["reason_codes"]),
        ]
    )

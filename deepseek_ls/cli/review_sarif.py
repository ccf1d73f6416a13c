"""A review's findings as SARIF 2.1.0, for code-scanning UIs (GitHub, GitLab, Azure DevOps, VS Code's viewer).

Built with `sarif-pydantic` (typed models of the 2.1.0 object model) and checked in the
tests against the official JSON schema. One rule per category (`deepseek-review/bug`, ...),
one result per finding: its level, message, region (lines of the file after the change,
relative to `%SRCROOT%`), `partialFingerprints` (the finding's fingerprint, so a code-scanning
UI tracks it across pushes as the editor does), and its suggested fix as SARIF `fixes` when
every hunk replaces whole lines (the diff itself is kept in `properties.suggestedFix`).
What was not reviewed (skipped files, pieces whose answers were not findings) and what was
dropped are the run's notifications; `executionSuccessful` is false for an incomplete review.
"""

from __future__ import annotations

from typing import Any

from deepseek_ls import __version__

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def to_sarif(review: dict[str, Any]) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of `ReviewResult.to_json()`."""
    from sarif_pydantic.sarif import Invocation, Message, Notification, Run, Sarif, Tool, ToolDriver

    categories = sorted({f["category"] for f in review["findings"]})
    rules = [_rule(c) for c in categories]
    results = [_result(f, categories.index(f["category"])) for f in review["findings"]]
    notes = [Notification(level="note", message=Message(text=f"{s['file']}: {s['reason']}")) for s in review["skipped"]]
    notes += [Notification(level="error", message=Message(text=f"not reviewed: {', '.join(f['files'])}: {f['error']}"))
              for f in review["failed"]]
    dropped = review["dropped"]["count"]
    if dropped:
        notes.append(Notification(level="note", message=Message(
            text=f"{dropped} finding(s) of the model dropped: they named files or lines outside the diff, or repeated one")))
    run = Run(
        tool=Tool(driver=ToolDriver(name="deepseek-ls review", version=__version__, semantic_version=__version__,
                                    rules=rules or None)),
        # (an extra field of the model: spelled as SARIF spells it)
        invocations=[Invocation(execution_successful=bool(review["complete"]), **({"toolExecutionNotifications": [
            n.model_dump(by_alias=True, exclude_none=True, mode="json") for n in notes]} if notes else {}))],
        results=results,
        properties={"source": review["source"], "summary": review.get("summary", ""),
                    "sessionId": review.get("session_id")},
    )
    log = Sarif(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])
    return log.model_dump(by_alias=True, exclude_none=True, mode="json")


def _rule(category: str):
    from sarif_pydantic.sarif import Message, ReportingDescriptor

    return ReportingDescriptor(id=f"deepseek-review/{category}", name=category.title().replace("-", ""),
                               short_description=Message(text=f"deepseek-ls review: {category}"))


def _result(finding: dict[str, Any], rule_index: int):
    from sarif_pydantic.sarif import ArtifactLocation, Location, Message, PhysicalLocation, Region, Result

    location = ArtifactLocation(uri=finding["file"], uri_base_id=SRCROOT)
    region = Region(start_line=finding["start_line"], end_line=finding["end_line"])
    properties: dict[str, Any] = {"category": finding["category"], "id": finding["id"]}
    if finding.get("suggested_fix"):
        properties["suggestedFix"] = finding["suggested_fix"]
    return Result(
        rule_id=f"deepseek-review/{finding['category']}", rule_index=rule_index, level=finding["severity"],
        message=Message(text=finding["message"]),
        locations=[Location(physical_location=PhysicalLocation(artifact_location=location, region=region))],
        partial_fingerprints={"deepseekReview/v1": finding["fingerprint"]},
        fixes=_fixes(finding, location),
        properties=properties,
    )


def _fixes(finding: dict[str, Any], location: Any) -> list[Any] | None:
    """SARIF replacements of whole lines, when every hunk of the fix replaces at least one line."""
    from sarif_pydantic.sarif import ArtifactChange, ArtifactContent, Fix, Message, Region, Replacement

    diff = finding.get("suggested_fix")
    if not diff:
        return None
    from deepseek_ls.patch.model import PatchError
    from deepseek_ls.patch.parse import parse_diff

    try:
        hunks = [h for f in parse_diff(diff) for h in f.hunks]
    except PatchError:
        return None
    if not hunks or any(len(h.old_seq) == 0 for h in hunks):
        return None
    replacements = []
    for h in hunks:
        region = Region(start_line=h.old_start, end_line=h.old_start + len(h.old_seq) - 1)
        inserted = "".join(h.new_seq).rstrip("\n").rstrip("\r")
        replacements.append(Replacement(deleted_region=region, inserted_content=ArtifactContent(text=inserted)))
    change = ArtifactChange(artifact_location=location, replacements=replacements)
    return [Fix(description=Message(text="suggested fix"), artifact_changes=[change])]

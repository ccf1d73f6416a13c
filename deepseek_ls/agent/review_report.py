"""A review's result as text for a person: findings grouped by file, then totals, summary, routing, cost.

What `deepseek-ls review` prints and what an ACP client is told after `/review`.
"""

from __future__ import annotations

from typing import Any


def text_report(review: dict[str, Any]) -> str:
    """Findings grouped by file, then one line of totals (what was dropped, skipped, dismissed),
    the summary, the routing and the cost."""
    out: list[str] = []
    add = out.append
    by_file: dict[str, list[dict[str, Any]]] = {}
    for f in review["findings"]:
        by_file.setdefault(f["file"], []).append(f)
    for file, items in by_file.items():
        add(file)
        for f in sorted(items, key=lambda f: f["start_line"]):
            lines = str(f["start_line"]) if f["start_line"] == f["end_line"] else f"{f['start_line']}-{f['end_line']}"
            add(f"  {lines:<9} {f['severity']:<8} {f['category']:<15} {f['message']}")
            if f.get("suggested_fix"):
                add("            suggested fix:")
                for line in f["suggested_fix"].rstrip("\n").splitlines():
                    add(f"              {line}")
        add("")
    add(_totals(review))
    if review.get("summary"):
        add(f"summary: {review['summary']}")
    for line in review.get("routing", []):
        add(f"routing: {line}")
    if review.get("cost"):
        add(f"cost: {review['cost']['session']['text']}")
    return "".join(line + "\n" for line in out)


def _totals(review: dict[str, Any]) -> str:
    counts = review["counts"]
    n = len(review["findings"])
    parts = [(f"{n} finding{'s' if n != 1 else ''} ({counts['error']} error, {counts['warning']} warning, "
              f"{counts['note']} note) in {len(review['files'])} reviewed file(s)")]
    if review["dropped"]["count"]:
        parts.append(f"{review['dropped']['count']} dropped (outside the diff or repeated)")
    if review["dismissed"]:
        parts.append(f"{review['dismissed']} dismissed earlier")
    for skipped in review["skipped"]:
        parts.append(f"skipped {skipped['file']}: {skipped['reason']}")
    for failed in review["failed"]:
        parts.append(f"not reviewed {', '.join(failed['files'])}: {failed['error']}")
    return "; ".join(parts)

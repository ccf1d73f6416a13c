"""The plan document round trip and where a step's lens goes."""

from __future__ import annotations

from deepseek_ls.lsp.plan_doc import feedback_from_comments, read_comments, render, step_heading_lines, symbol_line

PLAN = {
    "plan_id": "p1",
    "version": 2,
    "goal": "fix add",
    "steps": [
        {"step_id": "s1", "title": "Fix `add`", "files": ["app.py"], "status": "done"},
        {"step_id": "s2", "title": "Update docs", "files": [], "status": "pending"},
    ],
    "verification": ["pytest -q"],
}


def test_rendered_document_locates_each_step_heading() -> None:
    text = render("sess", PLAN)
    lines = text.splitlines()
    headings = step_heading_lines(text)
    assert lines[headings["s1"]].startswith("## Step 1: Fix `add`") and "✓ done" in lines[headings["s1"]]
    assert lines[headings["s2"]].startswith("## Step 2: Update docs")


def test_comments_are_read_per_step_and_survive_a_rewrite() -> None:
    text = render("sess", PLAN)
    lines = text.splitlines()
    at = step_heading_lines(text)["s2"]
    lines.insert(at + 3, "> mention the new CLI flag")
    lines.insert(2, "> keep it short")
    edited = "\n".join(lines)
    comments = read_comments(edited)
    assert comments == {"s2": ["> mention the new CLI flag"], "": ["> keep it short"]}
    assert read_comments(render("sess", PLAN, comments)) == comments
    feedback = feedback_from_comments(PLAN, comments, None)
    assert "On step 2 (Update docs):\nmention the new CLI flag" in feedback and "keep it short" in feedback
    assert "keep it short" in feedback_from_comments(PLAN, comments, "s1")
    assert "CLI flag" not in feedback_from_comments(PLAN, comments, "s1")


def test_symbol_line_finds_the_definition_the_title_names() -> None:
    text = "import add\n\nx = add(1)\n\n\nasync def add(a, b):\n    return a + b\n"
    assert symbol_line(text, "Fix `add`") == 5
    assert symbol_line("class OrderBook:\n    pass\n", "Refactor OrderBook matching") == 0
    assert symbol_line("a = 1\nclass OrderBook:\n", "Refactor `OrderBook`") == 1
    assert symbol_line("a = 1\n", "nothing named here") == 0

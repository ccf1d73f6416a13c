"""deepseek-ls in Emacs with eglot (issue 32), a client we did not write, set up as docs/editors.md says:
each pending hunk is a flymake diagnostic settled from eglot's code action menu (Accept through
`workspace/applyEdit` into the buffer, Reject), a "no" at eglot's own "Server wants to edit … Proceed?"
prompt leaves the buffer and the hunk as they were, and a `deepseek:` comment's action plans, asks
through eglot's prompt and stages a change that is accepted like any other."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.emacs, pytest.mark.slow]

ORIGINAL = "def greet(name):\n    return 'hello ' + name\n\n\ndef add(a, b):\n    return a + b\n"
# What a step leaves staged: two hunks, each with one line of context.
DIFF = """--- a/{name}
+++ b/{name}
@@ -1,2 +1,2 @@
 def greet(name):
-    return 'hello ' + name
+    return f'hello {{name}}'
@@ -5,2 +5,2 @@
 def add(a, b):
-    return a + b
+    return int(a) + int(b)
"""
GREETED = ORIGINAL.replace("'hello ' + name", "f'hello {name}'")
ACCEPT = "Accept DeepSeek change (line 2)"
REJECT = "Reject DeepSeek change (line 6)"


def test_eglot_shows_pending_hunks_and_accepts_one_from_its_code_action_menu(eglot):
    eglot.stage("accept.py", ORIGINAL, DIFF.format(name="accept.py"))
    assert eglot.emacs.ask("open", "accept.py") == "python-mode"
    shown = eglot.emacs.ask("diagnostics", "accept.py", 2)
    assert [d["line"] for d in shown] == [1, 5]
    assert all(d["type"] == "eglot-note" for d in shown)  # Information: a note, not an error
    assert "replaces 1 line with 1 line: return f'hello {name}'" in shown[0]["text"]

    done = eglot.emacs.ask("code-action", "accept.py", 1, ACCEPT, ["y"])
    assert done["failed"] is None
    assert done["offered"][:2] == [ACCEPT, "Reject DeepSeek change (line 2)"]
    assert len(done["prompts"]) == 1 and "Server wants to edit" in done["prompts"][0]  # eglot's applyEdit
    assert done["text"] == GREETED
    left = eglot.emacs.ask("diagnostics", "accept.py", 1)
    assert left[0]["line"] == 5 and "int(a) + int(b)" in left[0]["text"]
    assert (eglot.root / "accept.py").read_text() == ORIGINAL  # in the buffer, not written behind it


def test_eglot_reject_from_the_code_action_menu_drops_the_hunk_and_edits_nothing(eglot):
    eglot.stage("reject.py", ORIGINAL, DIFF.format(name="reject.py"))
    eglot.emacs.ask("open", "reject.py")
    eglot.emacs.ask("diagnostics", "reject.py", 2)
    done = eglot.emacs.ask("code-action", "reject.py", 5, REJECT, [])
    assert done["failed"] is None and done["prompts"] == []  # rejecting sends no edit to confirm
    assert done["text"] == ORIGINAL
    assert [d["line"] for d in eglot.emacs.ask("diagnostics", "reject.py", 1)] == [1]


def test_never_clobber_no_at_eglots_edit_prompt_keeps_the_buffer_and_the_hunk_pending(eglot):
    eglot.stage("refuse.py", ORIGINAL, DIFF.format(name="refuse.py"))
    eglot.emacs.ask("open", "refuse.py")
    eglot.emacs.ask("diagnostics", "refuse.py", 2)
    done = eglot.emacs.ask("code-action", "refuse.py", 1, ACCEPT, ["n"])
    assert len(done["prompts"]) == 1
    assert done["text"] == ORIGINAL
    assert eglot.emacs.ask("modified", "refuse.py") is False
    assert [d["line"] for d in eglot.emacs.ask("diagnostics", "refuse.py", 2)] == [1, 5]  # still pending
    again = eglot.emacs.ask("code-action", "refuse.py", 1, ACCEPT, ["y"])  # and still acceptable
    assert again["text"] == GREETED


def test_eglot_runs_a_deepseek_comment_from_its_code_action_and_the_change_it_stages_is_accepted(eglot):
    """Issue 32 item 3 in eglot: the comment's action plans on the file, the server's "Run DeepSeek's
    plan" question comes as eglot's own prompt (answered "Allow once"), and the step's change shows as a
    pending diagnostic at the comment; accepting it removes the comment in the buffer."""
    text = "def add(a, b):\n    # deepseek: fix the sign\n    return a - b\n"
    diff = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,2 @@\n def add(a, b):\n"
            "-    # deepseek: fix the sign\n-    return a - b\n+    return a + b\n")
    eglot.fake.add({"match": {"role": "planner", "contains": "fix the sign"}, "content": "```json\n" + json.dumps({
        "goal": "fix the sign of add", "steps": [{"title": "Fix add", "intent": "edit", "files": ["calc.py"]}],
        "verification": [], "confidence": 0.9}) + "\n```"})
    eglot.fake.add({"match": {"role": "executor", "contains": "Fix add"}, "content": f"```diff\n{diff}```"})
    (eglot.root / "calc.py").write_text(text)
    eglot.emacs.ask("open", "calc.py")

    done = eglot.emacs.ask("code-action", "calc.py", 1, "DeepSeek: fix the sign", ["Allow once"])
    assert done["offered"] == ["DeepSeek: fix the sign"]
    assert done["text"] == text  # a plan and a pending change, nothing written yet
    shown = eglot.emacs.ask("diagnostics", "calc.py", 1)  # the step's hunk, once staged
    asked = [*done["prompts"], *eglot.emacs.ask("prompts")]
    assert len(asked) == 1 and "Run DeepSeek's plan for: fix the sign" in asked[0]
    assert shown[0]["line"] == 1 and "return a + b" in shown[0]["text"]
    accepted = eglot.emacs.ask("code-action", "calc.py", 1, "Accept DeepSeek change (line 2)", ["y"])
    assert accepted["text"] == "def add(a, b):\n    return a + b\n"
    eglot.emacs.ask("diagnostics", "calc.py", 0)


def test_eglot_completes_at_point_from_the_models_fill_in_the_middle_when_completion_items_are_on(eglot):
    """docs/editors.md: eglot has no inline completion; with `completion_items` on (the fixture's user
    config) `completion-at-point` offers the model's suggestion and inserts it through its textEdit."""
    eglot.fake.add({"match": {"endpoint": "fim", "contains": "total = compu"}, "content": "te_total(items)",
                    "repeat": True})
    (eglot.root / "items.py").write_text("total = compu\n")
    eglot.emacs.ask("open", "items.py")
    assert eglot.emacs.ask("complete", "items.py", 0, len("total = compu")) == "total = compute_total(items)\n"

"""The findings contract read tolerantly (`agent/review_parse.py`), and the change's lines a finding may name
(`agent/review_diff.py`)."""

from __future__ import annotations

import json

import pytest

from deepseek_ls.agent.review import fingerprint
from deepseek_ls.agent.review_diff import ChangeSet
from deepseek_ls.agent.review_parse import FindingsParseError, parse_findings

ONE = {"file": "a.py", "start_line": 3, "end_line": 4, "severity": "error", "category": "bug", "message": "m"}


@pytest.mark.parametrize("text", [
    pytest.param("```json\n" + json.dumps({"findings": [ONE]}) + "\n```", id="fenced"),
    pytest.param("Here you go:\n" + json.dumps({"findings": [ONE], "summary": "s"}) + "\nThanks.", id="in-prose"),
    pytest.param(json.dumps([ONE]), id="bare-list"),
    pytest.param(json.dumps({"findings": [{"path": "a.py", "lines": "3-4", "level": "critical", "type": "correctness",
                                           "description": "m"}]}), id="synonyms"),
    pytest.param(json.dumps({"findings": [{"file": "a.py", "line": 4, "end_line": 3, "severity": "high",
                                           "category": "bug", "message": "m"}]}), id="reversed-range"),
])
def test_findings_are_read_tolerantly(text):
    (f,) = parse_findings(text).findings
    assert (f.file, f.start_line, f.end_line, f.severity, f.category, f.message) == ("a.py", 3, 4, "error", "bug", "m")


def test_severity_synonyms_and_unknown_category():
    answer = parse_findings(json.dumps({"findings": [
        {**ONE, "severity": "medium", "category": "weird"}, {**ONE, "severity": "nit"}]}))
    assert [(f.severity, f.category) for f in answer.findings] == [("warning", "other"), ("note", "bug")]


def test_a_fix_in_a_diff_fence_is_unfenced():
    fix = "```diff\n--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-x\n+y\n```"
    (f,) = parse_findings(json.dumps({"findings": [{**ONE, "suggested_fix": fix}]})).findings
    assert f.suggested_fix == "--- a/a.py\n+++ b/a.py\n@@ -3 +3 @@\n-x\n+y\n"


def test_no_findings_is_an_empty_list():
    assert parse_findings('{"findings": []}').findings == []


@pytest.mark.parametrize("text, why", [
    pytest.param("", "empty", id="empty"),
    pytest.param("LGTM!", "could not read the findings", id="prose"),
    pytest.param('{"summary": "fine"}', "no 'findings' list", id="no-list"),
    pytest.param('{"findings": {"a": 1}}', "must be a list", id="not-a-list"),
    pytest.param(json.dumps({"findings": [{**ONE, "severity": "urgent-ish"}]}), "severity", id="bad-severity"),
    pytest.param(json.dumps({"findings": [{k: v for k, v in ONE.items() if k != "message"}]}), "no 'message'",
                 id="no-message"),
    pytest.param(json.dumps({"findings": [{**ONE, "start_line": "here"}]}), "not a line number", id="bad-line"),
    pytest.param(json.dumps({"findings": [{**ONE, "start_line": 0}]}), "start at 1", id="line-zero"),
    pytest.param(json.dumps({"findings": ["a.py:3 is wrong"]}), "must be an object", id="string-item"),
])
def test_what_is_not_findings_says_why(text, why):
    with pytest.raises(FindingsParseError, match=why):
        parse_findings(text)


DIFF = """diff --git a/a.py b/a.py
--- a/a.py
+++ b/a.py
@@ -10,3 +10,4 @@ def f():
     keep = 1
-    old = 2
+    new = 2
+    more = 3
     tail = 4
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x = 1
-y = 2
"""


def test_lines_a_finding_may_name():
    changes = ChangeSet.from_diff(DIFF, allowed=lambda path: None)
    a, gone = changes.files
    assert a.lines() == {10: "    keep = 1", 11: "    new = 2", 12: "    more = 3", 13: "    tail = 4"}
    assert a.covers(12, 12) and a.covers(9, 10) and not a.covers(14, 20) and not a.covers(1, 9)
    assert (gone.status, gone.side, gone.lines()) == ("deleted", "old", {1: "x = 1", 2: "y = 2"})
    assert changes.changed_lines == 5


def test_the_fingerprint_follows_the_code_not_its_position():
    same = fingerprint("a.py", ["    new  = 2"], "Wrong value.")
    assert same == fingerprint("a.py", ["new = 2"], "wrong   value.")
    assert same != fingerprint("a.py", ["new = 3"], "Wrong value.")
    assert same != fingerprint("b.py", ["new = 2"], "Wrong value.")

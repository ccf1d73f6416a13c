"""Review scenarios: the real agent against the fake DeepSeek server, on a real git repository.

Each session made here is replayed by the `make_agent` fixture afterwards (no model, nothing
re-run), so every review below is also a replay test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deepseek_ls.agent.review_input import ReviewInputError, ReviewSource
from scenario_kit import APP_CHANGED, git, kinds, scenario_config, states

FIXED_ADD = APP_CHANGED



@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    (workspace / "app.py").write_text(FIXED_ADD)
    return workspace


def findings(*items: dict, summary: str = "a small change") -> str:
    return "```json\n" + json.dumps({"findings": list(items), "summary": summary}) + "\n```"


ON_ADD = {"file": "app.py", "start_line": 6, "end_line": 6, "severity": "warning", "category": "bug",
          "message": "`- 0` does nothing; remove it.",
          "suggested_fix": "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a + b - 0\n+    return a + b\n"}


async def test_review_of_the_working_tree_reports_findings_on_the_changed_lines(repo, make_agent, fake_deepseek):
    outside = {"file": "util.py", "start_line": 1, "severity": "error", "message": "not in the diff"}
    far = {"file": "app.py", "line": 40, "severity": "note", "message": "line 40 is not in the diff"}
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings(ON_ADD, outside, far)})
    agent = make_agent()
    result = await agent.review(ReviewSource())
    assert [f["file"] for f in result.findings] == ["app.py"]
    (kept,) = result.findings
    assert (kept["start_line"], kept["severity"], kept["category"]) == (6, "warning", "bug")
    assert kept["suggested_fix"].startswith("--- a/app.py")
    assert sorted(d["reason"] for d in result.dropped) == ["outside_diff", "outside_diff"]
    assert result.complete and result.session_id
    log = kinds(agent, result.session_id)
    assert "ReviewStarted@v1" in log and "ReviewFindings@v1" in log and "RouterDecision@v1" in log
    assert "LLMCall@v1" in log
    assert states(agent, result.session_id) == ["Completed"]
    (request,) = [r for r in fake_deepseek.requests if r.role == "reviewer"]
    sent = "\n".join(m["content"] for m in request.body["messages"])
    assert "     6 +     return a + b - 0" in sent  # numbered as the file after the change
    assert request.body.get("tools") is None  # a review is offered no tools


async def test_a_bad_base_is_refused_before_any_session(repo, make_agent):
    agent = make_agent()
    with pytest.raises(ReviewInputError, match="no such revision: 'mian'"):
        await agent.review(ReviewSource(kind="base", base="mian"))
    assert agent.store.list() == []


async def test_the_reviewer_gets_the_projects_instructions_index_hits_and_surrounding_code(workspace, make_agent,
                                                                                             fake_deepseek):
    """The context the issue names: AGENTS.md, where the touched symbols are used elsewhere, and the
    unchanged lines around the change."""
    (workspace / "AGENTS.md").write_text("Money is integer cents (RULE-CENTS-7).\n")
    head = "# CONTEXT-EIGHT-ABOVE\n" + "".join(f"RATE_{i} = {i}\n" for i in range(7))  # out of git's -U3
    (workspace / "billing.py").write_text(head + "def invoice_total(items):\n    return sum(items)\n")
    (workspace / "report.py").write_text("from billing import invoice_total\n\n\n"
                                         "def monthly_report(items):\n    return invoice_total(items)\n")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    (workspace / "billing.py").write_text(head + "def invoice_total(items):\n    return round(sum(items) * 1.2, 2)\n")
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings()})
    from deepseek_ls.index import CodeIndex
    from deepseek_ls.workspace import state_dir

    cfg = scenario_config()
    cfg.index.enabled = True
    index = CodeIndex(workspace, state_dir(workspace), cfg.index)
    index.build()
    result = await make_agent(config=cfg, index=index).review(ReviewSource())
    assert result.complete and [f["file"] for f in result.files] == ["billing.py"]
    (request,) = [r for r in fake_deepseek.requests if r.role == "reviewer"]
    system, *users = request.body["messages"]
    assert system["role"] == "system" and "RULE-CENTS-7" in system["content"]
    sent = "\n".join(m["content"] for m in users)
    hits = next(m["content"] for m in users if "(index hits)" in m["content"])
    assert "report.py" in hits  # `items`, a symbol the changed line uses, elsewhere in the project
    assert "CONTEXT-EIGHT-ABOVE" in sent  # review.context_lines (10) of unchanged code around the change


BINARY_IN_PATCH = {
    "differ": "diff --git a/logo.png b/logo.png\nindex 1..2 100644\nBinary files a/logo.png and b/logo.png differ\n",
    "git-binary-patch": ("diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1234567\n"
                         "GIT binary patch\nliteral 5\nMcmZ?wbhEHb\n\nliteral 0\nHcmV?d00001\n\n"),
}


@pytest.mark.parametrize("form", sorted(BINARY_IN_PATCH))
async def test_a_binary_file_in_a_patch_is_named_and_not_sent(repo, make_agent, fake_deepseek, form):
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings()})
    text = "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a - b\n+    return a + b - 0\n"
    result = await make_agent().review(ReviewSource(kind="diff"), patch=BINARY_IN_PATCH[form] + text)
    assert [f["file"] for f in result.files] == ["app.py"]
    assert {"file": "logo.png", "reason": "binary file: not reviewed"} in result.skipped
    assert "logo.png" not in reviewed_text(fake_deepseek)
    only = await make_agent().review(ReviewSource(kind="diff"), patch=BINARY_IN_PATCH[form])
    assert only.session_id is None and only.note.startswith("nothing to review")


async def test_a_50000_line_patch_is_refused_before_any_session(repo, make_agent):
    big = "--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,50000 @@\n" + "".join(f"+line {i}\n" for i in range(50_000))
    agent = make_agent()
    with pytest.raises(ReviewInputError, match="50,000 changed lines, more than review.max_changed_lines"):
        await agent.review(ReviewSource(kind="diff"), patch=big)
    assert agent.store.list() == []


def reviewed_text(fake_deepseek) -> str:
    (request,) = [r for r in fake_deepseek.requests if r.role == "reviewer"]
    return request.body["messages"][-1]["content"]


@pytest.mark.parametrize("how", ["staged", "diff", "paths", "untracked"])
async def test_each_source_reviews_its_own_change(repo, make_agent, fake_deepseek, how):
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings()})
    (repo / "util.py").write_text("def double(x):\n    return x + x\n")
    patch = None
    if how == "staged":
        git(repo, "add", "util.py")
        source = ReviewSource(kind="staged")
    elif how == "diff":
        patch = git(repo, "diff", "--", "util.py")
        git(repo, "checkout", "--", "util.py", "app.py")
        source = ReviewSource(kind="diff", diff_name="change.patch")
    elif how == "paths":
        source = ReviewSource(paths=["util.py"])
    else:
        git(repo, "checkout", "--", "util.py", "app.py")
        (repo / "pkg").mkdir()
        (repo / "pkg" / "new.py").write_text("def brand_new():\n    return x + x\n")
        source = ReviewSource()
    result = await make_agent().review(source, patch=patch)
    want = ["pkg/new.py"] if how == "untracked" else ["util.py"]
    assert [f["file"] for f in result.files] == want
    sent = reviewed_text(fake_deepseek)
    assert "return x + x" in sent and "return a + b - 0" not in sent
    if how == "untracked":
        assert "File: pkg/new.py [added]" in sent and "     1 + def brand_new():" in sent


async def test_a_large_change_is_reviewed_file_by_file_and_a_large_diff_goes_to_max_think(repo, make_agent,
                                                                                          fake_deepseek):
    (repo / "big.py").write_text("".join(f"value_{i} = {i}\n" for i in range(900)))
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings(ON_ADD), "repeat": True})
    cfg = scenario_config()
    cfg.review.chunk_tokens = 4000
    agent = make_agent(config=cfg)
    result = await agent.review(ReviewSource())
    asked = [r for r in fake_deepseek.requests if r.role == "reviewer"]
    assert len(asked) >= 3  # app.py alone; big.py over several calls (its hunks split)
    texts = [r.body["messages"][-1]["content"] for r in asked]
    assert any("File: app.py" in t and "big.py" not in t for t in texts)
    assert any("part 1 of" in t and "big.py" in t for t in texts)
    decisions = [e.payload for e in agent.store.open(result.session_id).read() if e.kind == "RouterDecision@v1"]
    by_unit = {d["unit"]: d for d in decisions}
    assert all(d["role"] == "reviewer" for d in decisions)
    small = next(d for d in decisions if d["signals"]["diff_lines"] < 10)
    assert small["profile"] == "fast"
    assert any(d["profile"] == "max_think" and "LARGE_DIFF" in d["reason_codes"] for d in by_unit.values())
    assert [f["file"] for f in result.findings] == ["app.py"]  # the same answer for big.py names app.py: dropped
    assert {d["reason"] for d in result.dropped} == {"outside_chunk"}


async def test_a_risky_change_goes_to_max_think(repo, make_agent, fake_deepseek):
    (repo / "auth.py").write_text("import subprocess\n\ndef login(password):\n"
                                  "    return subprocess.run(password, shell=True)\n")
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings()})
    agent = make_agent()
    result = await agent.review(ReviewSource(paths=["auth.py"]))
    (decision,) = [e.payload for e in agent.store.open(result.session_id).read() if e.kind == "RouterDecision@v1"]
    assert decision["profile"] == "max_think"
    assert "RISKY_CHANGE" in decision["reason_codes"]
    assert decision["signals"]["risk_areas"] == ["execution", "security"]
    assert "touches execution, security" in result.routing[0]


async def test_a_dismissed_finding_stays_dismissed_while_its_code_is_unchanged(repo, make_agent, fake_deepseek):
    from deepseek_ls.agent.review_dismiss import DismissedFindings

    moved = {**ON_ADD, "start_line": 7, "end_line": 7}  # the same finding, on the code where it moved
    for answer in (ON_ADD, moved, ON_ADD):
        fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings(answer)})
    agent = make_agent()
    first = await agent.review(ReviewSource())
    (finding,) = first.findings
    store = DismissedFindings(agent.state_dir, repo)
    assert store.dismiss(finding["fingerprint"], file="app.py", message=finding["message"])
    (repo / "app.py").write_text("# a comment moves the code down\n" + FIXED_ADD)
    second = await agent.review(ReviewSource(), dismissed=store.fingerprints())
    assert second.findings == [] and len(second.dismissed) == 1
    (repo / "app.py").write_text(FIXED_ADD.replace("a + b - 0", "a + b - 1"))
    third = await agent.review(ReviewSource(), dismissed=store.fingerprints())
    assert [f["start_line"] for f in third.findings] == [6]  # the code changed: shown again


def test_a_dismissal_list_the_repository_ships_is_ignored(repo):
    from deepseek_ls.agent.review_dismiss import DismissedFindings

    planted = repo / ".deepseek" / "review" / "dismissed.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"kind": "review-dismissed", "version": 1, "dismissed": [{"fingerprint": "x" * 32}]}))
    assert DismissedFindings(repo / ".deepseek", repo).fingerprints() == frozenset()


async def test_apply_fix_and_dismiss_are_recorded_and_replayed(repo, make_agent, fake_deepseek):
    fake_deepseek.add({"match": {"role": "reviewer"}, "content": findings(ON_ADD)})
    agent = make_agent()
    result = await agent.review(ReviewSource())
    (finding,) = result.findings
    patch = await agent.stage_review_fix(result.session_id, finding["fingerprint"])
    assert patch.files == ["app.py"] and (repo / "app.py").read_text() == FIXED_ADD  # staged, not written
    assert await agent.dismiss_finding(result.session_id, finding["fingerprint"]) is True
    log = kinds(agent, result.session_id)
    assert log[-1] == "ReviewFindingDismissed@v1" and "PatchStaged@v1" in log
    with pytest.raises(LookupError, match="no finding"):
        await agent.stage_review_fix(result.session_id, "0" * 32)
    assert states(agent, result.session_id) == ["Completed"]  # a wrong finding does not fail the session

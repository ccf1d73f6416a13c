"""`deepseek-ls review` as a person and CI run it: the real CLI process, a real git repository, the
fake DeepSeek server over HTTP. Output in text, JSON and SARIF (validated against the official
SARIF 2.1.0 schema shipped as a fixture), exit status by `--fail-on`, and every bad input with
its message and exit status."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from scenario_kit import APP_CHANGED, git

SCHEMA = Path(__file__).parents[1] / "fixtures" / "sarif" / "sarif-2.1.0-rtm.5.json"
NEW_APP = APP_CHANGED
WARN = {"file": "app.py", "start_line": 6, "end_line": 6, "severity": "warning", "category": "bug",
        "message": "`- 0` does nothing; remove it.",
        "suggested_fix": "--- a/app.py\n+++ b/app.py\n@@ -6 +6 @@\n-    return a + b - 0\n+    return a + b\n"}
NOTE = {"file": "app.py", "lines": "9-10", "severity": "low", "category": "tests", "message": "mul has no test."}


def findings(*items: dict) -> str:
    return "```json\n" + json.dumps({"findings": list(items), "summary": "small"}) + "\n```"



def review(workspace: Path, url: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEEPSEEK_BASE_URL": url, "DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_LS_LLM__MAX_RETRIES": "0"}
    return subprocess.run([sys.executable, "-m", "deepseek_ls", "review", *args], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120, input=stdin)


@pytest.fixture
def repo(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "base")
    (workspace / "app.py").write_text(NEW_APP)
    return workspace


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft4Validator(schema)


def reviewer_requests(fake) -> list[dict]:
    return [r for r in fake.requests() if r["headers"].get("x-deepseek-ls-role") == "reviewer"]


def test_review_prints_findings_by_file_and_exits_by_fail_on(repo, fake_deepseek_process):
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": findings(WARN, NOTE), "repeat": True}])
    done = review(repo, fake.base_url)
    assert done.returncode == 0, done.stderr  # a warning is below the default --fail-on error
    out = done.stdout
    assert out.startswith("app.py\n")
    assert "  6         warning  bug             `- 0` does nothing; remove it." in out
    assert "  9-10      note     tests           mul has no test." in out
    assert "+    return a + b" in out  # the suggested fix is shown, never applied
    assert "2 findings (0 error, 1 warning, 1 note) in 1 reviewed file(s)" in out
    assert "cost:" in out and "routing: fast" in out
    assert (repo / "app.py").read_text() == NEW_APP
    assert review(repo, fake.base_url, "--fail-on", "warning").returncode == 1
    assert review(repo, fake.base_url, "--fail-on", "note").returncode == 1


def test_review_json_and_sarif_validated_against_the_official_schema(repo, fake_deepseek_process, sarif_validator):
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (repo / "util.py").write_text("def double(x):\n    return x * 3\n")
    outside = {"file": "README.md", "start_line": 1, "severity": "error", "message": "not in the change"}
    on_util = {"file": "util.py", "start_line": 2, "severity": "error", "category": "bug", "message": "triples"}
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": findings(WARN, on_util, outside),
                                   "repeat": True}])
    as_json = review(repo, fake.base_url, "--json")
    assert as_json.returncode == 1, as_json.stderr  # an error finding, --fail-on error
    assert as_json.stdout, as_json.stderr
    data = json.loads(as_json.stdout)
    assert [f["file"] for f in data["findings"]] == ["app.py", "util.py"]
    assert data["dropped"]["by_reason"] == {"outside_diff": 1}
    assert {"file": "logo.png", "reason": "binary file: not reviewed"} in data["skipped"]
    assert data["complete"] is True and data["session_id"]
    as_sarif = review(repo, fake.base_url, "--sarif")
    assert as_sarif.returncode == 1
    log = json.loads(as_sarif.stdout)
    errors = sorted(sarif_validator.iter_errors(log), key=str)
    assert not errors, [e.message for e in errors[:5]]
    (run,) = log["runs"]
    results = run["results"]
    assert [(r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("warning", "app.py"), ("error", "util.py")]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 6, "endLine": 6}
    assert results[0]["partialFingerprints"]["deepseekReview/v1"] == data["findings"][0]["fingerprint"]
    replaced = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replaced == {"deletedRegion": {"startLine": 6, "endLine": 6}, "insertedContent": {"text": "    return a + b"}}
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert "logo.png: binary file: not reviewed" in notes
    assert run["invocations"][0]["executionSuccessful"] is True


def test_a_sarif_document_that_breaks_the_schema_is_caught(sarif_validator):
    """The validator is not vacuous: a result without a message fails."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"level": "error"}]}]}
    assert list(sarif_validator.iter_errors(bad))


@pytest.mark.parametrize("how", ["base", "diff-stdin"])
def test_each_source_reviews_its_own_change(repo, fake_deepseek_process, tmp_path, how):
    """The flags reach the core (every source is also reviewed in-process: test_review_scenarios.py)."""
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": findings(), "repeat": True}])
    (repo / "util.py").write_text("def double(x):\n    return x + x\n")
    args: list[str] = []
    stdin = None
    if how == "base":
        git(repo, "checkout", "-q", "-b", "topic")
        git(repo, "commit", "-qam", "topic change")
        (repo / "util.py").write_text("uncommitted = True\n")  # not part of the branch's change
        args = ["--base", "main"]
    else:
        patch = git(repo, "diff", "--", "util.py")
        git(repo, "checkout", "--", "util.py", "app.py")
        args, stdin = ["--diff", "-"], patch
    done = review(repo, fake.base_url, "--json", *args, stdin=stdin)
    assert done.returncode == 0, done.stderr
    reviewed = [f["file"] for f in json.loads(done.stdout)["files"]]
    want = ["app.py", "util.py"] if how == "base" else ["util.py"]
    assert reviewed == want
    (request,) = reviewer_requests(fake)
    sent = request["body"]["messages"][-1]["content"]
    assert "return x + x" in sent and "uncommitted" not in sent


def test_no_leak_review_never_sends_a_secret_file(repo, fake_deepseek_process):
    (repo / ".env").write_text("API_TOKEN=sk-live-0123456789abcdef0123456789\n")
    (repo / "deploy.txt").write_text("machine api.example.com login me password hunter2-very-secret\n")
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": findings(), "repeat": True}])
    done = review(repo, fake.base_url, "--json")
    assert done.returncode == 0, done.stderr
    body = json.dumps(reviewer_requests(fake))
    assert "sk-live-0123456789abcdef" not in body and "hunter2-very-secret" not in body
    skipped = {s["file"] for s in json.loads(done.stdout)["skipped"]}
    assert {".env", "deploy.txt"} <= skipped


# -- bad input: each with a clear message and exit status ---------------------------------------


def test_bad_base_ref_exits_2_naming_it(repo, fake_deepseek_process):
    fake = fake_deepseek_process([])
    done = review(repo, fake.base_url, "--base", "mian")
    assert done.returncode == 2
    assert "no such revision: 'mian'" in done.stderr and "fetch-depth" in done.stderr
    assert fake.requests() == [] and not (repo / ".deepseek" / "sessions").exists() or not any(
        (repo / ".deepseek" / "sessions").iterdir())


def test_empty_diff_says_nothing_to_review_and_exits_0(repo, fake_deepseek_process):
    git(repo, "checkout", "--", "app.py")
    fake = fake_deepseek_process([])
    done = review(repo, fake.base_url)
    assert done.returncode == 0
    assert "nothing to review: the working tree's changes against HEAD has no text changes" in done.stderr
    empty = review(repo, fake.base_url, "--diff", "-", stdin="")
    assert empty.returncode == 0 and "nothing to review" in empty.stderr
    assert fake.requests() == []


def test_binary_only_change_is_named_and_not_sent(repo, fake_deepseek_process):
    git(repo, "checkout", "--", "app.py")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    fake = fake_deepseek_process([])
    done = review(repo, fake.base_url)
    assert done.returncode == 0
    assert "nothing to review" in done.stderr
    assert "skipped logo.png: binary file: not reviewed" in done.stdout
    assert fake.requests() == []


def test_a_50000_line_diff_is_refused_with_exit_2(repo, fake_deepseek_process):
    git(repo, "checkout", "--", "app.py")
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(50_000)))
    fake = fake_deepseek_process([])
    done = review(repo, fake.base_url)
    assert done.returncode == 2
    assert "the change has 50,000 changed lines, more than review.max_changed_lines (10,000)" in done.stderr
    assert "review it in parts" in done.stderr
    assert fake.requests() == []


@pytest.mark.parametrize("text, why", [
    pytest.param("hello, this is not a patch\n", "not a unified diff", id="prose"),
    pytest.param("@@ -1,2 +1,2 @@\n-a\n+b\n c\n", "not a unified diff", id="hunk-without-file-headers"),
])
def test_a_patch_that_is_not_a_diff_exits_2(repo, fake_deepseek_process, text, why):
    fake = fake_deepseek_process([])
    done = review(repo, fake.base_url, "--diff", "-", stdin=text)
    assert done.returncode == 2
    assert why in done.stderr


def test_a_missing_patch_file_and_a_binary_patch_file_exit_2(repo, fake_deepseek_process, tmp_path):
    fake = fake_deepseek_process([])
    missing = review(repo, fake.base_url, "--diff", str(tmp_path / "nope.patch"))
    assert missing.returncode == 2 and "No such file" in missing.stderr
    (tmp_path / "bin.patch").write_bytes(b"\xff\xfe\0binary")
    binary = review(repo, fake.base_url, "--diff", str(tmp_path / "bin.patch"))
    assert binary.returncode == 2 and "not UTF-8 text" in binary.stderr


def test_not_a_git_repository_exits_2_and_points_at_diff(tmp_path, fake_deepseek_process):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("x = 1\n")
    fake = fake_deepseek_process([])
    done = review(plain, fake.base_url)
    assert done.returncode == 2
    assert "not the top of a git repository" in done.stderr and "--diff" in done.stderr


def test_an_answer_that_is_not_findings_is_reasked_escalated_then_exits_11(repo, fake_deepseek_process):
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": "Looks good to me!", "repeat": True}])
    done = review(repo, fake.base_url)
    assert done.returncode == 11
    assert "review incomplete: app.py: the model's answer was not findings, after a re-ask and on max-think" \
        in done.stderr
    asked = reviewer_requests(fake)
    assert [r["body"]["model"] for r in asked] == ["deepseek-v4-flash", "deepseek-v4-flash", "deepseek-v4-pro"]
    assert "could not be read as findings" in asked[1]["body"]["messages"][-1]["content"]


# -- docs/review.md's CI example, as a pull request's runner checks it out ----------------------


def test_the_ci_example_reviews_a_pull_requests_diff_into_valid_sarif(repo, fake_deepseek_process, sarif_validator):
    """The `run:` line of docs/review.md's workflow, run as written (with `github.base_ref` = main) in
    a checkout like actions/checkout's of a pull request: HEAD the PR's merge commit, the base branch
    only as origin/main, which moved on after the branch was made (its change is not the PR's)."""
    docs = (Path(__file__).parents[2] / "docs" / "review.md").read_text()
    workflow = docs.split("# .github/workflows/review.yml", 1)[1].split("```", 1)[0]
    (command,) = re.findall(r"^\s+run: (deepseek-ls review .*)$", workflow, re.MULTILINE)
    assert "fetch-depth: 0" in workflow and "if: always()" in workflow
    (sarif_name,) = re.findall(r"sarif_file: ([\w.]+)", workflow)
    assert command.endswith(f"> {sarif_name}")
    git(repo, "checkout", "-q", "-b", "feature")
    git(repo, "commit", "-qam", "the pull request's change")
    git(repo, "checkout", "-q", "main")
    (repo / "util.py").write_text("def double(x):\n    return x * 4  # MAIN-MOVED-ON\n")
    git(repo, "commit", "-qam", "main moves on")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    git(repo, "checkout", "-q", "--detach", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge feature into main")  # refs/pull/N/merge
    git(repo, "branch", "-q", "-D", "main")
    error = {**WARN, "severity": "error"}
    fake = fake_deepseek_process([{"match": {"role": "reviewer"}, "content": findings(error)}])
    shell = command.replace("${{ github.base_ref }}", "main").replace(
        "deepseek-ls review", f"{shlex.quote(sys.executable)} -m deepseek_ls review", 1)
    env = {**os.environ, "DEEPSEEK_BASE_URL": fake.base_url, "DEEPSEEK_API_KEY": "test-key",
           "DEEPSEEK_LS_LLM__MAX_RETRIES": "0"}
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=repo, env=env, capture_output=True, check=False,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # an error finding fails the job (--fail-on error)
    log = json.loads((repo / sarif_name).read_text())
    assert not list(sarif_validator.iter_errors(log))
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "app.py"
    (asked,) = reviewer_requests(fake)
    sent = json.dumps(asked["body"]["messages"])
    assert "return a + b - 0" in sent and "MAIN-MOVED-ON" not in sent  # the PR's change, not main's

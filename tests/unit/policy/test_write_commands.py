"""Never write unreviewed: a command that rewrites files in place (a formatter in write mode, a
linter's fix mode) is recognised and asked for as an edit; its check form runs unprompted.

Each command is allowlisted whole here, so its shape review finds nothing: only the write
recognition stands between it and an unprompted run (as with `policy.allowlist = ["ruff format"]`).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from deepseek_ls.config_models import PolicyConfig
from deepseek_ls.policy.approvals import Approvals
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.policy.write_commands import check_form
from deepseek_ls.sink import ListSink
from deepseek_ls.ui_port import ApprovalRequest, AutoApproveUI

# package.json scripts for the `npm run` cases.
SCRIPTS = {
    "format": "prettier --write .",
    "format:check": "prettier --check .",
    "lint": "eslint .",
    "lint:fix": "tsc --noEmit && eslint --fix .",
    "fix-style": "NODE_ENV=dev stylelint --fix '**/*.css'",
    "test": "jest",
    "tidy": "npm run format",
}

WRITES = [
    pytest.param("ruff check --fix", id="ruff-fix"),
    pytest.param("ruff check --fix-only", id="ruff-fix-only"),
    pytest.param("ruff check --select F401 --fix-only src", id="ruff-fix-only-with-options"),
    pytest.param("ruff check --no-fix --fix", id="ruff-no-fix-then-fix"),
    pytest.param("ruff format", id="ruff-format"),
    pytest.param("ruff format src tests", id="ruff-format-paths"),
    pytest.param("python -m ruff format", id="python-m-ruff-format"),
    pytest.param("uvx ruff format", id="uvx-ruff-format"),
    pytest.param("uv run ruff check --fix", id="uv-run-ruff-fix"),
    pytest.param("black .", id="black"),
    pytest.param("python3 -m black src", id="python-m-black"),
    pytest.param("poetry run black .", id="poetry-run-black"),
    pytest.param("isort .", id="isort"),
    pytest.param("autopep8 -i app.py", id="autopep8-i"),
    pytest.param("autopep8 --in-place --recursive src", id="autopep8-in-place"),
    pytest.param("yapf -i app.py", id="yapf-i"),
    pytest.param("prettier --write .", id="prettier-write"),
    pytest.param("prettier -w src", id="prettier-w"),
    pytest.param("npx prettier --write .", id="npx-prettier"),
    pytest.param("eslint --fix src", id="eslint-fix"),
    pytest.param("npx eslint . --fix", id="npx-eslint-fix-last"),
    pytest.param("biome check --write .", id="biome-write"),
    pytest.param("gofmt -w .", id="gofmt-w"),
    pytest.param("gofmt -l -w .", id="gofmt-l-w"),
    pytest.param("gofmt -lw .", id="gofmt-clustered"),
    pytest.param("goimports -w .", id="goimports-w"),
    pytest.param("go fmt ./...", id="go-fmt"),
    pytest.param("go mod tidy", id="go-mod-tidy"),
    pytest.param("cargo fmt", id="cargo-fmt"),
    pytest.param("cargo fmt --all", id="cargo-fmt-all"),
    pytest.param("cargo +nightly fmt", id="cargo-toolchain-fmt"),
    pytest.param("cargo clippy --fix", id="cargo-clippy-fix"),
    pytest.param("cargo fix", id="cargo-fix"),
    pytest.param("rustfmt src/main.rs", id="rustfmt"),
    pytest.param("clang-format -i a.c", id="clang-format-i"),
    pytest.param("sed -i s/a/b/ app.py", id="sed-i"),
    pytest.param("sed -i.bak s/a/b/ app.py", id="sed-i-suffix"),
    pytest.param("sed --in-place=.bak s/a/b/ app.py", id="sed-in-place"),
    pytest.param("sed -ni p app.py", id="sed-clustered"),
    pytest.param("perl -pi -e s/a/b/ app.py", id="perl-pi"),
    pytest.param("dotnet format", id="dotnet-format"),
    pytest.param("terraform fmt", id="terraform-fmt"),
    pytest.param("rubocop -a", id="rubocop-a"),
    pytest.param("rubocop --autocorrect-all", id="rubocop-autocorrect"),
    pytest.param("shfmt -w .", id="shfmt-w"),
    pytest.param("stylua .", id="stylua"),
    pytest.param("deno fmt", id="deno-fmt"),
    pytest.param("mix format", id="mix-format"),
    pytest.param("pre-commit run --all-files", id="pre-commit-run"),
    pytest.param("npm run format", id="npm-run-script-that-writes"),
    pytest.param("npm run lint:fix", id="npm-run-chained-script"),
    pytest.param("npm run fix-style", id="npm-run-env-prefixed-script"),
    pytest.param("npm run lint -- --fix", id="npm-run-extra-arguments"),
    pytest.param("npm run tidy", id="npm-run-script-running-a-script"),
    pytest.param("pnpm run format", id="pnpm-run"),
    pytest.param("yarn format", id="yarn-script"),
    pytest.param("yarn prettier:write", id="yarn-unknown-script-named-write"),
]

CHECKS = [
    pytest.param("ruff check", id="ruff-check"),
    pytest.param("ruff check src", id="ruff-check-paths"),
    pytest.param("ruff check --diff", id="ruff-check-diff"),
    pytest.param("ruff check --fix --diff", id="ruff-fix-diff"),
    pytest.param("ruff check --fix --no-fix", id="ruff-fix-then-no-fix"),
    pytest.param("ruff format --check", id="ruff-format-check"),
    pytest.param("ruff format --diff src", id="ruff-format-diff"),
    pytest.param("black --check .", id="black-check"),
    pytest.param("black --diff .", id="black-diff"),
    pytest.param("black --version", id="black-version"),
    pytest.param("isort --check-only .", id="isort-check-only"),
    pytest.param("isort --diff .", id="isort-diff"),
    pytest.param("autopep8 --diff app.py", id="autopep8-diff"),
    pytest.param("yapf --diff app.py", id="yapf-diff"),
    pytest.param("prettier --check .", id="prettier-check"),
    pytest.param("prettier -l .", id="prettier-list-different"),
    pytest.param("eslint src", id="eslint"),
    pytest.param("eslint --fix-dry-run src", id="eslint-fix-dry-run"),
    pytest.param("gofmt -l .", id="gofmt-l"),
    pytest.param("gofmt -d .", id="gofmt-d"),
    pytest.param("go vet ./...", id="go-vet"),
    pytest.param("go test ./...", id="go-test"),
    pytest.param("go mod tidy -diff", id="go-mod-tidy-diff"),
    pytest.param("cargo fmt --check", id="cargo-fmt-check"),
    pytest.param("cargo fmt --all -- --check", id="cargo-fmt-passthrough-check"),
    pytest.param("cargo clippy", id="cargo-clippy"),
    pytest.param("cargo test", id="cargo-test"),
    pytest.param("rustfmt --check src/main.rs", id="rustfmt-check"),
    pytest.param("clang-format --dry-run a.c", id="clang-format-dry-run"),
    pytest.param("sed -n p app.py", id="sed-n"),
    pytest.param("dotnet format --verify-no-changes", id="dotnet-format-verify"),
    pytest.param("terraform fmt -check", id="terraform-fmt-check"),
    pytest.param("terraform fmt -write=false", id="terraform-fmt-no-write"),
    pytest.param("rubocop", id="rubocop"),
    pytest.param("shfmt -d .", id="shfmt-d"),
    pytest.param("stylua --check .", id="stylua-check"),
    pytest.param("deno fmt --check", id="deno-fmt-check"),
    pytest.param("mix format --check-formatted", id="mix-format-check"),
    pytest.param("npm run lint", id="npm-run-script-that-checks"),
    pytest.param("npm run format:check", id="npm-run-check-script"),
    pytest.param("npm test", id="npm-test"),
    pytest.param("python -m pytest -q", id="pytest"),
    pytest.param("mypy --strict src", id="mypy"),
]


def checked(root: Path, command: str):
    (root / "package.json").write_text(json.dumps({"scripts": SCRIPTS}))
    policy = CommandPolicy(PolicyConfig(allowlist=[command]), root)  # allowlisted whole: a clean shape
    result = policy.inspect(command)
    assert result.review == (), result.review
    return result


async def verification_asks(command: str, root: Path, config: PolicyConfig | None = None) -> tuple[bool, bool]:
    """(asked, allowed) for the verification command `command`, as `World.run_command` decides:
    a clean shape runs unprompted unless it writes files, which is decided like an edit."""
    result = checked(root, command)
    if not result.writes:
        return False, True
    sink = ListSink()
    request = ApprovalRequest(request_id="r", kind="bash.run", title=f"Verify: {command}", command=command)
    approvals = Approvals(config or PolicyConfig(), AutoApproveUI("deny"), sink=sink)  # the person says no
    decision, _ = await approvals.decide(request, changes_files=True)
    return "ApprovalRequested@v1" in sink.kinds(), decision.allowed


@pytest.mark.parametrize("command", WRITES)
async def test_never_write_unreviewed_a_command_that_writes_is_asked(tmp_path: Path, command: str) -> None:
    result = checked(tmp_path, command)
    assert result.writes and ("rewrites files" in result.writes[0] or "fix files" in result.writes[0]), result.writes
    assert await verification_asks(command, tmp_path) == (True, False)  # asked; "no" stops it


@pytest.mark.parametrize("command", CHECKS)
async def test_the_check_form_runs_unprompted(tmp_path: Path, command: str) -> None:
    assert checked(tmp_path, command).writes == ()
    assert await verification_asks(command, tmp_path) == (False, True)


def test_ruff_check_runs_with_no_fix_so_a_repository_config_cannot_make_it_fix(tmp_path: Path) -> None:
    """`fix = true` in a repository's ruff config turns the plain `ruff check` into a write."""
    assert checked(tmp_path, "ruff check src").argv == ["ruff", "check", "--no-fix", "src"]
    assert check_form(shlex.split("python -m ruff check")) == ["python", "-m", "ruff", "check", "--no-fix"]
    assert check_form(["ruff", "check", "--diff"]) == ["ruff", "check", "--diff"]
    assert checked(tmp_path, "ruff check --fix").argv == ["ruff", "check", "--fix"]  # asked for, run as asked


def test_a_write_in_a_shell_line_is_recognised(tmp_path: Path) -> None:
    policy = CommandPolicy(PolicyConfig(allowlist=["pytest", "black"], allow_shell_metacharacters=True), tmp_path)
    assert policy.inspect("pytest -q && black .").writes
    assert policy.inspect("pytest -q && black --check .").writes == ()


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(PolicyConfig(), (True, False), id="suggest-asks"),
        pytest.param(PolicyConfig(approval_mode="auto"), (False, True), id="auto-runs"),
        pytest.param(PolicyConfig(approve_bash="auto"), (True, False), id="commands-auto-edits-asked"),
        pytest.param(PolicyConfig(approval_mode="auto", approve_edits="never"), (False, False), id="edits-never-denies"),
        pytest.param(PolicyConfig(approval_mode="never"), (False, False), id="never-denies"),
    ],
)
async def test_a_command_that_writes_is_decided_like_an_edit(tmp_path: Path, config: PolicyConfig, expected) -> None:
    assert await verification_asks("ruff format", tmp_path, config) == expected

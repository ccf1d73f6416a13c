"""Command policy: bypass attempts are refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.policy import PolicyViolation
from deepseek_ls.policy.commands import CommandPolicy
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.ui_port import AutoApproveUI

REFUSED = [
    pytest.param("pytest; touch pwned", "metacharacter", id="semicolon"),
    pytest.param("pytest && touch pwned", "metacharacter", id="and-chain"),
    pytest.param("pytest || touch pwned", "metacharacter", id="or-chain"),
    pytest.param("pytest & touch pwned", "metacharacter", id="background"),
    pytest.param("pytest | tee pwned", "metacharacter", id="pipe"),
    pytest.param("pytest > pwned", "metacharacter", id="redirect-out"),
    pytest.param("pytest >> pwned", "metacharacter", id="redirect-append"),
    pytest.param("pytest < /etc/passwd", "metacharacter", id="redirect-in"),
    pytest.param("pytest 2>pwned", "metacharacter", id="redirect-stderr"),
    pytest.param("pytest $(touch pwned)", "metacharacter", id="command-substitution"),
    pytest.param("pytest `touch pwned`", "metacharacter", id="backticks"),
    pytest.param("pytest ${IFS}x", "metacharacter", id="ifs-expansion"),
    pytest.param("pytest $HOME", "metacharacter", id="variable-expansion"),
    pytest.param("pytest\ntouch pwned", "metacharacter", id="newline-injection"),
    pytest.param("pytest\rtouch pwned", "metacharacter", id="carriage-return"),
    pytest.param("(touch pwned)", "metacharacter", id="subshell"),
    pytest.param("pytest -k 'a' ; touch pwned", "metacharacter", id="semicolon-after-quote"),
    pytest.param("pytest\u200b; touch pwned", "control_character", id="zero-width-space"),
    pytest.param("pytest\x00touch", "control_character", id="nul"),
    pytest.param("FOO=bar pytest", "env_prefix", id="env-prefix"),
    pytest.param("PYTHONPATH=. pytest", "env_prefix", id="env-prefix-pythonpath"),
    pytest.param("LD_PRELOAD=/tmp/x.so pytest", "env_prefix", id="env-prefix-ld-preload"),
    pytest.param("rm -rf .", "not_allowlisted", id="rm"),
    pytest.param("touch pwned", "not_allowlisted", id="touch"),
    pytest.param("bash -c 'touch pwned'", "not_allowlisted", id="bash-c"),
    pytest.param("sh pytest", "not_allowlisted", id="sh-wrapper"),
    pytest.param("env pytest", "not_allowlisted", id="env-wrapper"),
    pytest.param("python -c 'import os'", "not_allowlisted", id="python-c"),
    pytest.param("./pytest", "not_allowlisted", id="relative-binary"),
    pytest.param("/usr/bin/pytest", "not_allowlisted", id="absolute-binary"),
    pytest.param("pytestx", "not_allowlisted", id="prefix-extension"),
    pytest.param("PYTEST", "not_allowlisted", id="case-trick"),
    pytest.param("pytеst", "not_allowlisted", id="cyrillic-e-lookalike"),
    pytest.param("cargo build", "not_allowlisted", id="cargo-build"),
    pytest.param("git push", "not_allowlisted", id="git-push"),
    pytest.param("git -c core.pager='touch pwned' status", "not_allowlisted", id="git-c-before-subcommand"),
    pytest.param("git status --git-dir=/tmp", "dangerous_flag", id="git-dir"),
    pytest.param("git diff --ext-diff", "dangerous_flag", id="git-ext-diff"),
    pytest.param("git diff --output=pwned", "dangerous_flag", id="git-diff-output"),
    pytest.param("git log --output pwned", "dangerous_flag", id="git-log-output"),
    pytest.param("rg --pre ./evil.sh foo", "dangerous_flag", id="rg-pre"),
    pytest.param("rg --pre=./evil.sh foo", "dangerous_flag", id="rg-pre-equals"),
    pytest.param("rg --pre-glob '*' foo", "dangerous_flag", id="rg-pre-glob"),
    pytest.param("rg -z foo", "dangerous_flag", id="rg-search-zip"),
    pytest.param("rg -iz foo", "dangerous_flag", id="rg-clustered-short-flag"),
    pytest.param("rg -L foo", "dangerous_flag", id="rg-follow-symlinks"),
    pytest.param("rg --hostname-bin=./evil foo", "dangerous_flag", id="rg-hostname-bin"),
    pytest.param("pytest -c /dev/null", "dangerous_flag", id="pytest-config"),
    pytest.param("pytest --rootdir=/", "dangerous_flag", id="pytest-rootdir"),
    pytest.param("pytest -o addopts=-pfoo", "dangerous_flag", id="pytest-override-ini"),
    pytest.param("make test -f /tmp/Makefile", "dangerous_flag", id="make-file"),
    pytest.param("make test --eval=x", "dangerous_flag", id="make-eval"),
    pytest.param("go test -exec ./evil", "dangerous_flag", id="go-exec"),
    pytest.param("go test -toolexec=./evil ./...", "dangerous_flag", id="go-toolexec"),
    pytest.param("cargo test --config build.rustc-wrapper=./evil", "dangerous_flag", id="cargo-config"),
    pytest.param("rg secret /etc", "absolute_path", id="rg-absolute-path"),
    pytest.param("rg secret ~/.ssh", "absolute_path", id="rg-home"),
    pytest.param("rg secret ../..", "dotdot", id="rg-dotdot"),
    pytest.param("pytest ../other_repo/tests", "dotdot", id="pytest-dotdot"),
    pytest.param("pytest --basetemp=../x", "dangerous_flag", id="pytest-basetemp"),
    pytest.param("pytest 'unterminated", "unparsable", id="unbalanced-quote"),
    pytest.param("", "empty_command", id="empty"),
]


@pytest.mark.parametrize(("cmd", "rule"), REFUSED)
def test_bypass_attempt_is_refused(cmd: str, rule: str) -> None:
    with pytest.raises(PolicyViolation) as info:
        CommandPolicy(PolicyConfig()).check(cmd)
    assert info.value.rule == rule


@pytest.mark.parametrize(("cmd", "rule"), REFUSED)
async def test_bypass_attempt_never_executes_through_the_tool_host(tmp_path: Path, cmd: str, rule: str) -> None:
    config = Config(policy=PolicyConfig(approval_mode="auto"))
    ui = AutoApproveUI("allow_once")
    sink = ListSink()
    host = ToolHost(tmp_path, config, sink=sink, ui=ui)
    outcome = await host.call("bash.run", {"cmd": cmd})
    assert not outcome.ok
    assert not (tmp_path / "pwned").exists()
    assert ui.approvals == []  # refused before anyone was asked
    if cmd:  # an empty command is already rejected by argument validation
        decisions = [p for k, p in sink.events if k == "PolicyDecision@v1"]
        assert decisions and decisions[-1]["allowed"] is False
        assert decisions[-1]["rule"] == rule


ALLOWED = [
    pytest.param("pytest", ["pytest"], id="bare"),
    pytest.param("pytest -q tests/unit", ["pytest", "-q", "tests/unit"], id="with-args"),
    pytest.param("pytest -k 'parse and not slow'", ["pytest", "-k", "parse and not slow"], id="quoted-arg"),
    pytest.param("python -m pytest -x", ["python", "-m", "pytest", "-x"], id="python-m-pytest"),
    pytest.param("cargo fmt --check", ["cargo", "fmt", "--check"], id="multi-token-prefix"),
    pytest.param("git diff HEAD~1..HEAD", ["git", "diff", "HEAD~1..HEAD"], id="git-range-is-not-dotdot"),
    pytest.param("go test -count=1 ./...", ["go", "test", "-count=1", "./..."], id="go-single-dash-long-flag"),
    pytest.param("rg -n TODO src", ["rg", "-n", "TODO", "src"], id="rg-search"),
]


@pytest.mark.parametrize(("cmd", "argv"), ALLOWED)
def test_allowlisted_command_parses_to_argv(cmd: str, argv: list[str]) -> None:
    assert CommandPolicy(PolicyConfig()).check(cmd) == argv


def test_multi_token_prefix_must_match_whole_tokens() -> None:
    policy = CommandPolicy(PolicyConfig(allowlist=["cargo fmt --check"]))
    with pytest.raises(PolicyViolation):
        policy.check("cargo fmt")  # rewrites files without --check


def test_chaining_when_enabled_still_requires_every_command_allowlisted() -> None:
    policy = CommandPolicy(PolicyConfig(allow_shell_metacharacters=True))
    checked = policy.inspect("ruff check && pytest -q")
    assert checked.shell and checked.argv[:2] == ["/bin/sh", "-c"]
    with pytest.raises(PolicyViolation) as info:
        policy.check("pytest && touch pwned")
    assert info.value.rule == "not_allowlisted"
    with pytest.raises(PolicyViolation) as info:
        policy.check("pytest > out.txt")
    assert info.value.rule == "metacharacter"


# -- shape review: what runs unprompted, what always asks --------------------------------------

import pytest as _pytest  # noqa: E402

from deepseek_ls.policy.commands import CommandPolicy as _Policy  # noqa: E402


@_pytest.mark.parametrize("command", [
    "pytest", "pytest -q", "pytest -q -x tests/test_app.py::test_add", "pytest -k 'add and not slow' --tb=short",
    "python -m pytest -q -rfE", "python -m pytest -vv --maxfail=1 -n 4", "cargo test", "cargo test -q --workspace",
    "cargo test -- --nocapture", "cargo fmt --check", "cargo check --all-targets", "npm test", "npm run lint",
    "go test ./...", "go test -run TestAdd -count=1 ./pkg/...", "git status --short", "git diff --stat HEAD~1",
    "git log -5 --oneline", "rg -n -i todo src", "rg -g '*.py' -e foo", "ruff check src", "mypy --strict src",
    "make test", "make test -j 4 -k",
])
def test_common_verification_commands_have_a_safe_shape(command: str) -> None:
    assert _Policy().inspect(command).review == ()


@_pytest.mark.parametrize(("command", "why"), [
    ("make test CC=evil", "overrides a make variable"),
    ("pytest --lf-unknown", "not a known-safe option"),
    ("git diff --no-index a b", "--no-index"),
    ("cargo test -- --logfile=x", "passed to the test binary"),
    ("npm test -- --watch", "passed to the package's script"),
    ("go test -trimpath ./...", "-trimpath"),
    ("rg --engine=pcre2 x", "--engine"),
    ("pytest -qz", "'-z'"),
    ("git status --short=x", "takes no value"),
])
def test_unusual_shapes_need_explicit_approval(command: str, why: str) -> None:
    review = _Policy().inspect(command).review
    assert review and why in " ".join(review)


def test_unknown_program_takes_no_extra_argument_unprompted() -> None:
    from deepseek_ls.config_models import PolicyConfig

    policy = _Policy(PolicyConfig(allowlist=["tox"]))
    assert policy.inspect("tox").review == ()
    assert "no table of safe options" in policy.inspect("tox -e py311").review[0]

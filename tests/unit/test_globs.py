"""Gitignore patterns match every file name, whichever pathspec backends are installed."""

from __future__ import annotations

from deepseek_ls.globs import gitignore_spec
from deepseek_ls.policy import PathPolicy
from deepseek_ls.config_models import PolicyConfig


def test_a_name_that_is_not_utf8_is_matched_not_an_error() -> None:
    # With Hyperscan installed pathspec's default backend raised UnicodeEncodeError here.
    spec = gitignore_spec(["*.py", "!keep-*"])
    assert spec.match_file("bad-\udcff-name.py")
    assert not spec.match_file("keep-\udcff.py")


def test_no_leak_deny_list_matches_a_secret_with_a_non_utf8_name(tmp_path) -> None:
    policy = PathPolicy(tmp_path, [*PolicyConfig().deny_paths, "!nothing"])  # a negation keeps pathspec's matching
    assert not policy.is_allowed("conf/\udcff.env")
    assert policy.is_allowed("src/\udcff.py")

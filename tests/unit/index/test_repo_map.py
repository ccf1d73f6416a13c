"""repo_map(): files with their top-level symbols, relevant first, within the budget."""

import pytest


@pytest.fixture
def index(workspace, make_index):
    idx = make_index(workspace)
    idx.build()
    return idx


def test_map_lists_files_with_their_symbols_shallow_first(index):
    text = index.repo_map(token_budget=2000)
    blocks = text.split("\n")
    assert blocks[0] == "README.md"
    assert "app/config.py\n  const DEFAULT_PORT  L3\n  function parse_config  L6\n  class ConfigError  L10" in text
    assert "native/lib.rs\n  struct Parser  L1\n  impl Parser  L5\n  function parse_config_bytes  L9" in text
    assert "more files" not in text  # everything fits


def test_query_puts_relevant_files_first(index):
    text = index.repo_map("fetch user profile", token_budget=2000)
    assert text.startswith("web/client.ts\n  function fetchUserProfile  L1\n  interface UserProfile  L5")


@pytest.mark.parametrize("budget", [10, 25, 40])
def test_map_stays_within_the_token_budget_and_says_what_it_left_out(index, budget):
    text = index.repo_map(token_budget=budget)
    body = text.rsplit("\n… ", 1)[0] if "more files not shown" in text else text
    assert len(body) <= budget * 4
    assert "more files not shown" in text

import pytest

from deepseek_ls.index.tokenize import identifier_parts, query_parts, split_identifier


@pytest.mark.parametrize(
    "word, parts",
    [
        pytest.param("parse_config", ["parse", "config"], id="snake_case"),
        pytest.param("parseConfig", ["parse", "config"], id="camelCase"),
        pytest.param("HTTPServer", ["http", "server"], id="acronym-then-word"),
        pytest.param("getHTTPResponseCode", ["get", "http", "response", "code"], id="acronym-inside"),
        pytest.param("IOError", ["io", "error"], id="short-acronym"),
        pytest.param("MAX_RETRY_COUNT", ["max", "retry", "count"], id="screaming-snake"),
        pytest.param("utf8_decode", ["utf", "8", "decode"], id="digits"),
        pytest.param("__init__", [], id="dunder-is-one-word"),
        pytest.param("config", [], id="single-word"),
        pytest.param("ABC", [], id="single-acronym"),
    ],
)
def test_split_identifier(word, parts):
    assert split_identifier(word) == parts


def test_identifier_parts_lists_each_subword_once_and_skips_plain_words():
    text = "def parse_config(cfg): return parseConfig(cfg) or plain"
    assert identifier_parts(text).split() == ["config", "parse"]


def test_query_parts_come_from_every_compound_word_of_the_query():
    assert query_parts("fetchUserProfile user_id plain") == ["fetch", "user", "profile", "id"]

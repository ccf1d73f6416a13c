import pytest

from deepseek_ls.index.tokenize import code_text, identifier_parts, query_parts, split_identifier


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


def test_identifier_parts_of_non_ascii_identifiers_match_the_unicode_word_rules():
    # Bytes >= 0x80 are re-read with Python's Unicode `\w`: the same words as a regex over the text.
    text = "café_au_lait = naïveCase + x\u0301yZ; ｆｕｌｌＷｉｄｔｈ = 1"
    # (what the regex-over-the-text implementation gave: `_PART` splits at non-ASCII letters)
    assert identifier_parts(text).split() == ["au", "caf", "case", "lait", "na", "ve", "y", "z", "é", "ï"]
    assert identifier_parts(text.encode()) == identifier_parts(text)


def test_code_text_writes_underscore_as_a_letter_tantivy_keeps_inside_words():
    assert code_text("parse_config(__init__)") == "parse\u02cdconfig(\u02cd\u02cdinit\u02cd\u02cd)"
    assert code_text("plain") == "plain"


def test_identifier_parts_are_the_same_when_the_vocabulary_is_full_or_shared(monkeypatch):
    from deepseek_ls.index import tokenize

    texts = ["def parse_config(cfg): return parseConfig(cfg)", "HTTPServer io_error IOError plain", "x_y zZ a1B"]
    expected = [identifier_parts(t) for t in texts]
    assert expected[1].split() == ["error", "http", "io", "server"]
    monkeypatch.setattr(tokenize._Vocabulary, "LIMIT", 4)  # every call starts a new vocabulary
    assert [identifier_parts(t) for t in texts] == expected
    assert [identifier_parts(t) for t in reversed(texts)] == expected[::-1]

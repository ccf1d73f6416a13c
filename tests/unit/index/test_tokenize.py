import pytest

from deepseek_ls.index.tokenize import code_text, normalised, normalised_identifiers, split_identifier


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


def test_normalised_identifiers_lists_each_compound_once_and_skips_plain_words():
    text = "def parse_config(cfg): return parseConfig(cfg) or PARSE_CONFIG or plain or Plain or __init__"
    assert normalised_identifiers(text).split() == ["parseconfig"]


@pytest.mark.parametrize(
    "word, form",
    [
        pytest.param("parse_config", "parseconfig", id="snake_case"),
        pytest.param("parseConfig", "parseconfig", id="camelCase"),
        pytest.param("ParseConfig", "parseconfig", id="PascalCase"),
        pytest.param("PARSE_CONFIG", "parseconfig", id="screaming-snake"),
        pytest.param("_private_name", "privatename", id="leading-underscore"),
        pytest.param("utf8_decode", "utf8decode", id="digits"),
        pytest.param("Config", None, id="capitalised-word"),
        pytest.param("config", None, id="plain"),
        pytest.param("x0e7", None, id="lower-with-digits"),
        pytest.param("__init__", None, id="dunder"),
        pytest.param("Foo2", "foo2", id="capitalised-then-digits"),
        pytest.param("aB", "ab", id="two-letters"),
        pytest.param("1_2", "12", id="digits-joined"),
        pytest.param("7522", None, id="number"),
        pytest.param("HTTPServer", "httpserver", id="acronym"),
    ],
)
def test_a_query_word_normalises_as_the_documents_do(word, form):
    assert normalised(word) == form
    assert normalised_identifiers(f"x = {word}\n").split() == ([form] if form else [])


def test_normalised_identifiers_of_non_ascii_identifiers_match_the_unicode_word_rules():
    # Bytes >= 0x80 are re-read with Python's Unicode `\w`: the same words as a regex over the text.
    text = "café_au_lait = naïveCase + x\u0301yZ; ｆｕｌｌＷｉｄｔｈ = 1"
    assert normalised_identifiers(text).split() == ["caféaulait", "naïvecase", "yz"]
    assert normalised_identifiers(text.encode()) == normalised_identifiers(text)
    assert [normalised(w) for w in ("café_au_lait", "naïveCase", "yZ")] == ["caféaulait", "naïvecase", "yz"]


def test_code_text_writes_underscore_as_a_letter_tantivy_keeps_inside_words():
    assert code_text("parse_config(__init__)") == "parse\u02cdconfig(\u02cd\u02cdinit\u02cd\u02cd)"
    assert code_text("plain") == "plain"


def test_normalised_identifiers_are_the_same_when_the_vocabulary_is_full_or_shared(monkeypatch):
    from deepseek_ls.index import tokenize

    texts = ["def parse_config(cfg): return parseConfig(cfg)", "HTTPServer io_error IOError plain", "x_y zZ a1B"]
    expected = [normalised_identifiers(t) for t in texts]
    assert expected[1].split() == ["httpserver", "ioerror"]
    monkeypatch.setattr(tokenize._Vocabulary, "LIMIT", 4)  # every call starts a new vocabulary
    assert [normalised_identifiers(t) for t in texts] == expected
    assert [normalised_identifiers(t) for t in reversed(texts)] == expected[::-1]

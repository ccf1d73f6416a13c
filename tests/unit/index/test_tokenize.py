import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.index.schema import code_analyzer
from deepseek_ls.index.tokenize import index_text, split_identifier, sub_words


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


def terms(text: str) -> list[str]:
    """What the index holds for `text`: our text step, then the analyzer tantivy runs."""
    return code_analyzer().analyze(index_text(text))


@pytest.mark.parametrize(
    "word, term",
    [
        pytest.param("parse_config", "parseconfig", id="snake_case"),
        pytest.param("parseConfig", "parseconfig", id="camelCase"),
        pytest.param("ParseConfig", "parseconfig", id="PascalCase"),
        pytest.param("PARSE_CONFIG", "parseconfig", id="screaming-snake"),
        pytest.param("_private_name", "privatename", id="leading-underscore"),
        pytest.param("parse__config_", "parseconfig", id="doubled-and-trailing-underscores"),
        pytest.param("utf8_decode", "utf8decode", id="digits"),
        pytest.param("Config", "config", id="capitalised-word"),
        pytest.param("x0e7", "x0e7", id="lower-with-digits"),
        pytest.param("__init__", "init", id="dunder"),
        pytest.param("1_2", "12", id="digits-joined"),
        pytest.param("HTTPServer", "httpserver", id="acronym"),
        pytest.param("café_au_lait", "caféaulait", id="non-ascii-snake"),
        pytest.param("naïveCase", "naïvecase", id="non-ascii-camel"),
    ],
)
def test_every_spelling_of_an_identifier_is_one_term(word, term):
    # Documents and queries go through the same two steps, so any spelling finds any other.
    assert terms(f"x = {word}(y)\n") == ["x", term, "y"]


def test_a_plain_word_stays_whole_and_does_not_match_inside_an_identifier():
    assert terms("config parse_config config_path") == ["config", "parseconfig", "configpath"]


def test_an_underscore_alone_is_no_term():
    assert terms("a = _ + __ + b") == ["a", "b"]


def test_sub_words_of_several_names_in_one_call():
    assert sub_words("parse_config HTTPServer") == "parse config HTTP Server"
    assert sub_words("") == ""


@pytest.mark.parametrize(
    "name",
    ["parse_config", "parseConfig", "HTTPServer", "Parser", "parse", "MAX", "MAX_SIZE", "Foo2", "utf8",
     "BASE64", "__init__", "_private", "_", "x", "aB", "7522", "café_au_lait", "naïveCase"],
)
def test_the_symbols_field_splits_the_names_split_identifier_splits(name):
    # `analyse._compound` decides without the regex which definition names get sub-words.
    from deepseek_ls.index.analyse import _compound

    assert _compound(name) == bool(split_identifier(name))


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"), pytest.param("___", id="only-underscores"), pytest.param("abc", id="none"),
    pytest.param("parse_config", id="ascii"), pytest.param("é_é_", id="latin-1"), pytest.param("…_x", id="two-byte"),
    pytest.param("😀__a", id="four-byte"), pytest.param("_" + "x" * 100_000 + "_", id="long"),
])
def test_the_native_index_text_deletes_every_underscore_like_the_reference(text):
    from deepseek_ls.index import native, tokenize

    assert native.module is not None, "deepseek_ls/index/_native.c was not built (pip install -e .)"
    found = native.module.index_text(text)
    assert found == tokenize._index_text_reference(text) == text.replace("_", "")
    assert len(found) == len(text) - text.count("_")


@given(st.text(max_size=200))
@settings(max_examples=500, deadline=None)
def test_the_native_index_text_agrees_with_the_reference_on_any_text(text):
    from deepseek_ls.index import native, tokenize

    assert native.module.index_text(text) == tokenize._index_text_reference(text)

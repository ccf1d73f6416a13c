"""query(): ranking, line hits, filters, and user text that never raises."""

import json

import pytest


@pytest.fixture
def index(workspace, make_index):
    idx = make_index(workspace)
    idx.build()
    return idx


def paths(result):
    return [h.path for h in result.hits]


def test_definition_ranks_above_mentions_and_lines_point_at_matches(index, workspace):
    result = index.query("parse_config")
    assert result.fresh is True
    assert paths(result)[0] == "app/config.py"
    assert set(paths(result)) >= {"app/config.py", "app/server.py"}
    top = result.hits[0]
    lines = workspace.joinpath("app/config.py").read_text().splitlines()
    assert [h.line for h in top.lines] == [6]
    assert top.lines[0].text == lines[5].strip() == "def parse_config(text):"


def test_camel_case_query_finds_snake_case_code_through_subwords(index):
    assert "app/config.py" in paths(index.query("parseConfig"))
    assert paths(index.query("fetchUserProfile"))[0] == "web/client.ts"
    # a single sub-word finds the compound identifier
    assert "web/client.ts" in paths(index.query("profile"))


def test_whole_identifier_beats_its_parts(index):
    result = index.query("HTTPServer")
    assert paths(result)[0] == "app/server.py"  # defines it; README.md only mentions it


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('"unclosed quote', id="quote"),
        pytest.param("foo(bar", id="paren"),
        pytest.param("app.config:parse", id="looks-like-a-field"),
        pytest.param("AND OR NOT", id="only-operators"),
        pytest.param("-", id="lone-dash"),
        pytest.param("", id="empty"),
        pytest.param("   \t", id="blank"),
        pytest.param("[1 TO", id="range"),
        pytest.param("*", id="star"),
        pytest.param("配置 parse_config", id="non-ascii"),
    ],
)
def test_user_text_never_raises(index, text):
    result = index.query(text)
    assert result.query == text


def test_syntax_error_falls_back_to_words_with_a_warning(index):
    result = index.query('"parse_config')
    assert paths(result)[0] == "app/config.py"
    assert result.warnings and "words" in result.warnings[0]


def test_path_glob_and_language_filters(index):
    assert set(paths(index.query("parse_config", path_glob="app/"))) == {"app/config.py", "app/server.py"}
    both = "parse_config parse_config_bytes"
    assert paths(index.query(both, path_glob="*.rs")) == ["native/lib.rs"]
    assert paths(index.query(both, lang="rust")) == ["native/lib.rs"]
    assert paths(index.query(both, lang="rs")) == ["native/lib.rs"]  # alias
    assert paths(index.query("parse_config", path_glob="nothing/")) == []


def test_top_k_limits_the_files(index):
    assert len(index.query("config", top_k=1).hits) == 1
    assert len(index.query("config", top_k=50).hits) > 1


def test_line_hits_are_capped_and_in_line_order(make_index, tmp_path):
    root = tmp_path / "many"
    root.mkdir()
    (root / "big.py").write_text("".join(f"value_{i} = needle_word + {i}\n" for i in range(200)))
    idx = make_index(root)
    idx.build()
    hit = idx.query("needle_word").hits[0]
    assert 1 <= len(hit.lines) <= 5
    assert [line.line for line in hit.lines] == sorted(line.line for line in hit.lines)
    assert all("needle_word" in line.text for line in hit.lines)


def test_long_lines_are_trimmed_to_a_short_snippet(make_index, tmp_path):
    root = tmp_path / "long"
    root.mkdir()
    (root / "wide.js").write_text("var needle = '" + "x" * 5000 + "';\n")
    idx = make_index(root)
    idx.build()
    (line,) = idx.query("needle").hits[0].lines
    assert len(line.text) <= 160 and line.text.endswith("…")


def test_underscore_joins_a_word_like_ripgrep_w(make_index, tmp_path):
    # tantivy's tokenizer splits at `_`; the index writes it as a letter so that
    # `parse_config` is one word (as for `rg -w`), in documents and queries alike.
    root = tmp_path / "words"
    root.mkdir()
    (root / "joined.py").write_text("value = load_user_table()\n")
    (root / "apart.md").write_text("Load the user table first.\n")
    idx = make_index(root)
    idx.build()
    assert paths(idx.query("load_user_table")) == ["joined.py"]
    assert paths(idx.query("user")) == ["apart.md"]  # as `rg -w user`: not inside load_user_table
    assert paths(idx.query("table AND first")) == ["apart.md"]


def test_a_field_named_in_the_query_keeps_its_underscore(index):
    result = index.query("path_text:client")
    assert paths(result) == ["web/client.ts"]
    assert not result.warnings


def test_a_changed_file_is_found_after_its_update_by_this_or_another_instance(workspace, make_index):
    # Queries reuse one searcher per opened manifest: a write must replace it.
    idx = make_index(workspace)
    idx.build()
    assert paths(idx.query("freshly_added_name")) == []
    with (workspace / "app/util/strings.py").open("a") as fh:
        fh.write("\ndef freshly_added_name():\n    pass\n")
    idx.update(["app/util/strings.py"])
    assert paths(idx.query("freshly_added_name")) == ["app/util/strings.py"]
    other = make_index(workspace)  # another process's CodeIndex over the same state
    (workspace / "README.md").write_text("# Sample\n\nsecond_new_word here\n")
    other.update(["README.md"])
    other.wait_idle()
    assert paths(idx.query("second_new_word")) == ["README.md"]
    assert paths(idx.query("freshly_added_name")) == ["app/util/strings.py"]


def test_a_query_reads_no_file_line_hits_come_from_the_file_when_shown(index, workspace):
    # Line hits are computed when a result is shown, from the file as it is then:
    # the query itself reads no workspace file.
    result = index.query("parse_config parse_config_bytes")
    assert {"app/config.py", "app/server.py", "native/lib.rs"} <= set(paths(result))
    assert not any(hit.lines_loaded for hit in result.hits)
    by_path = {hit.path: hit for hit in result.hits}
    (workspace / "app/server.py").unlink()  # gone before it is shown: no lines, no error
    config = workspace / "app/config.py"
    config.write_text("# moved down\n\n" + config.read_text())  # changed since indexing
    assert by_path["app/server.py"].lines == []
    assert [(h.line, h.text) for h in by_path["app/config.py"].lines] == [(8, "def parse_config(text):")]
    assert by_path["app/config.py"].lines_loaded and not by_path["native/lib.rs"].lines_loaded


def test_never_wrong_lines_for_a_file_changed_since_indexing(make_index, tmp_path):
    # The index is not told about the edit: lines still point at the text as it is
    # now (never at where the word was when indexed), and the result says stale.
    root = tmp_path / "edited"
    root.mkdir()
    (root / "mod.py").write_text("def target_name():\n    pass\n")
    idx = make_index(root, freshness_ttl_seconds=0)
    idx.build()
    (root / "mod.py").write_text("import os\n\n\nx = 1  # target_name moved here\n")
    result = idx.query("target_name")
    assert result.fresh is False
    assert [(h.line, h.text) for h in result.hits[0].lines] == [(4, "x = 1  # target_name moved here")]
    (root / "mod.py").write_text("nothing = 'here'\n")
    assert idx.query("target_name").hits[0].lines == []


def test_serialised_result_carries_the_line_hits(index):
    data = index.query("parse_config", top_k=2).model_dump(mode="json")
    assert list(data) == ["query", "fresh", "hits", "warnings"]
    top = data["hits"][0]
    assert list(top) == ["path", "score", "lang", "lines"]
    assert top["path"] == "app/config.py" and top["lang"] == "python"
    assert top["lines"] == [{"line": 6, "text": "def parse_config(text):"}]
    json.dumps(data)  # plain JSON values only


def test_a_compound_query_word_finds_the_same_identifier_written_another_way(make_index, tmp_path):
    # `parseConfig` finds `parse_config` / `PARSE_CONFIG` / `ParseConfig` (the identifier,
    # normalised), but not a file that only says `parse` and `config` in two places, nor
    # one whose identifier merely contains it (`load_parse_config_file`: as for `rg -w`).
    # (Before schema 5 any file holding all the sub-words somewhere matched.)
    root = tmp_path / "idents"
    root.mkdir()
    (root / "snake.py").write_text("def parse_config():\n    pass\n")
    (root / "screaming.py").write_text("PARSE_CONFIG = 1\n")
    (root / "apart.py").write_text("def parse_header():\n    pass\n\nCONFIG_PATH = 'x'\n")
    (root / "longer.py").write_text("def load_parse_config_file():\n    pass\n")
    (root / "letters.py").write_text("x = 0\ne = 7\n")
    idx = make_index(root)
    idx.build()
    assert sorted(paths(idx.query("parseConfig"))) == ["screaming.py", "snake.py"]
    assert sorted(paths(idx.query("ParseConfig"))) == ["screaming.py", "snake.py"]
    assert paths(idx.query("config_path")) == ["apart.py"]  # the whole word still finds it
    assert paths(idx.query("loadParseConfigFile")) == ["longer.py"]
    assert paths(idx.query("x0e7")) == []
    hit = next(h for h in idx.query("ParseConfig").hits if h.path == "snake.py")
    assert [(h.line, h.text) for h in hit.lines] == [(1, "def parse_config():")]


def test_every_spelling_of_the_identifier_scores_the_same(make_index, tmp_path):
    # One term per identifier however it is written (schema 6, tokenize.index_text): the
    # spelling typed is no longer preferred (schema 5 held both forms, at twice the cost).
    root = tmp_path / "spelling"
    root.mkdir()
    (root / "a_camel.py").write_text("value = parseConfig()\n")
    (root / "b_snake.py").write_text("value = parse_config()\n")
    (root / "c_other.py").write_text("value = parse(config)\n")
    idx = make_index(root)
    idx.build()
    for typed in ("parse_config", "parseConfig", "PARSE_CONFIG"):
        hits = idx.query(typed).hits
        assert [h.path for h in hits] == ["a_camel.py", "b_snake.py"]
        assert hits[0].score == hits[1].score


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("parse_config", id="one-word"),
        pytest.param("HTTPServer parse_config", id="two-words"),
        pytest.param("config config", id="typed-twice"),
        pytest.param("Config config", id="two-cases"),
        pytest.param("  parse_config   ConfigError\t", id="spaces"),
    ],
)
def test_plain_words_are_searched_without_the_parser_with_the_same_scores(index, text):
    from deepseek_ls.index import query as q
    from deepseek_ls.index import schema as f

    opened = index._opened()
    built = q._plain_words_query(opened.schema, text)
    parsed, errors = q._parse(opened.index, text, list(f.FIELD_BOOSTS), f.FIELD_BOOSTS)
    assert built is not None and not errors

    def ranked(query):
        return [(round(s, 5), opened.searcher.doc(a).get_first("path")) for s, a in opened.searcher.search(query, 20).hits]

    assert ranked(built) and ranked(built) == ranked(parsed)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("path_text:client", id="field"),
        pytest.param('"parse config"', id="phrase"),
        pytest.param("parse AND config", id="operator"),
        pytest.param("配置", id="non-ascii"),
        pytest.param("-config", id="exclusion"),
        pytest.param("a" * 200, id="longer-than-a-token"),
    ],
)
def test_query_syntax_still_goes_through_the_parser(index, text):
    from deepseek_ls.index import query as q

    assert q._plain_words_query(index._opened().schema, text) is None
    index.query(text)  # and never raises


def test_a_quoted_phrase_finds_the_files_holding_all_its_words(make_index, tmp_path):
    # `content` keeps no positions (schema 6): a phrase is all of its words, not nothing.
    root = tmp_path / "phrase"
    root.mkdir()
    (root / "both.py").write_text("value = load(config_path)\n")
    (root / "one.py").write_text("load = 1\n")
    idx = make_index(root)
    idx.build()
    for typed in ('"load config_path"', '"load configPath"~2', 'content:"load config_path"'):
        result = idx.query(typed)
        assert paths(result) == ["both.py"] and result.warnings == []
    assert paths(idx.query('""')) == []

import pytest

from deepseek_ls.agent.executor_parse import ExecutorParseError, extract_diff, parse_executor_answer

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,1 +1,1 @@\n-old\n+new\n"


def test_fenced_diff_with_prose_around():
    answer = parse_executor_answer("Here you go:\n```diff\n" + DIFF + "```\nDone.")
    assert answer.kind == "diff" and answer.diff == DIFF


def test_bare_diff_and_git_header():
    assert parse_executor_answer("Sure\n" + DIFF).diff == DIFF
    git = "diff --git a/app.py b/app.py\n" + DIFF
    assert extract_diff(git) == git


def test_two_fenced_blocks_are_joined():
    other = DIFF.replace("app.py", "util.py")
    answer = parse_executor_answer(f"```diff\n{DIFF}```\nand\n```diff\n{other}```")
    assert answer.diff == DIFF + other


def test_need_context_lines_with_and_without_ranges():
    answer = parse_executor_answer("NEED_CONTEXT|src/a.py:10-40\nNEED_CONTEXT|src/b.py")
    assert answer.kind == "need_context"
    assert [(r.path, r.start, r.end) for r in answer.context] == [("src/a.py", 10, 40), ("src/b.py", None, None)]


def test_need_file_no_change_and_ask_user():
    assert parse_executor_answer("NEED_FILE|src/c.py|the helper lives there").need_files == [("src/c.py", "the helper lives there")]
    assert parse_executor_answer("NO_CHANGE|already correct").reason == "already correct"
    assert parse_executor_answer("ASK_USER|Which one?").kind == "ask_user"


@pytest.mark.parametrize("text", ["", "I changed the file for you.", "```python\nprint(1)\n```"])
def test_unusable_answers_raise(text):
    with pytest.raises(ExecutorParseError):
        parse_executor_answer(text)

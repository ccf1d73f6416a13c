"""Which lines carry a `deepseek:` instruction (lsp/comment_actions.instruction_of): a line that is only
a comment in the document's syntax, found by language id or else by file name, whose text starts with
`deepseek:`; never a marker inside a string or after code, never an empty instruction."""

from __future__ import annotations

import pytest

from deepseek_ls.lsp.comment_actions import instruction_of

CARRY = [
    pytest.param("# deepseek: add a docstring", "python", "a.py", "add a docstring", id="python"),
    pytest.param("    ## DEEPSEEK : shout  less ", "python", "a.py", "shout less", id="repeated-marker-case-spaces"),
    pytest.param("/// deepseek: doc it", "rust", "a.rs", "doc it", id="rust-doc-comment"),
    pytest.param("-- deepseek: index it", None, "q.sql", "index it", id="sql-by-name"),
    pytest.param("--[[ deepseek: lua block ]]", "lua", "a.lua", "lua block", id="lua-block"),
    pytest.param("{- deepseek: hs block -}", "haskell", "a.hs", "hs block", id="haskell-block"),
    pytest.param(";; deepseek: lisp it", "emacs-lisp", "init.el", "lisp it", id="elisp"),
    pytest.param("% deepseek: cite it", "latex", "a.tex", "cite it", id="latex"),
    pytest.param("<!-- deepseek: intro -->", "html", "a.html", "intro", id="html"),
    pytest.param("/* deepseek: tidy */", "css", "a.css", "tidy", id="css"),
    pytest.param("# deepseek: php hash", "php", "a.php", "php hash", id="php-hash"),
    pytest.param('" deepseek: vim it', "vim", "a.vim", "vim it", id="vim"),
    pytest.param("# deepseek: unknown file", "plaintext", "notes", "unknown file", id="unknown-hash"),
    pytest.param("// deepseek: unknown file", None, "x.weird", "unknown file", id="unknown-slashes"),
]

NOT = [
    pytest.param('s = "# deepseek: no"', "python", "a.py", id="in-a-string"),
    pytest.param("f()  # deepseek: no", "python", "a.py", id="after-code"),
    pytest.param("// deepseek: no", "python", "a.py", id="foreign-marker"),
    pytest.param("# deepseek:", "python", "a.py", id="empty"),
    pytest.param("# deepseek:    ", "python", "a.py", id="blank"),
    pytest.param("# deepseeker: no", "python", "a.py", id="longer-word"),
    pytest.param("# not deepseek: no", "python", "a.py", id="not-first"),
    pytest.param("# deepseek: heading", "markdown", "a.md", id="markdown-heading"),
    pytest.param("/* a */ f(); /* deepseek: no */", "c", "a.c", id="code-between-block-comments"),
    pytest.param("/* deepseek: unclosed", "css", "a.css", id="unclosed-block"),
]


@pytest.mark.parametrize(("line", "language_id", "path", "expected"), CARRY)
def test_a_comment_line_carries_its_instruction(line: str, language_id: str | None, path: str, expected: str) -> None:
    assert instruction_of(line, language_id, path) == expected


@pytest.mark.parametrize(("line", "language_id", "path"), NOT)
def test_no_instruction_outside_a_whole_line_comment(line: str, language_id: str | None, path: str) -> None:
    assert instruction_of(line, language_id, path) is None

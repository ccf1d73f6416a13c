"""How each language writes a comment, and what a line that is only a comment says.

Keyed by LSP language id (VS Code's and Neovim's names) and by the index's language names
(`languages.language_for`, from the file name), so a buffer whose client sent no useful
language id is still read by its extension. A line counts as a comment only when the whole
line is one (`comment_text`): a marker inside a string or after code is never taken for one.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepseek_ls.index.languages import language_for


@dataclass(frozen=True)
class CommentSyntax:
    """A language's line-comment markers and its block-comment delimiters (open, close)."""

    line: tuple[str, ...] = ()
    block: tuple[tuple[str, str], ...] = ()


_C = CommentSyntax(("//",), (("/*", "*/"),))
_HASH = CommentSyntax(("#",))
_DASH = CommentSyntax(("--",))
_SEMI = CommentSyntax((";",))
_PERCENT = CommentSyntax(("%",))
_MARKUP = CommentSyntax((), (("<!--", "-->"),))
_CSS = CommentSyntax((), (("/*", "*/"),))
_PHP = CommentSyntax(("//", "#"), (("/*", "*/"),))
_UNKNOWN = CommentSyntax(("#", "//"))  # a file we cannot place: the two markers nearly every config file uses

_LANGUAGES: dict[CommentSyntax, tuple[str, ...]] = {
    _C: ("c", "cpp", "csharp", "cs", "java", "javascript", "javascriptreact", "typescript", "typescriptreact",
         "rust", "go", "kotlin", "scala", "swift", "dart", "zig", "jsonc", "groovy", "proto", "objc", "objcpp",
         "solidity", "glsl", "hlsl", "d", "v", "cuda", "vue", "svelte"),
    _HASH: ("python", "shell", "shellscript", "sh", "bash", "zsh", "fish", "ruby", "perl", "toml", "yaml", "r",
            "elixir", "make", "makefile", "dockerfile", "cmake", "powershell", "ps1", "julia", "nix", "graphql",
            "coffeescript", "crystal", "nim", "tcl", "conf", "gitignore", "ignore", "properties", "starlark",
            "bzl", "terraform", "hcl", "awk", "sed", "requirements", "dotenv"),
    _DASH: ("sql", "ada", "vhdl", "plsql", "mysql", "pgsql"),
    CommentSyntax(("--",), (("--[[", "]]"),)): ("lua",),
    CommentSyntax(("--",), (("{-", "-}"),)): ("haskell", "elm", "purescript", "agda", "idris"),
    _SEMI: ("lisp", "elisp", "emacs-lisp", "clojure", "scheme", "racket", "fennel", "asm", "nasm", "ini",
            "dosini"),
    _PERCENT: ("erlang", "tex", "latex", "plaintex", "bibtex", "matlab", "octave", "prolog"),
    _MARKUP: ("html", "xml", "markdown", "xhtml", "svg", "xsl", "vue-html", "razor", "rst-html"),
    _CSS: ("css", "scss", "less", "sass"),
    _PHP: ("php",),
    CommentSyntax(('"',)): ("vim",),
    CommentSyntax((), (("(*", "*)"),)): ("ocaml", "fsharp", "pascal"),
    CommentSyntax(("!",)): ("fortran",),
    CommentSyntax(("::",)): ("bat",),
    CommentSyntax(("..",)): ("rst", "restructuredtext"),
}
SYNTAX: dict[str, CommentSyntax] = {name: syntax for syntax, names in _LANGUAGES.items() for name in names}


def syntax_for(language_id: str | None, path: str) -> CommentSyntax:
    """The comment syntax of a document: by the editor's language id when we know it, else by the
    file's name, else the generic `#` / `//` (plain text and names we cannot place)."""
    for name in ((language_id or "").strip().lower(), language_for(path)):
        if name in SYNTAX:
            return SYNTAX[name]
    return _UNKNOWN


def comment_text(line: str, syntax: CommentSyntax) -> str | None:
    """The text of `line` when the whole line is one comment (leading marker repeats such as `##`,
    `///`, `;;` dropped), else None. A block comment counts when it opens and closes on the line."""
    stripped = line.strip()
    for opener, closer in syntax.block:
        inner = stripped[len(opener) : len(stripped) - len(closer)]
        if stripped.startswith(opener) and stripped.endswith(closer) and len(stripped) >= len(opener) + len(closer) \
                and closer not in inner:  # `/* a */ call(); /* b */` is code between two comments
            return inner.strip()
    for marker in syntax.line:
        if stripped.startswith(marker):
            rest = stripped[len(marker) :]
            return (rest.lstrip(marker[0]) if not marker[0].isalnum() else rest).strip()
    return None

"""Which language a file is written in, and whether it is text at all.

The index stores the language as an exact-match field so `index query --lang py`
can filter on it; names are the short, lowercase ones people type.
"""

from __future__ import annotations

_BY_SUFFIX: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".rs": "rust", ".go": "go", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".scala": "scala", ".swift": "swift", ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".php": "php", ".lua": "lua", ".pl": "perl",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".fish": "shell",
    ".md": "markdown", ".rst": "rst", ".txt": "text",
    ".toml": "toml", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".xml": "xml",
    ".html": "html", ".htm": "html", ".css": "css", ".scss": "css", ".sql": "sql",
    ".vim": "vim", ".el": "elisp", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang",
    ".hs": "haskell", ".ml": "ocaml", ".zig": "zig", ".dart": "dart", ".r": "r",
}
_BY_NAME: dict[str, str] = {
    "Makefile": "make", "makefile": "make", "GNUmakefile": "make",
    "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake",
}

# Aliases accepted by `--lang` (what people type) → the stored name.
ALIASES: dict[str, str] = {
    "py": "python", "js": "javascript", "ts": "typescript", "rs": "rust", "golang": "go",
    "c++": "cpp", "cs": "csharp", "c#": "csharp", "rb": "ruby", "sh": "shell", "bash": "shell",
    "md": "markdown", "yml": "yaml",
}

_SNIFF_BYTES = 8192


def language_for(path: str) -> str:
    """The language name for a workspace-relative path ("text" when unknown).
    (Called for every query hit: string methods, not `PurePosixPath`, whose
    `name` and `suffix` rules these follow.)"""
    name = path.rpartition("/")[2]
    if name in _BY_NAME:
        return _BY_NAME[name]
    dot = name.rfind(".")
    return _BY_SUFFIX.get(name[dot:].lower(), "text") if 0 < dot < len(name) - 1 else "text"


def normalize_language(name: str) -> str:
    """Map what a user typed (`py`, `Python`) to the stored language name."""
    key = name.strip().lower()
    return ALIASES.get(key, key)


def looks_binary(data: bytes) -> bool:
    """Git's heuristic: a NUL byte in the first 8 KiB means binary."""
    return data.find(b"\x00", 0, _SNIFF_BYTES) >= 0  # a slice would copy the bytes first

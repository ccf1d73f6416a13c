"""The language server's modules import each other in one direction: no circle in `deepseek_ls/lsp/`.

The imports are read with `ast`, not by importing. A circle of module-level imports (the
top of a file, `if TYPE_CHECKING:` blocks included) fails the first test; the second also
counts the imports inside functions, since a circle put off until call time is still two
features that cannot be understood or changed apart. The shape kept: the transport below
everything; `server.py` (the connection's wiring) below every feature, which it never
imports (`setup.py` registers them); the helpers every session feature shares in
`session_views.py`, below those features (docs/architecture.md, "The language server").
"""

from __future__ import annotations

import ast
from pathlib import Path

import deepseek_ls.lsp

PACKAGE = "deepseek_ls.lsp"
ROOT = Path(deepseek_ls.lsp.__file__).parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((PACKAGE, *parts))] = path
    return modules


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run when the module is imported: the top level and the bodies of
    its `if` / `try` / `with` blocks (`if TYPE_CHECKING:`), not functions or classes."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for name in ("body", "orelse", "finalbody"):
                todo.extend(getattr(node, name, []))
            for handler in getattr(node, "handlers", []):
                todo.extend(handler.body)
    return out


def _imports(module: str, path: Path, known: set[str], *, everywhere: bool) -> set[str]:
    """The modules of `known` that `module` imports at module level (`everywhere`: anywhere in its file)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree) if everywhere else _module_level(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from lsp import names`
    return {name for name in found if name in known and name != module}


def _graph(*, everywhere: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules), everywhere=everywhere) for name, path in modules.items()}


def _a_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports (`a -> b -> ... -> a`), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node):] + [node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph[node]):
            if (circle := visit(target)) is not None:
                return circle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if (circle := visit(start)) is not None:
            return circle
    return None


def _short(name: str) -> str:
    return name.removeprefix(PACKAGE + ".")


def test_lsp_modules_import_each_other_without_a_circle():
    circle = _a_circle(_graph())
    assert circle is None, "lsp/ module-level imports in a circle: " + " -> ".join(map(_short, circle or []))


def test_lsp_modules_import_each_other_without_a_circle_even_inside_functions():
    circle = _a_circle(_graph(everywhere=True))
    assert circle is None, "lsp/ imports in a circle (some inside functions): " + " -> ".join(map(_short, circle or []))


def test_the_server_imports_no_feature():
    features = {_short(t) for t in _graph(everywhere=True)[f"{PACKAGE}.server"]}
    # What every feature is wired to (services, settings: for typing), never a feature.
    assert features <= {"services", "settings", "tasks", "uris", "transport.decoding", "transport.limits",
                        "transport.protocol"}, features


def test_lsp_transport_imports_nothing_above_it():
    graph = _graph()
    upward = {
        _short(module): sorted(_short(t) for t in targets if not t.startswith(f"{PACKAGE}.transport"))
        for module, targets in graph.items()
        if module.startswith(f"{PACKAGE}.transport")
    }
    assert {module: targets for module, targets in upward.items() if targets} == {}


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _a_circle(graph) == ["a", "b", "c", "a"]
    assert _a_circle({"a": {"b"}, "b": set()}) is None


def test_module_level_means_what_runs_on_import():
    tree = ast.parse(
        "import a\nif TYPE_CHECKING:\n    import b\ntry:\n    import c\nexcept ImportError:\n    import d\n"
        "def f():\n    import e\nclass K:\n    import g\n"
    )
    names = {alias.name for node in _module_level(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert names == {"a", "b", "c", "d"}

"""The package's imports point down its floors: none runs up a floor, no rooms import each other in a circle.

The imports are read with `ast`, not by importing. A room is a top-level module or package of
`deepseek_ls` (`agent`, `store`, `config`, ...); `FLOORS` places every room, top first, and is the
one statement of the layer order (docs/architecture.md, "Floors", draws the same). A room may
import a room on a lower floor, or on its own floor as long as no circle closes. Imports inside
functions count: a circle put off until call time is still two rooms that cannot be understood or
changed apart, and it is how circles hide.

Within a room: no room that is a package has a circle between its modules (`cli/chat/` keeps its
table of slash commands and the `ChatLike` its handlers use in `slash.py`, below the chat; the fake
model's HTTP side names what it needs of its owner in `testkit/handler.py`'s `ServedFake`), and
`agent/` and `lsp/` keep the shape they are drawn with (the shape `lsp/` keeps:
the transport below everything; `server.py`, the connection's wiring, below every feature, which it
never imports (`setup.py` registers them); the helpers every session feature shares in
`session_views.py`, below those features: docs/architecture.md, "The language server").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import deepseek_ls

PACKAGE = "deepseek_ls"
ROOT = Path(deepseek_ls.__file__).parent

# Top first. `deepseek_ls` is the package's own __init__ (its version).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("__main__", "cli", "testkit"),  # entry points, and the test kit (fake model, signals)
    ("lsp", "acp"),  # adapters: the language server, the Agent Client Protocol
    ("agent",),  # sessions, planner, executor, loop, lanes, Hetun, replay; build_agent
    ("tools", "index", "extensions"),  # the model's tools, the code index, custom commands and skills
    ("llm", "router", "patch"),  # the model client, routing, patch staging and apply
    ("store",),  # the event store, and the seal on what deepseek-ls keeps in a workspace
    ("policy", "config", "trust"),  # what may be read, run, written; the configuration and trust
    ("deepseek_ls", "config_models", "config_layers", "ui_port", "sink", "workspace", "globs", "multiscan"),
)
FLOOR_OF = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}  # 0 = top


def _modules(package: str = PACKAGE, root: Path = ROOT) -> dict[str, Path]:
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join((package, *parts))] = path
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


def _import_lines(module: str, path: Path, known: set[str], *, everywhere: bool) -> dict[str, int]:
    """The modules of `known` that `module` imports at module level (`everywhere`: anywhere in its
    file), each with the line of its first import. `from pkg import name` counts `pkg` and, when it
    is a module, `pkg.name`; a module importing a package it is part of is not counted (the
    package runs first whatever is imported from it)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for node in ast.walk(tree) if everywhere else _module_level(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            if name in known and name != module and not module.startswith(name + "."):
                found.setdefault(name, node.lineno)
    return found


def _imports(module: str, path: Path, known: set[str], *, everywhere: bool) -> set[str]:
    return set(_import_lines(module, path, known, everywhere=everywhere))


def _graph(package: str = PACKAGE, *, everywhere: bool = False) -> dict[str, set[str]]:
    modules = _modules(package, ROOT.joinpath(*package.split(".")[1:]))
    return {name: _imports(name, path, set(modules), everywhere=everywhere) for name, path in modules.items()}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def _room_imports() -> dict[tuple[str, str], str]:
    """(room, room imported) -> one import that makes it (`module:line -> module`), anywhere in a file."""
    modules = _modules()
    edges: dict[tuple[str, str], str] = {}
    for name, path in modules.items():
        for target, line in _import_lines(name, path, set(modules), everywhere=True).items():
            if _room(name) != _room(target):
                edges.setdefault((_room(name), _room(target)), f"{name}:{line} -> {target}")
    return edges


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
        for target in sorted(graph.get(node, ())):
            if (circle := visit(target)) is not None:
                return circle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        if (circle := visit(start)) is not None:
            return circle
    return None


def _short(name: str, package: str = "deepseek_ls.lsp") -> str:
    return name.removeprefix(package + ".")


# -- floors and rooms ------------------------------------------------------------------------


def test_every_room_has_a_floor():
    rooms = {_room(name) for name in _modules()}
    assert rooms - set(FLOOR_OF) == set(), "place the new room in FLOORS (and docs/architecture.md)"
    assert set(FLOOR_OF) - rooms == set(), "FLOORS names a room that is gone"


def test_no_import_runs_up_a_floor():
    upward = [f"{how}  ({a} is below {b})" for (a, b), how in sorted(_room_imports().items())
              if FLOOR_OF[a] > FLOOR_OF[b]]
    assert upward == [], "imports that run up a floor:\n" + "\n".join(upward)


def test_rooms_import_each_other_without_a_circle():
    edges = _room_imports()
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    circle = _a_circle(graph)
    assert circle is None, "rooms in a circle: " + "; ".join(edges[(a, b)] for a, b in zip(circle, circle[1:]))


def test_agent_modules_import_each_other_without_a_circle_even_inside_functions():
    circle = _a_circle(_graph("deepseek_ls.agent", everywhere=True))
    assert circle is None, "agent/ imports in a circle: " + " -> ".join(_short(m, "deepseek_ls.agent")
                                                                         for m in circle or [])


PACKAGE_ROOMS = sorted(room for room in FLOOR_OF if ROOT.joinpath(room, "__init__.py").is_file())


@pytest.mark.parametrize("room", PACKAGE_ROOMS)
def test_no_room_has_a_circle_between_its_modules_even_inside_functions(room: str):
    package = f"{PACKAGE}.{room}"
    circle = _a_circle(_graph(package, everywhere=True))
    assert circle is None, f"{room}/ imports in a circle: " + " -> ".join(_short(m, package) for m in circle or [])


def test_the_rooms_checked_for_inner_circles_include_those_that_had_one():
    # cli/chat (app <-> commands <-> rewind_cmd, custom) and testkit (fake_deepseek <-> handler) had one.
    assert {"agent", "cli", "index", "lsp", "testkit"} <= set(PACKAGE_ROOMS)


def test_lanes_never_import_the_agent():
    """Lanes get their agents from a factory (`assemble.lane_agent`): `Agent` imports the lanes."""
    graph = _graph("deepseek_ls.agent", everywhere=True)
    lanes = {m: sorted(t) for m, t in graph.items() if m.startswith("deepseek_ls.agent.lanes")}
    assert {m: t for m, t in lanes.items() if "deepseek_ls.agent.agent" in t} == {}


def test_the_floor_finder_sees_a_function_local_import_up_a_floor(tmp_path: Path):
    (tmp_path / "m.py").write_text("import os\ndef f():\n    from deepseek_ls.agent import loop\n")
    known = {"deepseek_ls.agent", "deepseek_ls.agent.loop"}
    assert _import_lines("deepseek_ls.store.m", tmp_path / "m.py", known, everywhere=True) == {
        "deepseek_ls.agent": 3, "deepseek_ls.agent.loop": 3}
    assert _import_lines("deepseek_ls.store.m", tmp_path / "m.py", known, everywhere=False) == {}


# -- the language server (lsp/) --------------------------------------------------------------

LSP = "deepseek_ls.lsp"


def test_lsp_modules_import_each_other_without_a_circle():
    circle = _a_circle(_graph(LSP))
    assert circle is None, "lsp/ module-level imports in a circle: " + " -> ".join(map(_short, circle or []))


def test_lsp_modules_import_each_other_without_a_circle_even_inside_functions():
    circle = _a_circle(_graph(LSP, everywhere=True))
    assert circle is None, "lsp/ imports in a circle (some inside functions): " + " -> ".join(map(_short, circle or []))


def test_the_server_imports_no_feature():
    features = {_short(t) for t in _graph(LSP, everywhere=True)[f"{LSP}.server"]}
    # What every feature is wired to (services, settings: for typing), never a feature.
    assert features <= {"services", "settings", "tasks", "uris", "transport.decoding", "transport.limits",
                        "transport.protocol"}, features


def test_lsp_transport_imports_nothing_above_it():
    graph = _graph(LSP)
    upward = {
        _short(module): sorted(_short(t) for t in targets if not t.startswith(f"{LSP}.transport"))
        for module, targets in graph.items()
        if module.startswith(f"{LSP}.transport")
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

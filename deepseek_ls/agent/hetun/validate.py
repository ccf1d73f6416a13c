"""The helper block's AST check: only the curated helpers, plain data and bounded loops.

A helper block is Python the model wrote. Before it runs (in a separate,
sandboxed process: `runner.py`) it must pass this check, which is an
allowlist, not a deny-list:

- statements: assignment, augmented assignment, expression, `if`, `for`
  (bounded at run time), `break`, `continue`, `pass`; no `import`, `def`,
  `class`, `while`, `try`, `with`, `global`, `del`, `raise`, `lambda` bodies
  with statements, `yield`, `await`;
- names: the helpers, a few safe builtins, and names the block assigns itself;
  nothing starting with `_` (so no `__import__`, `__builtins__`, `__class__`),
  and no assignment to a helper or builtin (no tampering);
- attributes: only the data methods in `METHODS` (`text.splitlines()`,
  `d.get(k)`), never a name starting with `_`, never `format`/`format_map`
  (format strings walk attributes);
- no `**` (a one-line CPU bomb) and bounded sizes of the code itself.

Every `for` and comprehension iterates through a counter (`LOOP_GUARD`),
inserted after the check under a name the block cannot spell, so all loops
together stop after `max_loop_iterations`.
"""

from __future__ import annotations

import ast

HELPERS_PARENT = (
    "read_file", "read_lines", "list_files", "search", "index_query", "symbols", "repo_map",
    "ask_fast", "ask_fast_many",
)
HELPERS_LOCAL = (
    "slice_lines", "lines", "grep", "head", "tail", "count_lines",
    "map", "filter", "collect", "unique", "top", "join", "finding", "result",
)
HELPERS = HELPERS_PARENT + HELPERS_LOCAL
SAFE_BUILTINS = (
    "len", "range", "min", "max", "sum", "sorted", "enumerate", "zip", "str", "int", "float", "bool",
    "list", "dict", "set", "tuple", "abs", "round", "any", "all", "reversed", "print", "True", "False", "None",
)
METHODS = frozenset({
    # str
    "splitlines", "split", "rsplit", "strip", "lstrip", "rstrip", "lower", "upper", "startswith", "endswith",
    "replace", "find", "rfind", "count", "join", "partition", "rpartition", "isdigit", "isalpha", "title",
    # list / dict / set
    "append", "extend", "insert", "pop", "index", "sort", "reverse", "get", "items", "keys", "values",
    "update", "add", "discard", "union", "intersection", "difference", "setdefault", "copy",
})
LOOP_GUARD = "__hetun_loop__"  # not spellable by the block: names starting with "_" are refused

_ALLOWED_NODES = (
    ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.If, ast.For, ast.Break, ast.Continue, ast.Pass,
    ast.Name, ast.Load, ast.Store, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.comprehension, ast.Call, ast.keyword, ast.Attribute,
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice,
    ast.JoinedStr, ast.FormattedValue, ast.Lambda, ast.arguments, ast.arg,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod,
    ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
)


class HelperBlockRejected(ValueError):
    """The block failed the check; the message names the first offending construct and its line."""


def _where(node: ast.AST) -> str:
    line = getattr(node, "lineno", None)
    return f" (line {line})" if line else ""


def _assigned_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def check(code: str, *, max_bytes: int = 8_000) -> ast.Module:
    """Parse and check `code`; returns its AST or raises `HelperBlockRejected`."""
    if len(code.encode("utf-8", "surrogatepass")) > max_bytes:
        raise HelperBlockRejected(f"the helper block is larger than {max_bytes} bytes")
    if "\x00" in code:
        raise HelperBlockRejected("the helper block contains a NUL character")
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as exc:
        raise HelperBlockRejected(f"the helper block is not valid Python: {exc.msg} (line {exc.lineno})") from None
    known = set(HELPERS) | set(SAFE_BUILTINS)
    own = _assigned_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise HelperBlockRejected(f"{type(node).__name__} is not allowed in a helper block{_where(node)}")
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise HelperBlockRejected(f"the name {node.id!r} is not allowed (names may not start with '_'){_where(node)}")
            if isinstance(node.ctx, ast.Store) and node.id in known:
                raise HelperBlockRejected(f"assigning to {node.id!r} is not allowed (helpers and builtins are fixed){_where(node)}")
            if isinstance(node.ctx, ast.Load) and node.id not in known and node.id not in own:
                raise HelperBlockRejected(f"unknown name {node.id!r}: only the helpers ({', '.join(HELPERS)}), "
                                          f"a few builtins and your own variables{_where(node)}")
        elif isinstance(node, ast.arg):
            if node.arg.startswith("_") or node.arg in known:
                raise HelperBlockRejected(f"the parameter name {node.arg!r} is not allowed{_where(node)}")
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr not in METHODS:
                raise HelperBlockRejected(f"the attribute {node.attr!r} is not allowed; methods: "
                                          f"{', '.join(sorted(METHODS))}{_where(node)}")
            if not isinstance(node.ctx, ast.Load):
                raise HelperBlockRejected(f"assigning to an attribute is not allowed{_where(node)}")
        elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
            if not isinstance(node.value, ast.Name):
                raise HelperBlockRejected(f"only assignments to your own list or dict items are allowed{_where(node)}")
        elif isinstance(node, ast.Lambda):
            a = node.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.kw_defaults or a.posonlyargs:
                raise HelperBlockRejected(f"lambdas take plain positional parameters only{_where(node)}")
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, (ast.Name, ast.Attribute, ast.Lambda)):
                raise HelperBlockRejected(f"only helpers, builtins and data methods may be called{_where(node)}")
            if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
                raise HelperBlockRejected(f"*args / **kwargs are not allowed{_where(node)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            raise HelperBlockRejected(f"bytes literals are not allowed{_where(node)}")
        elif isinstance(node, ast.FormattedValue) and node.conversion not in (-1, ord("s"), ord("r")):
            raise HelperBlockRejected(f"that f-string conversion is not allowed{_where(node)}")
    return tree


class _GuardLoops(ast.NodeTransformer):
    """Wrap every loop's iterable in the loop counter."""

    def _guard(self, iterable: ast.expr) -> ast.expr:
        return ast.Call(func=ast.Name(id=LOOP_GUARD, ctx=ast.Load()), args=[iterable], keywords=[])

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        node.iter = self._guard(node.iter)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.iter = self._guard(node.iter)
        return node


def prepare(code: str, *, max_bytes: int = 8_000) -> str:
    """Check `code` and return the source the child runs (loops counted)."""
    tree = _GuardLoops().visit(check(code, max_bytes=max_bytes))
    return ast.unparse(ast.fix_missing_locations(tree))

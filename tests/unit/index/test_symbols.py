import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.index import symbols
from deepseek_ls.index.symbols import Symbol, extract_symbols


@pytest.fixture(params=["native", "hyperscan", "python"])
def engine(request, monkeypatch):
    """Python symbols are found by the native module (`_native.c`, where it was built),
    else from one Hyperscan pass (ASCII text, where it is installed), else from regexes
    and `str.find`: each test runs on all three, with the same answer."""
    if request.param == "native":
        assert symbols._NATIVE is not None, "deepseek_ls/index/_native.c was not built (pip install -e .)"
        yield
        return
    monkeypatch.setattr(symbols, "_NATIVE", None)
    if request.param == "hyperscan":
        if symbols._PY_SCAN.get() is None:
            pytest.skip("Hyperscan is not installed here")
        yield
    else:
        with symbols._PY_SCAN.disabled():
            yield


def names(symbols):
    return [(s.kind, s.name, s.line) for s in symbols]


def test_python_top_level_definitions(engine):
    text = (
        "import os\n"
        "MAX_SIZE = 10\n"
        "lower_case = 1\n"
        "@decorator\n"
        "def outer():\n"
        "    def inner():\n"
        "        pass\n"
        "class Thing:\n"
        "    def method(self):\n"
        "        pass\n"
        "async def fetch():\n"
        "    pass\n"
        '"""\n'
        "def in_a_string():\n"
        '"""\n'
    )
    assert names(extract_symbols("python", text)) == [
        ("const", "MAX_SIZE", 2),
        ("function", "outer", 5),
        ("class", "Thing", 8),
        ("function", "fetch", 11),
    ]


def test_python_that_does_not_parse_falls_back_to_column_zero_regex(engine):
    text = 'print "python 2"\ndef old_style():\n    pass\nclass Legacy:\n    pass\n'
    assert names(extract_symbols("python", text)) == [("function", "old_style", 2), ("class", "Legacy", 4)]


def test_rust_definitions_with_visibility_and_impl_blocks():
    text = "pub struct Parser;\nimpl<T> Display for Wrapper<T> {}\npub(crate) fn helper() {}\nconst LIMIT: u32 = 3;\n    fn nested() {}\n"
    assert names(extract_symbols("rust", text)) == [
        ("struct", "Parser", 1),
        ("impl", "Wrapper", 2),
        ("function", "helper", 3),
        ("const", "LIMIT", 4),
    ]


def test_go_methods_and_types():
    text = "package x\nfunc (s *Server) Serve() error { return nil }\ntype Handler interface{}\nfunc main() {}\n"
    assert names(extract_symbols("go", text)) == [
        ("function", "Serve", 2),
        ("type", "Handler", 3),
        ("function", "main", 4),
    ]


def test_typescript_exports():
    text = "export default class App {}\nexport interface Props {}\nexport const VERSION = '1'\nfunction local() {}\n"
    assert names(extract_symbols("typescript", text)) == [
        ("class", "App", 1),
        ("interface", "Props", 2),
        ("const", "VERSION", 3),
        ("function", "local", 4),
    ]


def test_symbol_round_trips_through_its_stored_form():
    sym = Symbol("parse", "function", 3)
    assert Symbol.from_list(sym.to_list()) == sym


def test_c_functions_macros_typedefs_and_structs():
    text = (
        "#include <stdio.h>\n"
        "#define MAX_LEN 64\n"
        "typedef unsigned long size_type;\n"
        "typedef struct node {\n"
        "    int value;\n"
        "} Node;\n"
        "struct point { int x, y; };\n"
        "static int helper(int a,\n"
        "                  int b)\n"
        "{\n"
        "    if (a) return b;\n"
        "    return compute(a);\n"
        "}\n"
        "int x = compute(3);\n"
        "const char *\n"
        "name_of(Node *n) {\n"
        "}\n"
    )
    assert names(extract_symbols("c", text)) == [
        ("macro", "MAX_LEN", 2),
        ("type", "size_type", 3),
        ("type", "Node", 6),
        ("struct", "point", 7),
        ("function", "helper", 8),
        ("function", "name_of", 16),
    ]


def _ast_symbols(text):
    """The reference: what `ast` calls top-level definitions."""
    import ast

    out = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(("function", node.name, node.lineno))
        elif isinstance(node, ast.ClassDef):
            out.append(("class", node.name, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [("const", t.id, node.lineno) for t in targets
                    if isinstance(t, ast.Name) and t.id[:1].isupper() and t.id == t.id.upper()]
    return out


TRIPLE_SINGLE = "'" * 3


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('x = """\ndef not_me():\n"""\ndef me():\n    pass\n', id="def-inside-triple-quotes"),
        pytest.param(f"s = {TRIPLE_SINGLE}\nclass Hidden:\n{TRIPLE_SINGLE}\nclass Shown:\n    pass\n",
                     id="class-inside-single-triple"),
        pytest.param('x = "# not a comment"\nLIMIT = 3\n', id="hash-inside-string"),
        pytest.param("# don't \"open\" a string\ndef f():\n    pass\n", id="quotes-inside-comment"),
        pytest.param('x = "a \\" still string"\nB = 2\n', id="escaped-quote"),
        pytest.param('s = r"\\\\"\nC = 1\n', id="raw-string-backslash"),
        pytest.param("A = b = C = 1\n", id="chained-assignment"),
        pytest.param("_private = PUBLIC = 2\n", id="chain-starting-lowercase"),
        pytest.param("MAX: int = 5\nMIN: int\n", id="annotated"),
        pytest.param("X == 1\nY = X == 2\n", id="comparison-not-assignment"),
        pytest.param("@decorator\nasync def fetch():\n    def inner():\n        pass\n", id="decorated-async-nested"),
        pytest.param('"""Module docstring.\n\ndef example():\n"""\n\nVERSION = "1"\n', id="module-docstring"),
        pytest.param('x = f"{1}"  # c\nclass K:\n    Z = 1\n', id="fstring-and-class-body"),
        # Triple quotes that open no string, and strings that hide other quotes.
        pytest.param('# a """ in a comment\ndef shown():\n    pass\n', id="triple-quotes-in-a-comment"),
        pytest.param("x = '\"\"\"'\ndef shown():\n    pass\n", id="triple-quotes-in-a-one-line-string"),
        pytest.param('x = "#"; s = """\ndef hidden():\n"""\nA = 1\n', id="hash-in-a-string-then-triple-quotes"),
        pytest.param(f's = """{TRIPLE_SINGLE}\ndef hidden():\n"""\nB = 2\n', id="other-triple-quotes-inside"),
        pytest.param('s = """a \\""" still\ndef hidden():\n"""\nC = 3\n', id="escaped-closing-quotes"),
        pytest.param('s = """a \\\\"""\ndef shown():\n    pass\n', id="escaped-backslash-then-closing"),
        pytest.param('s = """"quoted" start\ndef hidden():\n"""\nD = 4\n', id="four-quotes-open"),
        pytest.param(f'a = """x""" + {TRIPLE_SINGLE}\nclass Hidden:\n{TRIPLE_SINGLE}\nE = 5\n', id="two-strings-one-line"),
        pytest.param('x = 1  # "\ns = """\ndef hidden():\n"""\nF = 6\n', id="quote-in-a-comment-before-triple-quotes"),
    ],
)
def test_python_symbols_agree_with_ast(engine, text):
    assert names(extract_symbols("python", text)) == _ast_symbols(text)


def test_an_unterminated_triple_quoted_string_hides_the_rest_of_the_file(engine):
    text = 'A = 1\ns = """\ndef hidden():\n    pass\n'
    assert names(extract_symbols("python", text)) == [("const", "A", 1)]


def test_a_huge_python_file_is_read_in_one_pass_with_the_same_answer(engine):
    body = "MAX_SIZE = 10\n\n@decorator\ndef outer():\n    pass\n\nclass Thing:\n    def method(self):\n        pass\n"
    big = body + ("# " + "x" * 78 + "\n") * 20_000
    assert names(extract_symbols("python", big)) == names(extract_symbols("python", body)) == [
        ("const", "MAX_SIZE", 1),
        ("function", "outer", 4),
        ("class", "Thing", 7),
    ]


_PY_FRAGMENTS = ["\n", "def f():", "class K:", "async def g():", "A = 1", "b = C = 2", "X: int", "    ", "#", "\"", "\'",
                 '"""', "'''", "\\", "x = ", "print(1)", "é", "\r\n", "MAX_SIZE = 3", "s = r\"\\\\\"", "(", ")"]


@given(st.lists(st.sampled_from(_PY_FRAGMENTS), max_size=30))
@settings(max_examples=500, deadline=None)
def test_both_engines_find_the_same_python_symbols(parts):
    text = "".join(parts)
    with symbols._PY_SCAN.disabled():
        expected = symbols._python_reference(text)
    assert symbols._python_reference(text) == expected


# What the native module must read as Python's `str` methods and `re` do: characters of
# every width (`é` one byte, `…` two, `😀` four), Unicode letters and digits inside names
# (`\w`), whitespace `str.isspace` knows beyond ASCII, and keywords half-typed.
_EDGE_FRAGMENTS = _PY_FRAGMENTS + [
    "…", "😀", "ß", "٣", "\xa0", "\u3000", "\x1c", "\x0b", "\t", "café", "Ⅻ", "_", "=", "==", ":", "def", "class",
    "async", "async\tdef h():", "def\t", "class ", "X", "Y_2", "a", "\\\n", '""', "''", TRIPLE_SINGLE + "x" + TRIPLE_SINGLE,
    '"""\\"""',
]


@given(st.lists(st.sampled_from(_EDGE_FRAGMENTS), max_size=40))
@settings(max_examples=2000, deadline=None)
def test_the_native_module_finds_what_the_reference_finds(parts):
    text = "".join(parts)
    with symbols._PY_SCAN.disabled():
        expected = symbols._python_reference(text)
    found = symbols._NATIVE(text, Symbol)
    assert found == expected
    assert all(type(symbol) is Symbol for symbol in found)


@given(st.text(max_size=300))
@settings(max_examples=1000, deadline=None)
def test_the_native_module_reads_any_text_like_the_reference(text):
    with symbols._PY_SCAN.disabled():
        assert symbols._NATIVE(text, Symbol) == symbols._python_reference(text)


def test_the_native_module_agrees_on_the_whole_standard_library():
    """Every `.py` file of this Python's standard library (1,790 files, 31 MB), read as
    the index reads it: the same symbols, in the same order, with the same lines."""
    import sysconfig
    from pathlib import Path

    root = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in sorted(root.rglob("*.py")) if "site-packages" not in p.relative_to(root).parts]
    assert len(files) > 500
    texts = {p: p.read_bytes().decode("utf-8", "replace") for p in files}
    assert [p for p, t in texts.items() if symbols._NATIVE(t, Symbol) != symbols._python_reference(t)] == []


@pytest.mark.parametrize("bad", [
    pytest.param(("x",), id="one-argument"),
    pytest.param((b"A = 1\n", Symbol), id="bytes"),
    pytest.param(("A = 1\n", list), id="not-a-tuple-type"),
])
def test_the_native_module_refuses_wrong_arguments(bad):
    with pytest.raises(TypeError):
        symbols._NATIVE(*bad)

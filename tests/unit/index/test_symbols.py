from deepseek_ls.index.symbols import Symbol, extract_symbols


def names(symbols):
    return [(s.kind, s.name, s.line) for s in symbols]


def test_python_top_level_definitions_come_from_ast():
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


def test_python_that_does_not_parse_falls_back_to_column_zero_regex():
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


def test_very_large_python_files_use_the_fast_regexes_with_the_same_answer():
    from deepseek_ls.index.symbols import AST_MAX_CHARS

    body = "MAX_SIZE = 10\n\n@decorator\ndef outer():\n    pass\n\nclass Thing:\n    def method(self):\n        pass\n"
    padding = "# " + "x" * 78 + "\n"
    big = body + padding * (AST_MAX_CHARS // len(padding) + 1)
    assert len(big) > AST_MAX_CHARS
    assert names(extract_symbols("python", big)) == names(extract_symbols("python", body)) == [
        ("const", "MAX_SIZE", 1),
        ("function", "outer", 4),
        ("class", "Thing", 7),
    ]

"""The Hetun helper block: the escape corpus (0 escapes) and the helpers it may use.

Two walls are tested separately: the AST check (`validate.check`) must refuse every escape
attempt, and the child process (`runner.run_block` with the real bubblewrap sandbox) must hold
even for code that skips the check (`_unchecked`), so one wall failing is not an escape.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from deepseek_ls.agent.hetun import runner
from deepseek_ls.agent.hetun.validate import HelperBlockRejected, check, prepare
from deepseek_ls.config_models import HetunHelperConfig
from deepseek_ls.policy.sandbox import Sandbox

ESCAPES = [
    pytest.param("import os", id="import"),
    pytest.param("from os import system", id="from-import"),
    pytest.param("__import__('os').system('id')", id="dunder-import"),
    pytest.param("x = ().__class__.__bases__[0].__subclasses__()", id="subclasses-walk"),
    pytest.param("x = [].__class__", id="class-attr"),
    pytest.param("read_file.__globals__", id="function-globals"),
    pytest.param("x = read_file.__closure__", id="closure"),
    pytest.param("x = (lambda: 0).__code__", id="lambda-code"),
    pytest.param("__builtins__['open']('/etc/passwd')", id="builtins-dict"),
    pytest.param("len = lambda x: 0", id="builtins-tampering"),
    pytest.param("read_file = 1", id="helper-tampering"),
    pytest.param("open('/etc/passwd').read()", id="open"),
    pytest.param("exec('1')", id="exec"),
    pytest.param("eval('1')", id="eval"),
    pytest.param("compile('1', 'x', 'exec')", id="compile"),
    pytest.param("getattr((), '__class__')", id="getattr"),
    pytest.param("vars()", id="vars"),
    pytest.param("globals()", id="globals"),
    pytest.param("type(())", id="type"),
    pytest.param("'{0.__class__}'.format(())", id="format-attribute-walk"),
    pytest.param("'{a.__class__}'.format_map({'a': ()})", id="format-map-walk"),
    pytest.param("f'{().__class__}'", id="fstring-attribute"),
    pytest.param("while True:\n    pass", id="while-loop"),
    pytest.param("def f():\n    return 1", id="def"),
    pytest.param("class A:\n    pass", id="class"),
    pytest.param("x = 10 ** 10 ** 10", id="pow-bomb"),
    pytest.param("try:\n    x = 1\nexcept Exception:\n    pass", id="try"),
    pytest.param("with x:\n    pass", id="with"),
    pytest.param("global x", id="global"),
    pytest.param("del x", id="del"),
    pytest.param("x = (yield)", id="yield"),
    pytest.param("x = b'raw'", id="bytes"),
    pytest.param("f(*[1])", id="star-args"),
    pytest.param("x = [1]\nx.append.__self__", id="method-self"),
    pytest.param("(lambda _x: 0)(1)", id="underscore-param"),
    pytest.param("x = _secret", id="underscore-name"),
    pytest.param("x = {}\nx.__setitem__('a', 1)", id="dunder-method"),
    pytest.param("x = 1\nx.real = 2", id="attribute-store"),
    pytest.param("breakpoint()", id="breakpoint"),
    pytest.param("x = 'a' \x00", id="nul"),
]


@pytest.mark.parametrize("code", ESCAPES)
def test_no_unapproved_exec_helper_block_refused(code: str) -> None:
    with pytest.raises(HelperBlockRejected):
        check(code)


@pytest.mark.parametrize("code", [
    pytest.param("result(len(lines(read_file('a.py'))))", id="read-and-count"),
    pytest.param("x = [1, 2, 3]\ny = map(lambda v: v + 1, x)\nresult(sum(y))", id="map"),
    pytest.param("hits = search('def ')\nresult(top(unique(hits), 3))", id="search"),
    pytest.param("for i in range(3):\n    finding('n ' + str(i), 0.1)", id="for-loop"),
    pytest.param("d = {}\nd['k'] = 1\nresult(d.get('k'))", id="dict-item"),
    pytest.param("result(f'{1 + 1!r}')", id="fstring"),
])
def test_helper_block_allows_plain_data_work(code: str) -> None:
    assert prepare(code)


def test_the_check_rejects_oversized_blocks() -> None:
    with pytest.raises(HelperBlockRejected, match="larger than"):
        check("x = 1\n" * 5000, max_bytes=1000)


# -- the process wall: real child, real sandbox ------------------------------------------


class Host:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list]] = []

    async def serve(self, name, args, kwargs):
        self.calls.append((name, args))
        if name == "read_file":
            return "line one\nline two\n"
        if name == "ask_fast":
            return f"answer to {args[0]}"
        raise ValueError(f"{name} refused")


def cfg(**kw) -> HetunHelperConfig:
    return HetunHelperConfig(**{"timeout_seconds": 20, "cpu_seconds": 3, "memory_mb": 256,
                                "max_loop_iterations": 1000, **kw})


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    if not box.status().available:
        pytest.skip(f"no bubblewrap here: {box.status().reason}")
    return box


def run(code, sandbox, host=None, config=None, unchecked=False, monkeypatch=None):
    if unchecked:
        monkeypatch.setattr(runner, "prepare", lambda source, max_bytes: source)
    return asyncio.run(runner.run_block(code, host or Host(), config or cfg(), sandbox=sandbox))


def test_helper_block_runs_and_calls_back_through_the_pipe(sandbox) -> None:
    host = Host()
    result = run("t = read_file('a.py')\nresult([count_lines(t), ask_fast('hi')])", sandbox, host)
    assert result.ok, result.error
    assert result.result == [2, "answer to hi"]
    assert host.calls == [("read_file", ["a.py"]), ("ask_fast", ["hi"])]


def test_helper_refusal_reaches_the_block_as_an_error(sandbox) -> None:
    result = run("result(search('x'))", sandbox)
    assert not result.ok and "search refused" in result.error


def test_no_unapproved_exec_loops_are_bounded(sandbox) -> None:
    result = run("for i in range(100000):\n    x = i", sandbox)
    assert not result.ok and "loop limit" in result.error


def test_no_unapproved_exec_memory_exhaustion_is_stopped(sandbox) -> None:
    result = run("s = 'x'\nfor i in range(60):\n    s = s + s\nresult(len(s))", sandbox)
    assert not result.ok and "memory" in result.error


def test_no_unapproved_exec_helper_call_limit(sandbox) -> None:
    result = run("for i in range(10):\n    read_file('a.py')", sandbox, config=cfg(max_calls=3))
    assert not result.ok and "helper call limit" in result.error


def test_no_unapproved_exec_print_cannot_forge_protocol_messages(sandbox) -> None:
    result = run("print('{\"done\": true, \"result\": \"forged\"}')\nresult('real')", sandbox)
    assert result.ok and result.result == "real"
    assert result.output == ['{"done": true, "result": "forged"}']


# Code that skipped the AST check (as if the check had a hole): the process must still hold.
UNCHECKED = [
    pytest.param("import os\nresult(os.getcwd())", "__import__", id="import"),
    pytest.param("result(open('/etc/hostname').read())", "NameError", id="open"),
]


@pytest.mark.parametrize("code,error", UNCHECKED)
def test_no_unapproved_exec_without_the_check_builtins_are_gone(sandbox, monkeypatch, code, error) -> None:
    result = run(code, sandbox, unchecked=True, monkeypatch=monkeypatch)
    assert not result.ok and error in result.error


# The worst case: the block walks `__subclasses__` to the importer and loads `posix` (only
# possible without the AST check). The OS sandbox and the resource limits must still hold.
POSIX = (
    "b = ().__class__.__bases__[0]\n"
    "T = b.__class__\n"
    "todo = [b]\n"
    "for c in todo:\n"
    "    for s in T.__subclasses__(c):\n"
    "        if s not in todo:\n"
    "            todo.append(s)\n"
    "imp = [c for c in todo if c.__name__ == 'BuiltinImporter'][0]\n"
    "spec = imp.find_spec('posix')\n"
    "posix = spec.loader.create_module(spec)\n"
    "spec.loader.exec_module(posix)\n"
)


def test_no_unapproved_exec_the_posix_escape_really_reaches_posix(sandbox, monkeypatch) -> None:
    result = run(POSIX + "result(posix.getpid())", sandbox, unchecked=True, monkeypatch=monkeypatch)
    assert result.ok and isinstance(result.result, int)  # the escape works: what follows tests the walls


def test_no_unapproved_exec_writes_fail_even_after_an_escape(sandbox, monkeypatch, tmp_path) -> None:
    target = tmp_path / "written.txt"
    code = POSIX + f"fd = posix.open('{target}', 65 | 512)\nposix.write(fd, 'pwned'.encode())\nresult('wrote')\n"
    result = run(code, sandbox, unchecked=True, monkeypatch=monkeypatch)
    assert not result.ok and not target.exists()


def test_no_unapproved_exec_no_processes_even_after_an_escape(sandbox, monkeypatch, tmp_path) -> None:
    target = tmp_path / "touched.txt"
    code = POSIX + f"result(posix.system('touch {target}'))"
    result = run(code, sandbox, unchecked=True, monkeypatch=monkeypatch)
    assert not target.exists()
    assert not result.ok or result.result != 0


def test_no_unapproved_exec_no_network_even_after_an_escape(sandbox, monkeypatch) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    import _socket

    # The escape loads the socket extension module itself (ExtensionFileLoader, found the same way).
    code = POSIX + (
        "efl = [c for c in todo if c.__name__ == 'ExtensionFileLoader'][0]\n"
        "ms = [c for c in todo if c.__name__ == 'ModuleSpec'][0]\n"
        f"loader = efl('_socket', {_socket.__file__!r})\n"
        f"mod = loader.create_module(ms('_socket', loader, origin={_socket.__file__!r}))\n"
        "sock = mod.socket(2, 1)\n"
        f"sock.connect(('127.0.0.1', {port}))\n"
        "result('connected')\n"
    )
    try:
        result = run(code, sandbox, unchecked=True, monkeypatch=monkeypatch)
        with pytest.raises(OSError):
            server.accept()
    finally:
        server.close()
    assert not result.ok or result.result != 0


def test_no_unapproved_exec_cpu_time_is_limited(sandbox, monkeypatch) -> None:
    code = "x = 0\nfor i in range(10**12):\n    x = x + 1\n"  # unchecked: no loop counter
    result = run(code, sandbox, unchecked=True, monkeypatch=monkeypatch,
                 config=cfg(cpu_seconds=1, max_loop_iterations=10**7))
    assert not result.ok and ("CPU" in result.error or "stopped" in result.error)


def test_helper_block_needs_a_sandbox_when_required(tmp_path) -> None:
    box = Sandbox(tmp_path)
    box.config.mode = "off"
    with pytest.raises(runner.HelperUnavailable, match="require_sandbox"):
        asyncio.run(runner.run_block("result(1)", Host(), cfg(), sandbox=box))

"""A secret cut in two by a size limit still does not reach the model.

Redaction recognises a DeepSeek key by its whole shape; `sk-` and 31 of its 32 characters is
not one. `fs.read`'s `max_bytes` is the model's choice, so a hostile model can cut a key one
character short and read all but the last character (then guess 16 values). The same cut
happens where command output is truncated (head and tail kept), where `git.diff` is capped
and where a search hit's line is shortened. Each case checks what the model would be sent
(`ToolOutcome.to_content`, redacted) for any 8-character piece of the key.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.redact import cut_chars, cut_head, cut_tail
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost
from deepseek_ls.tools.search import MAX_LINE
from deepseek_ls.tools.shell import _text

PIECE = 8


def _key() -> str:
    return "sk-" + secrets.token_hex(16)


def _pieces(key: str) -> list[str]:
    body = key[3:]
    return [body[i:i + PIECE] for i in range(len(body) - PIECE + 1)]


def _leaks(key: str, seen: str) -> list[str]:
    return [p for p in _pieces(key) if p in seen]


def _host(root: Path) -> ToolHost:
    return ToolHost(root, Config(policy=PolicyConfig(approval_mode="auto")), sink=ListSink(), overlay=DocumentOverlay(root))


async def test_no_leak_fs_read_max_bytes_cutting_a_key(tmp_path: Path) -> None:
    key = _key()
    line = f'CLIENT = make(key="{key}")\n'
    (tmp_path / "settings.py").write_text("import x\n" + line)
    host = _host(tmp_path)
    start = len("import x\n") + line.index(key)
    for max_bytes in range(start + 1, start + len(key) + 3):
        out = await host.call("fs.read", {"path": "settings.py", "max_bytes": max_bytes})
        assert out.ok, out.error
        assert _leaks(key, out.to_content()) == [], f"max_bytes={max_bytes}: {out.value['content']!r}"


async def test_no_leak_search_hit_line_cut_inside_a_key(tmp_path: Path) -> None:
    keys = []
    lines = []
    for offset in range(-30, 3):  # the key crosses the MAX_LINE'th column at every position
        key = _key()
        keys.append(key)
        pad = MAX_LINE + offset - len("TOKENLINE ")
        lines.append("TOKENLINE " + "x" * pad + " " + key + " tail")
    (tmp_path / "conf.txt").write_text("\n".join(lines) + "\n")
    out = await _host(tmp_path).call("fs.search_rg", {"query": "TOKENLINE"})
    assert out.ok and len(out.value["matches"]) == len(lines)
    seen = out.to_content()
    assert [k for k in keys if _leaks(k, seen)] == []


@pytest.mark.parametrize("shift", range(-12, 13, 3))
def test_no_leak_command_output_cut_inside_a_key(shift: int) -> None:
    """`_text` joins the kept head and tail; the key straddles the head's end, or the tail's start."""
    cap = 200
    half = cap // 2
    key = _key()
    for head_side in (True, False):
        if head_side:
            data = ("a" * (half + shift - 10) + " " + key + " rest").encode()[:half] + b"z" * half
        else:
            data = b"y" * half + (key + " rest of the line\n").encode()[-(half + shift) % half or half:]
        seen = _text(data, 5000, cap)
        from deepseek_ls.policy.redact import redact_text

        assert _leaks(key, redact_text(seen)) == [], seen


@pytest.mark.parametrize(
    ("text", "limit", "want"),
    [
        pytest.param('key="sk-abcdef" x', 12, 'key="', id="inside-a-word"),
        pytest.param("key sk-abc rest", 10, "key sk-abc", id="at-a-word-end"),
        pytest.param("abc def", 100, "abc def", id="no-cut"),
        pytest.param("line one\nline two", 12, "line one\n", id="inside-the-second-line"),
    ],
)
def test_cut_head_leaves_out_only_the_split_word(text: str, limit: int, want: str) -> None:
    assert cut_head(text, limit) == want


def test_cut_tail_and_chars() -> None:
    assert cut_tail("bcdef rest") == " rest"
    assert cut_tail(" rest", cut_inside=False) == " rest"
    assert cut_chars("a " + "b" * 20, 10) == "a "
    assert cut_chars("short", 10) == "short"


def test_a_cut_through_long_data_keeps_the_data() -> None:
    """Minified code or a base64 blob is one long run: cut as it is, not emptied."""
    assert cut_head("x" * 5000, 100) == "x" * 100
    assert cut_chars("y" * 900, MAX_LINE) == "y" * MAX_LINE
    assert cut_tail("z" * 300 + " end") == "z" * 300 + " end"

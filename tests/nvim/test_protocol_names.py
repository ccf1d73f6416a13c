"""The Lua protocol names (nvim/lua/deepseek/protocol.lua) match deepseek_ls/lsp/names.py."""

import re
from pathlib import Path

from deepseek_ls.lsp import names

PROTOCOL_LUA = Path(__file__).resolve().parents[2] / "nvim" / "lua" / "deepseek" / "protocol.lua"


def lua_table(name: str) -> dict[str, str]:
    text = PROTOCOL_LUA.read_text(encoding="utf-8")
    body = re.search(rf"^M\.{name} = \{{\n(.*?)^\}}", text, re.S | re.M)
    assert body, f"M.{name} not found in {PROTOCOL_LUA}"
    return dict(re.findall(r'^\s+(\w+) = "([^"]+)",', body.group(1), re.M))


def test_lua_commands_are_exactly_the_server_commands():
    assert sorted(lua_table("cmd").values()) == sorted(names.ALL_COMMANDS)


def test_lua_requests_match_server_requests():
    expected = {v for k, v in vars(names).items() if k.startswith("REQ_")}
    assert set(lua_table("req").values()) == expected


def test_lua_notifications_match_server_notifications():
    expected = {v for k, v in vars(names).items() if k.startswith("NOTIFY_")}
    assert set(lua_table("notify").values()) == expected

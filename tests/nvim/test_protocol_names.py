"""The Lua protocol names (nvim/lua/deepseek/protocol.lua) match deepseek_ls/lsp/names.py, and the
plugin keeps no session-state vocabulary of its own (deepseek_ls/agent/state.py)."""

import re
from pathlib import Path

from deepseek_ls.agent.state import BUSY_STATES, STATES
from deepseek_ls.lsp import names

PROTOCOL_LUA = Path(__file__).resolve().parents[2] / "nvim" / "lua" / "deepseek" / "protocol.lua"
# A set of states in Lua: `{ Idle = true, Completed = true }`.
STATE_KEY = re.compile(r"\b([A-Z][a-z]+(?:[A-Z][a-z]+)*) = true\b")


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


def test_lua_names_only_server_states_and_no_busy_list():
    """Busy or not comes from `Status.busy`; a state the Lua code names is one the server has."""
    lua = sorted((PROTOCOL_LUA.parent).rglob("*.lua"))
    assert len(lua) > 5
    for path in lua:
        text = path.read_text(encoding="utf-8")
        for state in BUSY_STATES:
            assert f'"{state}"' not in text and f"{state} = true" not in text, f"{path.name} names the busy state {state}"
        for key in STATE_KEY.findall(text):
            assert key in STATES, f"{path.name} names {key}, not a session state of the server"

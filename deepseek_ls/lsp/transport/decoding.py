"""Strict decoding: what a message may hold before pygls sees it.

Params decode field by field with pygls' converter made strict (a string field
gets a string, not `str(42)`), and `decode_problem` says in one line which field
was wrong. The JSON checks find what `json.loads` accepts but we cannot use: a
text nested deeper than the limit (`too_deep`; `Outline` reads the top level of
one too deep for the decoder itself, without recursing, so the request can
still be answered to its id) and strings holding an unpaired UTF-16 surrogate.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import default_converter

from deepseek_ls.lsp.transport.limits import cap


def json_type(value: Any) -> str:
    """The JSON name of `value`'s type, for error messages ("expected a string, got number")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


MAX_URI_CHARS = 4096
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x1f\x7f]*")


def uri_problem(uri: str) -> str | None:
    """Why `uri` is not acceptable as a document URI (None: it is)."""
    if len(uri) > MAX_URI_CHARS:
        return f"a URI of {len(uri)} characters (the limit is {MAX_URI_CHARS})"
    if not _URI.fullmatch(uri):
        return "not a URI (expected scheme:..., e.g. file:///path, without control characters)"
    return None


def _member(value: Any, cls: Any) -> Any:
    """`value` as a member of `cls` when `cls` is one of lsprotocol's enums (they subclass int or
    str, so the hooks below are theirs too) and `value` one of its members; else `value` itself,
    as the client sent it (a newer client's value is not an error)."""
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        try:
            return cls(value)
        except ValueError:
            return value
    return value


def _strict_str(value: Any, cls: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {json_type(value)}")
    return _member(value, cls)


def _strict_int(value: Any, cls: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {json_type(value)}")
    return _member(value, cls)


def _strict_float(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {json_type(value)}")
    return float(value)


def _strict_bool(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {json_type(value)}")
    return value


def strict_converter() -> cattrs.Converter:
    """pygls' converter, but a string field gets a string (not `str(42)`), an
    integer an integer, a boolean a boolean."""
    converter = default_converter()
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    return converter


def decode_problem(error: BaseException, limit: int = 200) -> str:
    """A short reason why params did not decode, naming the field."""
    cause: BaseException = error
    while cause.__cause__ is not None and not isinstance(cause, cattrs.BaseValidationError):
        cause = cause.__cause__
    if isinstance(cause, cattrs.BaseValidationError):

        def fmt(exc: BaseException, _type: Any) -> str:
            if isinstance(exc, KeyError):
                return "required field missing"
            text = str(exc).strip() or type(exc).__name__
            return cap(text, 80)

        try:
            problems = cattrs.transform_error(cause, path="", format_exception=fmt)
        except Exception:  # noqa: BLE001 - the reason is a courtesy
            problems = [str(cause)]
        text = "; ".join(p.replace(" @ $", " at ").replace(" @ ", " at ") for p in problems)
    else:
        text = f"{type(cause).__name__}: {cause}"
    return cap(text, limit)


# -- JSON-RPC shapes and JSON checks ---------------------------------------------------


@functools.lru_cache(maxsize=256)
def is_notification_method(method: str) -> bool:
    """True for an LSP notification method (`exit`, `textDocument/didOpen`, `$/cancelRequest`, ...)."""
    message_type = types.METHOD_TO_TYPES.get(method, (None,))[0]
    return message_type is not None and attrs.has(message_type) and "id" not in attrs.fields_dict(message_type)


def void_result(response_type: Any) -> bool:
    """True when `response_type` (a response message) has a `null` result (e.g. workDoneProgress/create)."""
    if response_type is None or not attrs.has(response_type):
        return False
    field = attrs.fields_dict(response_type).get("result")
    return field is not None and field.type in (None, type(None), "None")


def valid_id(value: Any) -> bool:
    """True for a JSON-RPC request id we answer to: an integer or a string (not a boolean)."""
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def too_deep(value: Any, limit: int) -> bool:
    """True when `value` nests objects and arrays deeper than `limit` levels (read without recursing)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return False


def encodable(value: Any) -> bool:
    """False when a string in `value` holds an unpaired UTF-16 surrogate (no UTF-8 for it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# What the top level of a JSON text is made of, read without recursing: strings
# (which may hold any bracket), brackets and the colons after member names.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:]')
_SCALAR_START = re.compile(r'\s*(?=[^\s\[{])')
_RAW_DECODE = json.JSONDecoder().raw_decode


@dataclass(frozen=True)
class Outline:
    """The top-level object of a JSON text too deep for `json.loads`: its members (the
    value of each, when a scalar such as the id or the method, else `_NO_SCALAR`) and
    the members nesting deeper than the limit."""

    members: dict[str, Any]
    deep_members: frozenset[str]

    @classmethod
    def of(cls, text: str, limit: int) -> Outline:
        members: dict[str, Any] = {}
        deep: set[str] = set()
        depth, member, name = 0, "", None
        for token in _JSON_TOKEN.finditer(text):
            value = token.group()
            if value == ":":
                if depth == 1 and name is not None:
                    member = name  # a repeated member: the last one counts, as in json.loads
                    members[member] = _scalar_at(text, token.end())
                name = None
            elif value in ("{", "["):
                if depth == 0 and value != "{":
                    return cls({}, frozenset())  # not an object: no id to answer
                depth += 1
                if depth > limit:
                    deep.add(member)
                name = None
            elif value in ("}", "]"):
                depth -= 1
                name = None
            else:
                name = _json_string(value) if depth == 1 else None
        return cls(members, frozenset(deep))


_NO_SCALAR = object()


def _scalar_at(text: str, pos: int) -> Any:
    """The string, number, boolean or null starting at `pos` (after blanks), else `_NO_SCALAR`."""
    start = _SCALAR_START.match(text, pos)
    if start is None:
        return _NO_SCALAR
    try:
        return _RAW_DECODE(text, start.end())[0]
    except ValueError:
        return _NO_SCALAR


def _json_string(token: str) -> str | None:
    try:
        return json.loads(token)
    except ValueError:
        return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def may_hold_surrogate(text: str) -> bool:
    """True when the JSON `text` escapes a UTF-16 surrogate (then check the decoded value with `encodable`)."""
    return _SURROGATE_ESCAPE.search(text) is not None

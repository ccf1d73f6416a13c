"""Redaction over real code: the Python standard library is full of `token`, `password` and
`key` identifiers and holds no secrets, so (almost) nothing in it may be redacted."""

from __future__ import annotations

import json
import re
import sysconfig
from collections import Counter
from pathlib import Path

import pytest

from deepseek_ls.policy.redact import redact_obj, redact_text
from deepseek_ls.policy.secret_files import secret_kind

STDLIB = Path(sysconfig.get_paths()["stdlib"])
_MASK = re.compile(r"\[REDACTED:([a-z0-9_-]+)\]")

# Test data that really has the shape of a credential: URLs with a user:password part, base64
# blobs as wide as a PEM body, a netrc file. Everything else in the stdlib must pass untouched.
KNOWN = {
    ("test/test_urllib2.py", "basic_auth"), ("test/test_urlparse.py", "basic_auth"),
    ("test/test_urllib.py", "basic_auth"), ("test/test_urllib2net.py", "basic_auth"),
    ("test/test_gettext.py", "private_key"), ("test/test_email/test_contentmanager.py", "private_key"),
    ("test/test_tokenize.py", "keyword"),
}


def _sources() -> list[Path]:
    return sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts)


def test_stdlib_is_not_redacted() -> None:
    files = _sources()
    assert len(files) > 500, f"expected the stdlib sources under {STDLIB}"
    found: Counter[tuple[str, str]] = Counter()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for rule in _MASK.findall(redact_text(text)):
            found[(path.relative_to(STDLIB).as_posix(), rule)] += 1
    unexpected = {k: n for k, n in found.items() if k not in KNOWN}
    print(f"stdlib redaction: {len(files)} files, {sum(found.values())} redactions, "
          f"{sum(unexpected.values())} outside the known test data")
    assert unexpected == {}


def test_stdlib_files_are_not_taken_for_credential_files() -> None:
    hits = {}
    for path in _sources():
        try:
            kind = secret_kind(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
        if kind:
            hits[path.relative_to(STDLIB).as_posix()] = kind
    assert set(hits) <= {"test/test_netrc.py"}, hits  # netrc test data is a netrc file


CODE_LINES = [
    "max_tokens = cfg.max_tokens_per_request",
    'token_type = "bare-quoted-string"',
    "if token == START_ELEMENT:",
    "password_file = settings.password_file_path",
    "self.api_key = api_key or os.environ.get('DEEPSEEK_API_KEY')",
]


@pytest.mark.parametrize("line", CODE_LINES)
def test_code_is_unchanged_in_a_json_encoded_tool_result(line: str) -> None:
    # Tool results are JSON: `\n` and `\"` used to glue code into look-alike secret values.
    result = {"path": "a.py", "content": f"def f(cfg):\n    {line}\n    return {{\"a\": 1}}\n"}
    assert redact_obj(result) == result
    encoded = json.dumps(result)
    assert redact_obj({"role": "tool", "content": encoded})["content"] == encoded


def test_secret_inside_a_json_encoded_tool_result_is_redacted_with_its_edges() -> None:
    secret = "Zx8Qw2Lp9Rt5Yu3I"
    encoded = json.dumps({"content": f'DB = {{"password": "{secret}"}}\nnext = 1\n'})
    out = redact_obj({"role": "tool", "content": encoded})["content"]
    assert secret not in out
    assert json.loads(out)["content"].endswith("\nnext = 1\n")

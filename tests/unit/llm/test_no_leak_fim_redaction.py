"""The FIM request's text is redacted block by block (llm/fim.redact_blocks, cached for speed on
every keystroke): the same masks as redacting the whole text, for every key family, a PEM key
across blank lines, and a credential registered after a block was cached."""

from __future__ import annotations

import random

import pytest

from deepseek_ls.llm.fim import redact_blocks
from deepseek_ls.policy.redact import redact_text, register_secret
from deepseek_ls.testkit.secret_shapes import FAMILIES, draw, line, pieces

CODE = "def total(items):\n    return sum(items)\n"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_leak_fim_blocks_mask_what_the_whole_text_masks(family: str) -> None:
    rng = random.Random(family)
    for _ in range(20):
        key = draw(family, rng)
        for text in (f"{CODE}\n{line(family, key)}\n\n{CODE}", f"{CODE}{line(family, key)}\n{CODE}\n\nx = ("):
            out = redact_blocks(text)
            assert out == redact_text(text)
            assert not pieces(key) & pieces(out), out


def test_no_leak_fim_pem_key_split_by_a_blank_line() -> None:
    body = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgwMbRvI0MBZhpF\n" * 4
    text = (f"{CODE}\nKEY = '''-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n{body}"
            "-----END RSA PRIVATE KEY-----'''\n\n" + CODE)
    out = redact_blocks(text)
    assert out == redact_text(text) and "MIIEowIBAAKCAQEA0Z3VS5JJ" not in out


def test_no_leak_fim_a_credential_registered_after_its_block_was_cached() -> None:
    value = "local-model-credential-" + "q7Zp" * 4  # no shape a rule knows: masked only once registered
    text = f"{CODE}\ntitle = {value!r}\n\nx = 1"
    assert value in redact_blocks(text)  # not a secret yet
    register_secret(value)
    assert value not in redact_blocks(text)

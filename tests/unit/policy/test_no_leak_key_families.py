"""No 8-character piece of a real-shaped key survives redaction, for ≥ 1,000 random keys of
each family (`testkit/secret_shapes.py`), each in the line such a key is found in.

The request-body and event-log paths are tested the same way end to end in
`tests/scenarios/test_no_leak_key_families_paths.py`; this is the detector alone, cheap enough
to draw many keys.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.policy.redact import redact_obj, redact_text
from deepseek_ls.testkit.secret_shapes import FAMILIES, draw, line, pieces

# Hypothesis draws a seed (a failure is reported with the seed that reproduces it); each example
# draws a batch of keys from a generator seeded with it: 20 x 50 = 1,000 keys per family, at a fraction of
# the cost of 1,000 Hypothesis examples.
EXAMPLES, BATCH = 20, 50


def _leaked(key: str, out: str) -> set[str]:
    return pieces(key) & pieces(out)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_leak_random_keys_of_each_family(family: str) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, database=None)
    @given(st.integers(0, 2**64))
    def check(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(BATCH):
            key = draw(family, rng)
            text = line(family, key)
            assert not _leaked(key, redact_text(text)), redact_text(text)
            # The same line inside a JSON-encoded tool result (the request-body form).
            assert not _leaked(key, str(redact_obj({"content": text})))

    check()


def test_no_leak_openai_project_key_whose_window_another_detector_masks() -> None:
    # detect-secrets' OpenAI pattern masks `sk-…` up to 20 characters after `T3BlbkFJ`; masked
    # first, the project-key rule no longer matched and the 54 characters after it were sent.
    key = "sk-proj-" + "A1b2C3d4E5" * 7 + "F6g7" + "T3BlbkFJ" + "H8i9J0k1L2" * 2 + "-" + "m3N4o5P6q7" * 5 + "R8s"
    out = redact_text(f"OPENAI_API_KEY={key}\n")
    assert out == "OPENAI_API_KEY=[REDACTED:openai]\n"


def test_overlapping_detectors_mask_once() -> None:
    # A key that is also a keyword assignment's value: one mask, not two glued ones.
    out = redact_text("api_key = sk-" + "0123456789abcdef" * 2 + "\n")
    assert out.count("[REDACTED") == 1


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        # 40 random base64 characters can all be letters (1 draw in 4,000): it was taken for a name.
        pytest.param("aws_secret_access_key = KRDxNpJhLWyyQUpSBBKsYUyxGdFQsntKdICRTuSo\n",
                     "KRDxNpJhLWyyQUpSBBKsYUyxGdFQsntKdICRTuSo", id="letters-only-aws-secret"),
        # A dotenv line's value is text, never a name: a passphrase of capitalised words.
        pytest.param("MAIL_PASSWORD=CorrectHorseBatteryStaple\n", "CorrectHorseBatteryStaple", id="dotenv-passphrase"),
        pytest.param("export DB_PASSWORD=CorrectHorseBatteryStaple", "CorrectHorseBatteryStaple", id="export-passphrase"),
    ],
)
def test_no_leak_values_that_look_like_words(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


@pytest.mark.parametrize("text", ["password = PasswordHasher\n", "token_cls = getHTTPToken\n", "SECRET_KEY=SECRET_KEY\n",
                                  "auth_token: BearerTokenAuth\n"])
def test_names_under_a_secret_name_are_kept(text: str) -> None:
    assert redact_text(text) == text

"""Redaction corpus: for every rule, a secret that is caught and a look-alike that is not.

Secrets are assembled from pieces so this file does not itself look like a leak.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deepseek_ls.policy.redact import redact_obj, redact_text

PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7abc\nQWERTY123\n-----END RSA " + "PRIVATE KEY-----"
OPENSSH = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH " + "PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

TRUE_POSITIVES = [
    pytest.param(f"key:\n{PEM}\nafter", "private_key", PEM, id="private-key-rsa-block"),
    pytest.param(f"{OPENSSH}\n", "private_key", "b3BlbnNzaC1rZXktdjEAAAAA", id="private-key-openssh"),
    pytest.param("id = " + "AKIA" + "IOSFODNN7EXAMPLE", "aws", "AKIAIOSFODNN7EXAMPLE", id="aws-access-key-id"),
    pytest.param('aws_secret_access_key = "' + "wJalrXUtnFEMI/K7MDENG/" + 'bPxRfiCYEXAMPLEKEY"', "aws", "bPxRfiCYEXAMPLEKEY", id="aws-secret-key"),
    pytest.param("GH=" + "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "github", "ghp_A1b2", id="github-classic"),
    pytest.param("github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF", "github", "github_pat_11ABC", id="github-fine-grained"),
    pytest.param("glpat-" + "xYz123AbC456dEf789gh", "gitlab", "glpat-xYz", id="gitlab-pat"),
    pytest.param("xoxb-" + "1234567890-0987654321-abcdefghijkl", "slack", "xoxb-1234", id="slack-bot-token"),
    pytest.param("https://hooks.slack.com/services/" + "T01234567/B01234567/abcdefghijklmnop", "slack", "T01234567/B0", id="slack-webhook"),
    pytest.param("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe", "sk_live_4eC", id="stripe-live"),
    pytest.param("rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe", "rk_test_4eC", id="stripe-test-restricted"),
    pytest.param("key=AIza" + "SyD-abcdefghijklmnopqrstuvwxyz012345", "google", "AIzaSyD", id="google-api-key"),
    pytest.param("ya29." + "a0AfH6SMBx1234567890abcdefghij", "google", "ya29.a0Af", id="google-oauth"),
    pytest.param("sk-" + "abcdefghijklmnopqrstT3BlbkFJ" + "abcdefghijklmnopqrst", "openai", "T3BlbkFJ", id="openai-legacy"),
    pytest.param("OPENAI_API_KEY=sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12", "openai", "sk-proj-Ab12", id="openai-project"),
    pytest.param("DEEPSEEK_API_KEY=sk-" + "0123456789abcdef0123456789abcdef", "deepseek", "0123456789abcdef", id="deepseek"),
    pytest.param("key: sk-" + "Zq8Lm3Np7Rt2Vx6Bw1Ky5Hj9Df4Gs0Ac", "api_key", "Zq8Lm3Np", id="generic-sk-key"),
    pytest.param(f"cookie {JWT}", "jwt", "SflKxwRJ", id="jwt"),
    pytest.param("Authorization: Bearer " + "abcDEF123ghiJKL456mnoPQR789", "bearer", "abcDEF123", id="bearer-header"),
    pytest.param("postgres://admin:" + "Tr0ub4dor3xq@db.local/app", "basic_auth", "Tr0ub4dor3xq", id="basic-auth-url"),
    pytest.param('password = "' + "hunter2Xy9q!" + '"', "keyword", "hunter2Xy9q", id="keyword-password"),
    pytest.param('{"client_secret": "' + "8dJ2kLq9ZxW4mN7pR3tV" + '"}', "keyword", "8dJ2kLq9", id="keyword-json-secret"),
    pytest.param("export MY_SERVICE_TOKEN=" + "a8F3kd92LmQ0zX7w", "keyword", "a8F3kd92", id="keyword-env-token"),
    pytest.param("db_passwd: " + "Qw3rTy!9zXc", "keyword", "Qw3rTy", id="keyword-yaml-passwd"),
]


@pytest.mark.parametrize(("text", "rule", "secret_fragment"), TRUE_POSITIVES)
def test_secret_is_redacted(text: str, rule: str, secret_fragment: str) -> None:
    out = redact_text(text)
    assert secret_fragment not in out
    assert f"[REDACTED:{rule}]" in out


FALSE_POSITIVES = [
    pytest.param("-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----", id="private-key-vs-public-key"),
    pytest.param("AKIA is the prefix of AWS access key ids", id="aws-prefix-in-prose"),
    pytest.param('aws_region = "us-east-1"', id="aws-non-secret-setting"),
    pytest.param("ghp_short is not a token", id="github-too-short"),
    pytest.param("see github_pat_docs for details", id="github-pat-docs"),
    pytest.param("glpat-short", id="gitlab-too-short"),
    pytest.param("the xoxb- prefix marks bot tokens", id="slack-prefix-only"),
    pytest.param("sk_live_ is the Stripe live prefix", id="stripe-prefix-only"),
    pytest.param("AIzaShortValue", id="google-too-short"),
    pytest.param("task-1234 and sk-learn are fine", id="sk-in-words"),
    pytest.param("scikit: sk-abc123", id="sk-short"),
    pytest.param("eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token", id="jwt-header-only"),
    pytest.param("Bearer tokens are sent in the Authorization header", id="bearer-prose"),
    pytest.param("https://example.com/path:8080/x", id="url-without-credentials"),
    pytest.param("password = get_password()", id="keyword-function-call"),
    pytest.param("token = os.environ.GITHUB_TOKEN", id="keyword-dotted-reference"),
    pytest.param('secret = "${SECRET_FROM_ENV}"', id="keyword-env-placeholder"),
    pytest.param('password = "changeme123"', id="keyword-placeholder"),
    pytest.param("max_tokens = 4096", id="keyword-number"),
    pytest.param("num_tokens = count_tokens", id="keyword-identifier"),
    pytest.param("tokenizer: whitespace_split", id="keyword-low-entropy"),
]


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_look_alike_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_redact_obj_walks_request_bodies_and_keeps_non_strings() -> None:
    body = {
        "model": "deepseek-chat",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "my key is sk-" + "0123456789abcdef0123456789abcdef"},
            {"role": "tool", "content": "ok"},
        ],
        "api_key": "Zx8Qw2Lp9Rt5Yu3I",
        "token": "progress-1",
        "stream": True,
    }
    out = redact_obj(body)
    assert out["messages"][0]["content"] == "my key is [REDACTED:deepseek]"
    assert out["api_key"] == "[REDACTED:keyword]"
    assert out["token"] == "progress-1"  # an LSP progress token is not a secret
    assert out["max_tokens"] == 100 and out["stream"] is True
    assert body["api_key"] == "Zx8Qw2Lp9Rt5Yu3I"  # the input is not mutated


def test_redact_text_accepts_a_body_dict() -> None:
    # The LLM client's hook may be given redact_text; it must not break on a dict.
    assert redact_text({"a": ["sk-" + "0123456789abcdef0123456789abcdef"]}) == {"a": ["[REDACTED:deepseek]"]}


def test_redaction_is_idempotent() -> None:
    once = redact_text(f"{PEM}\npassword = 'hunter2Xy9q!'")
    assert redact_text(once) == once


def test_text_whose_lowercase_changes_length_is_still_redacted() -> None:
    # "İ".lower() is two characters: the keyword scan must not use shifted offsets.
    text = "İİİ note\npassword = 'hunter2Xy9q!' # İ"
    out = redact_text(text)
    assert "hunter2Xy9q" not in out and out.startswith("İİİ note\npassword = '[REDACTED:keyword]'")


SECRETISH = st.sampled_from(["password = ", "token: ", "sk-", "AKIA", "ghp_", "eyJ", "Bearer ", "://u:", "@", "'", '"', "\n", " "])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(SECRETISH, st.text(min_size=0, max_size=12)), max_size=30))
def test_redaction_never_fails_and_is_idempotent(pieces: list[str]) -> None:
    text = "".join(pieces)
    once = redact_text(text)
    assert isinstance(once, str)
    assert redact_text(once) == once


# Values of secret-named settings that were sent to the model: weak passwords, and random
# values whose repeated characters kept them under the entropy gate (1 in 60 of this shape;
# the scenario corpus's random canary `Zx9` + 14 hex characters met one in a full run).
WEAK = ["hunter22", "s3cr3t99", "Passw0rd1", "Zx9334339810e3344", "Qw3447379731c3341", "abc12345"]


@pytest.mark.parametrize("value", WEAK)
@pytest.mark.parametrize(
    "line",
    [
        pytest.param('{{"db": {{"password": "{v}"}}}}', id="json"),
        pytest.param("db:\n  password: {v}\n", id="yaml"),
        pytest.param('API_TOKEN = "{v}"', id="assignment"),
    ],
)
def test_no_leak_a_weak_or_repetitive_secret_value_is_redacted(line: str, value: str) -> None:
    text = line.format(v=value)
    assert value not in redact_text(text)
    assert "[REDACTED:keyword]" in redact_text(text)


def test_no_leak_random_values_of_the_scenario_canary_shape_are_all_redacted() -> None:
    import random

    rng = random.Random(14)
    for _ in range(3000):
        value = "Zx9" + "".join(rng.choice("0123456789abcdef") for _ in range(14))
        assert value not in redact_text(f'{{"password": "{value}"}}'), value


@pytest.mark.parametrize("value", ["progress-1", "aaaa1111", "v1.2.3.4.5", "2024-01-01"])
def test_names_and_numbers_under_a_secret_name_are_kept(value: str) -> None:
    text = f'token = "{value}"'
    assert redact_text(text) == text

"""Real-shaped secrets of each family, drawn at random, for the never-leak property tests.

A family is a sequence of parts: literal text (a prefix, a separator) and random runs over the
alphabet that family uses, with the lengths real keys have (an OpenAI project key is `sk-proj-`,
74 characters, `T3BlbkFJ`, 74 more). `LINES` puts each key where such a key is found (an env
file's line, a header, a config value), since some formats are recognised only by context
(an AWS secret access key is 40 base64 characters and nothing else).

`draw(family, rng)` builds one key from a `random.Random`; `strategy(family)` is the same as a
Hypothesis strategy (imported only by the tests that use it).
"""

from __future__ import annotations

import random
import string
from typing import Any, Union

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"

Run = tuple[str, int, int]  # alphabet, min length, max length
Part = Union[str, Run]

FAMILIES: dict[str, tuple[Part, ...]] = {
    "openai_project": ("sk-proj-", (URLSAFE, 74, 74), "T3BlbkFJ", (URLSAFE, 74, 74)),
    "openai_service": ("sk-svcacct-", (URLSAFE, 74, 74), "T3BlbkFJ", (URLSAFE, 74, 74)),
    "openai_legacy": ("sk-", (ALNUM, 20, 20), "T3BlbkFJ", (ALNUM, 20, 20)),
    "anthropic": ("sk-ant-api03-", (URLSAFE, 93, 93), "AA"),
    "deepseek": ("sk-", (HEX, 32, 32)),
    "sendgrid": ("SG.", (URLSAFE, 22, 22), ".", (URLSAFE, 43, 43)),
    "slack_bot": ("xoxb-", (string.digits, 10, 13), "-", (string.digits, 10, 13), "-", (ALNUM, 24, 24)),
    "slack_user": ("xoxp-", (string.digits, 10, 13), "-", (string.digits, 10, 13), "-",
                   (string.digits, 10, 13), "-", (HEX, 32, 32)),
    "slack_webhook": ("https://hooks.slack.com/services/T", (UPPER32, 8, 10), "/B", (UPPER32, 8, 10), "/",
                      (ALNUM, 24, 24)),
    "stripe_live": ("sk_live_", (ALNUM, 24, 99)),
    "stripe_restricted": ("rk_live_", (ALNUM, 24, 99)),
    "stripe_test": ("sk_test_", (ALNUM, 24, 99)),
    "github_classic": ("ghp_", (ALNUM, 36, 36)),
    "github_oauth": ("gho_", (ALNUM, 36, 36)),
    "github_app": ("ghs_", (ALNUM, 36, 36)),
    "github_fine_grained": ("github_pat_", (ALNUM, 22, 22), "_", (ALNUM, 59, 59)),
    "gitlab_pat": ("glpat-", (URLSAFE, 20, 20)),
    "aws_access_key_id": ("AKIA", (UPPER32, 16, 16)),
    "aws_secret_access_key": ((B64, 40, 40),),
    "gcp_api_key": ("AIza", (URLSAFE, 35, 35)),
    "gcp_oauth_token": ("ya29.", (URLSAFE, 60, 180)),
    "azure_storage_key": ((B64, 86, 86), "=="),
    "azure_ad_client_secret": ((ALNUM, 3, 3), (string.digits, 1, 1), "Q~", (URLSAFE + ".~", 31, 34)),
    "huggingface": ("hf_", (string.ascii_letters, 34, 34)),
    "npm": ("npm_", (ALNUM, 36, 36)),
    "pypi": ("pypi-AgEIcHlwaS5vcmc", (URLSAFE, 70, 200)),
    "jwt": ("eyJ", (URLSAFE, 20, 60), ".eyJ", (URLSAFE, 20, 200), ".", (URLSAFE, 43, 43)),
    "private_key_body": ((B64, 64, 64), "\n", (B64, 64, 64), "\n", (B64, 64, 64), "\n", (B64, 20, 63)),
}

# Where each family is found: "{k}" is the key. Families not named here use an env file's line.
LINES: dict[str, str] = {
    "aws_secret_access_key": "aws_secret_access_key = {k}\n",
    "azure_storage_key": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={k};EndpointSuffix=core.windows.net\n",
    "azure_ad_client_secret": 'AZURE_CLIENT_SECRET="{k}"\n',
    "jwt": "Cookie: session={k}\n",
    "slack_webhook": 'webhook_url: "{k}"\n',
    "private_key_body": "-----BEGIN RSA " + "PRIVATE KEY-----\n{k}\n-----END RSA " + "PRIVATE KEY-----\n",
}


def line(family: str, key: str) -> str:
    """`key` in the context such a key is found in."""
    return LINES.get(family, f"{family.upper()}_CREDENTIAL={{k}}\n").replace("{k}", key)


def draw(family: str, rng: random.Random) -> str:
    out = []
    for part in FAMILIES[family]:
        if isinstance(part, str):
            out.append(part)
        else:
            alphabet, low, high = part
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(low, high))))
    return "".join(out)


def strategy(family: str) -> Any:
    """A Hypothesis strategy for keys of `family`."""
    from hypothesis import strategies as st

    parts = [st.just(p) if isinstance(p, str) else st.text(p[0], min_size=p[1], max_size=p[2])
             for p in FAMILIES[family]]
    return st.tuples(*parts).map("".join)


def pieces(key: str, width: int = 8) -> set[str]:
    """Every `width`-character piece of `key` (line breaks of a key body are not pieces)."""
    return {key[i:i + width] for i in range(len(key) - width + 1) if "\n" not in key[i:i + width]}

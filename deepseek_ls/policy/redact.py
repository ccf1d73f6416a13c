"""Secret redaction for everything sent to a model or written to the event log.

Rules come from detect-secrets' maintained detectors where it has them (AWS,
GitHub, GitLab, Slack, Stripe, OpenAI, basic-auth URLs) plus rules it lacks:
PEM private-key blocks, Google API keys and OAuth tokens, DeepSeek and other
`sk-` keys, fine-grained GitHub tokens, Stripe test keys, JWTs, bearer tokens,
and high-entropy values assigned to names like password / secret / token /
api_key. A secret is replaced by `[REDACTED:<rule>]`; the text around it is
kept so the model still sees the structure.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.stripe import StripeDetector


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    # Lower-case literals one of which every match contains. A rule whose needles
    # are all absent is skipped: `in` is far cheaper than a regex scan, and most
    # text contains no secret at all.
    needles: tuple[str, ...] = ()


def _from_detector(name: str, detector: type, needles: tuple[str, ...], groups: dict[int, int] | None = None) -> list[Rule]:
    return [Rule(name, rx, (groups or {}).get(i, 0), needles) for i, rx in enumerate(detector.denylist)]


_KEY_NAMES = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?"
)

RULES: list[Rule] = [
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----.*?(?:-----END \1PRIVATE KEY\2-----|\Z)",
            re.DOTALL,
        ),
        needles=("private key",),
    ),
    *_from_detector("aws", AWSKeyDetector, ("akia", "asia", "abia", "acca", "a3t", "aws"), {1: 1}),
    Rule("github", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), needles=("github_pat_",)),
    *_from_detector("github", GitHubTokenDetector, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    *_from_detector(
        "gitlab",
        GitLabTokenDetector,
        ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"),
    ),
    *_from_detector("slack", SlackDetector, ("xox", "hooks.slack.com")),
    *_from_detector("stripe", StripeDetector, ("k_live_",)),
    Rule("stripe", re.compile(r"\b(?:sk|rk)_test_[0-9a-zA-Z]{24,}"), needles=("k_test_",)),
    Rule("google", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), needles=("aiza",)),
    Rule("google", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"), needles=("ya29.",)),
    *_from_detector("openai", OpenAIDetector, ("t3blbkfj",)),
    Rule("openai", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"), needles=("sk-",)),
    Rule("deepseek", re.compile(r"\bsk-[a-f0-9]{32}\b"), needles=("sk-",)),
    Rule("api_key", re.compile(r"\bsk-[A-Za-z0-9]{32,}\b"), needles=("sk-",)),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), needles=("eyj",)),
    Rule("bearer", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)"), 1, ("bearer",)),
    *_from_detector("basic_auth", BasicAuthDetector, ("://",), {0: 1}),
]

_ALL_NEEDLES = sorted({n for rule in RULES for n in rule.needles})

# name = value, name: value, "name": "value", NAME := value, name => value.
# Found keyword-first (the keyword scan is cheap), then the rest is matched from
# the end of the keyword; only the value is replaced.
_KEYWORD = re.compile(r"(?i)" + _KEY_NAMES)
# The same names, factored and lower-case: run on `text.lower()` it is an order of
# magnitude faster than the case-insensitive alternation.
_KEYWORD_LOWER = re.compile(
    r"pa(?:ssword|sswd|ssphrase)|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credential"
)
_ASSIGNMENT_TAIL = re.compile(
    r"[A-Za-z0-9_]*(?P<sep>[\"']?\s*(?::=|=>|==|=|:)\s*)(?P<q>[\"'`]?)(?P<value>[^\s\"'`,;]{8,})"
)
_SECRET_KEY = re.compile(r"(?i)^[A-Za-z0-9_.\-]*(?:" + _KEY_NAMES + r"|authorization)[A-Za-z0-9_]*$")
_DOTTED_REF = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PLACEHOLDERS = ("changeme", "password", "xxxxxxxx", "********", "redacted", "example", "placeholder", "your_")


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def looks_like_secret_value(value: str) -> bool:
    """High-entropy, not code (`get_token()`, `os.environ.KEY`, `${VAR}`), not a placeholder."""
    if len(value) < 8 or "[REDACTED" in value:
        return False
    if any(c in value for c in "(){}<>[]$%") or _DOTTED_REF.fullmatch(value):
        return False
    if value.isdigit() or value.lower() in ("true", "false", "none", "null"):
        return False
    low = value.lower()
    if any(p in low for p in _PLACEHOLDERS):
        return False
    if re.fullmatch(r"[a-z_]+|[A-Z_]+", value):  # an identifier or constant name, not a secret
        return False
    return shannon_entropy(value) >= 3.0


def _mask(rule: str) -> str:
    return f"[REDACTED:{rule}]"


def redact_text(text: Any) -> Any:
    """`text` with every detected secret replaced by `[REDACTED:<rule>]`.

    Given something other than a string (a request body dict), redacts it like `redact_obj`.
    """
    if not isinstance(text, str):
        return redact_obj(text)
    if not text:
        return text
    lowered = text.lower()
    present = {n for n in _ALL_NEEDLES if n in lowered}
    for rule in RULES:
        if rule.needles and present.isdisjoint(rule.needles):
            continue
        text = _apply_rule(rule, text)
    return _redact_assignments(text)


def _apply_rule(rule: Rule, text: str) -> str:
    def replace(m: re.Match[str]) -> str:
        if rule.group == 0 or m.group(rule.group) is None:
            return _mask(rule.name)
        start, end = m.span(rule.group)
        whole_start = m.start()
        return m.group(0)[: start - whole_start] + _mask(rule.name) + m.group(0)[end - whole_start :]

    return rule.pattern.sub(replace, text)


def _redact_assignments(text: str) -> str:
    out: list[str] = []
    pos = 0
    lowered = text.lower()
    # lower() keeps offsets unless the text has characters like "İ" that lower to two.
    keys = _KEYWORD_LOWER.finditer(lowered) if len(lowered) == len(text) else _KEYWORD.finditer(text)
    for key in keys:
        if key.start() < pos:
            continue
        tail = _ASSIGNMENT_TAIL.match(text, key.end())
        if tail is None or not looks_like_secret_value(tail.group("value")):
            continue
        start, end = tail.span("value")
        out.append(text[pos:start])
        out.append(_mask("keyword"))
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact_obj(obj: Any) -> Any:
    """A copy of `obj` (dicts, lists, strings) with secrets redacted; other values unchanged.

    A string stored under a secret-looking key (`api_key`, `password`, `authorization`) is
    redacted whole when it looks like a secret value.
    """
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if (
                isinstance(key, str)
                and isinstance(value, str)
                and _SECRET_KEY.match(key)
                and looks_like_secret_value(value.split()[-1] if value.split() else value)
            ):
                out[key] = _mask("keyword")
            else:
                out[key] = redact_obj(value)
        return out
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_obj(v) for v in obj)
    return obj

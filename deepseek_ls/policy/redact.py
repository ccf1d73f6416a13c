"""Secret redaction for everything sent to a model or written to the event log.

Rules are data from detect-secrets' maintained plugin set (every plugin with a
regex denylist: AWS, Azure storage, GitHub, GitLab, Slack, Stripe, OpenAI,
SendGrid, Mailchimp, npm, PyPI, Square, Telegram, Twilio, Discord, basic-auth
URLs, ...; see `_DETECT_SECRETS`), plus rules it lacks: PEM private keys whole
*and in part* (a line range, a search hit or an error message quoting body
lines), Azure connection strings and SAS signatures, Google API keys and OAuth
tokens, DeepSeek and other `sk-` keys, fine-grained GitHub tokens, Stripe test
keys, Hugging Face and npm tokens, JWTs, bearer tokens, and high-entropy values
assigned to names like password / secret / token / api_key. A secret is
replaced by `[REDACTED:<rule>]`; the text around it is kept so the model still
sees the structure.

Structured values (tool results, request bodies) are redacted field by field
with `redact_obj` *before* they are encoded: in JSON text `\"` and `\n` hide a
secret's boundaries and glue code into look-alike values. A string that is
itself a JSON document is redacted the same way, decoded.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

from deepseek_ls.policy.rule_set import rule_set


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    # Lower-case literals one of which every match contains. A rule whose needles
    # are all absent is skipped: `in` is far cheaper than a regex scan, and most
    # text contains no secret at all.
    needles: tuple[str, ...] = ()
    # A cheap case-sensitive pattern every match contains, searched first (for rules
    # whose needles would be too common, e.g. "AKC" / "AP[0-9A-F]").
    prefilter: re.Pattern[str] | None = None


_PREFILTERS = {
    "artifactory": re.compile(r"AKC[a-zA-Z0-9]{10}|AP[\dABCDEF][a-zA-Z0-9]{8}"),
    "telegram": re.compile(r"[0-9]:[0-9A-Za-z_-]{35}"),
    "discord": re.compile(r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}"),
    "twilio": re.compile(r"[AS][CK][a-z0-9]{32}"),
}


# detect-secrets plugins by class name: (our rule name, needles, {pattern index: secret group}).
# Plugins not listed here but present in the installed detect-secrets are used with
# their class name and no needles, so a new release's detectors apply at once.
_DETECT_SECRETS: dict[str, tuple[str, tuple[str, ...], dict[int, int]]] = {
    "AWSKeyDetector": ("aws", ("akia", "asia", "abia", "acca", "a3t", "aws"), {1: 1}),
    "AzureStorageKeyDetector": ("azure", ("accountkey",), {}),
    "GitHubTokenDetector": ("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), {}),
    "GitLabTokenDetector": ("gitlab", ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-"), {}),
    "SlackDetector": ("slack", ("xox", "hooks.slack.com"), {}),
    "StripeDetector": ("stripe", ("k_live_",), {}),
    "OpenAIDetector": ("openai", ("t3blbkfj",), {}),
    "SendGridDetector": ("sendgrid", ("sg.",), {}),
    "MailchimpDetector": ("mailchimp", ("-us",), {}),
    "NpmDetector": ("npm", ("_authtoken",), {0: 1}),
    "PypiTokenDetector": ("pypi", ("pypi-",), {}),
    "SquareOAuthDetector": ("square", ("sq0csp-",), {}),
    "TelegramBotTokenDetector": ("telegram", (), {}),
    "TwilioKeyDetector": ("twilio", (), {}),
    "DiscordBotTokenDetector": ("discord", (), {}),
    "ArtifactoryDetector": ("artifactory", (), {}),
    "SoftlayerDetector": ("softlayer", ("softlayer", "sl_", "sl-", "slapi", "slkey", "slpass", "slpwd", "sltoken"), {0: 1, 1: 1}),
    "IbmCosHmacDetector": ("ibm", ("secret_access", "secret-access", "secretaccess", "secret_key", "secret-key", "secretkey"), {0: 1}),
    "CloudantDetector": (
        "cloudant", ("cloudant", "clou", "cl_", "cl-", "clapi", "clkey", "clpw", "clpass", "cltoken"), {0: 1, 1: 1, 2: 1, 3: 1}
    ),
    "BasicAuthDetector": ("basic_auth", ("://",), {0: 1}),
}
# Not regex rules, or covered better below: keyword/entropy scanners (our keyword rule),
# public IPs (not secrets), IBM IAM (matches the keyword alone), JWT and PEM (own rules).
_DETECT_SECRETS_SKIPPED = {
    "KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector",
    "IbmCloudIamDetector", "JwtTokenDetector", "PrivateKeyDetector",
}


def _detect_secrets_rules() -> list[Rule]:
    rules = []
    for cls in sorted(get_mapping_from_secret_type_to_class().values(), key=lambda c: c.__name__):
        if cls.__name__ in _DETECT_SECRETS_SKIPPED:
            continue
        name, needles, groups = _DETECT_SECRETS.get(cls.__name__, (cls.__name__.lower(), (), {}))
        for i, rx in enumerate(getattr(cls, "denylist", ()) or ()):
            rules.append(Rule(name, rx, groups.get(i, 0), needles, _PREFILTERS.get(name)))
    return rules


_KEY_NAMES = (
    r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?"
)
_B64 = r"[A-Za-z0-9+/]"

RULES: list[Rule] = [
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----.*?(?:-----END \1PRIVATE KEY\2-----|\Z)",
            re.DOTALL,
        ),
        needles=("private key",),
    ),
    # A key's body without its BEGIN line (a line range, a search hit): base64 lines up to END.
    Rule(
        "private_key",
        re.compile(r"(?:^[ \t+\-\"']*" + _B64 + r"[A-Za-z0-9+/=]{15,}[\"',]*\s*?\n)+[ \t+\-\"']*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", re.M),
        needles=("private key",),
    ),
    # Lines of a key's body on their own: exactly the PEM (64) or OpenSSH (70) width, base64 with
    # upper case, lower case and digits, nothing else on the line but quotes or a diff marker.
    Rule(
        "private_key",
        re.compile(
            r"(?m)^[ \t+\-\"']*((?=[A-Za-z0-9+/]*[0-9])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])"
            r"(?:" + _B64 + r"{64}|" + _B64 + r"{70}|" + _B64 + r"{76}))(?:\\n)?[\"',]*[ \t]*$"
        ),
        group=1,
        prefilter=re.compile(_B64 + r"{64}"),
    ),
    *_detect_secrets_rules(),
    # Azure: storage / Service Bus connection strings and SAS signatures, any key length.
    Rule("azure", re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*([^;\s\"']{16,})"), 1, ("accountkey", "sharedaccesskey")),
    Rule("azure", re.compile(r"(?i)[?&]sig=([A-Za-z0-9%+/=]{20,})"), 1, ("sig=",)),
    Rule("github", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), needles=("github_pat_",)),
    Rule("stripe", re.compile(r"\b(?:sk|rk)_test_[0-9a-zA-Z]{24,}"), needles=("k_test_",)),
    Rule("google", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), needles=("aiza",)),
    Rule("google", re.compile(r"\bya29\.[0-9A-Za-z_\-]{20,}"), needles=("ya29.",)),
    Rule("huggingface", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), needles=("hf_",)),
    Rule("npm", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), needles=("npm_",)),
    Rule("anthropic", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), needles=("sk-ant-",)),
    Rule("openai", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"), needles=("sk-",)),
    Rule("deepseek", re.compile(r"\bsk-[a-f0-9]{32}\b"), needles=("sk-",)),
    Rule("api_key", re.compile(r"\bsk-[A-Za-z0-9]{32,}\b"), needles=("sk-",)),
    Rule("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), needles=("eyj",)),
    Rule("bearer", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{20,}=*)"), 1, ("bearer",)),
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
    # A backslash ends a value: in escaped text (`\n`, `\"`) it belongs to the escape, not the value.
    r"[A-Za-z0-9_]*(?P<sep>\\?[\"']?\s*(?::=|=>|=(?!=)|:)\s*)(?P<q>\\?[\"'`]?)(?P<value>[^\s\"'`,;\\]{8,})"
)
_SECRET_KEY = re.compile(r"(?i)^[A-Za-z0-9_.\-]*(?:" + _KEY_NAMES + r"|authorization)[A-Za-z0-9_]*$")
_DOTTED_REF = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_RANDOM_CASE = re.compile(r"[A-Z][a-z][A-Z]")
_WORDS = re.compile(r"(?:[A-Z][a-z]+){2,}")  # CorrectHorseBatteryStaple
# `NAME=value` alone on its line, the dotenv / shell form: the value is text, never a name.
_DOTENV_NAME = re.compile(r"(?:export[ \t]+)?[A-Z][A-Z0-9_]*")
_PLACEHOLDERS = ("changeme", "password", "xxxxxxxx", "********", "redacted", "example", "placeholder", "your_")


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def looks_like_secret_value(value: str, *, literal: bool = False) -> bool:
    """High-entropy, not code (`get_token()`, `os.environ.KEY`, `${VAR}`), not a placeholder.
    `literal`: the value cannot be a name (a dotenv line's unquoted value), so a run of
    capitalised words (`CorrectHorseBatteryStaple`) is a passphrase, not an identifier."""
    if len(value) < 8 or "[REDACTED" in value:
        return False
    if any(c in value for c in "(){}<>[]$%") or _DOTTED_REF.fullmatch(value):
        return False
    if value.isdigit() or value.lower() in ("true", "false", "none", "null"):
        return False
    low = value.lower()
    if any(p in low for p in _PLACEHOLDERS):
        return False
    # An identifier, constant or kebab/snake-case word (`START_ELEMENT`, `quoted-string`,
    # `Whitespace`, `getHTTPToken`), not a secret. Random letters (an AWS secret key drawn
    # without digits) put a single lower-case letter between capitals, which words do not.
    if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)*|[A-Z_]+|[A-Za-z]+:?", value) and not _RANDOM_CASE.search(value):
        if not (literal and _WORDS.fullmatch(value)):
            return False
        return True
    # Letters and digits only, two or more of each, assigned to a secret's name: a password,
    # however weak (`hunter22`, `s3cr3t99`, a random value with repeated characters); the
    # 3.0 bits a character the rest must reach let about 1 random value in 60 of this shape
    # through. Near-constant values (`aaaa1111`) pass; a name with a separator and a number
    # (`progress-1`) is left to the entropy rule.
    if value.isalnum() and sum(c.isdigit() for c in value) >= 2 and sum(c.isalpha() for c in value) >= 2:
        return shannon_entropy(value) >= 2.0
    return shannon_entropy(value) >= 3.0


def _mask(rule: str) -> str:
    return f"[REDACTED:{rule}]"


# Secret values this process holds (the LLM API key it read): whatever their shape, they are
# redacted wherever they appear, and no variable holding one is passed to a command.
_KNOWN: set[str] = set()
_MIN_KNOWN = 12  # real keys are longer; a short value ("test-key") would mask ordinary words


def register_secret(value: str) -> None:
    """Remember `value` (a credential this process uses, e.g. the API key of a model endpoint) so
    that `redact_text` replaces it even when no rule knows its shape (a local server's key)."""
    if value and len(value) >= _MIN_KNOWN:
        _KNOWN.add(value)


def is_known_secret(value: str) -> bool:
    return value in _KNOWN


def known_secret_count() -> int:
    """How many credentials `register_secret` holds (it only grows): a cache of redacted text
    keyed by it is never served after a new one was registered."""
    return len(_KNOWN)


def redact_text(text: Any) -> Any:
    """`text` with every detected secret replaced by `[REDACTED:<rule>]`.

    Every detector runs on the original text and reports spans; overlapping or touching spans
    are merged and each merged span is masked once. (Masking rule by rule let a detector mask a
    fixed window of a key, after which the next detector no longer recognised what was left:
    the last 54 characters of about a quarter of OpenAI project keys reached the model.)

    Given something other than a string (a request body dict), redacts it like `redact_obj`.
    """
    if not isinstance(text, str):
        return redact_obj(text)
    if not text:
        return text
    return mask_spans(text, secret_spans(text))


Span = tuple[int, int, str]  # start, end, rule name


def secret_spans(text: str) -> list[Span]:
    """Where the secrets of `text` are, by every detector, each span as its detector saw it on
    the original text (spans may overlap: `mask_spans` merges them)."""
    spans: list[Span] = []
    for known in _KNOWN:
        at = text.find(known)
        while at >= 0:
            spans.append((at, at + len(known), "api-key"))
            at = text.find(known, at + len(known))
    lowered = text.lower()
    present = {n for n in _ALL_NEEDLES if n in lowered}
    for rule in RULES:
        if rule.needles and present.isdisjoint(rule.needles):
            continue
        if rule.prefilter is not None and rule.prefilter.search(text) is None:
            continue
        spans.extend(_rule_spans(rule, text))
    spans.extend(rule_set().spans(text, lowered))
    spans.extend(_assignment_spans(text, lowered))
    return spans


def mask_spans(text: str, spans: list[Span]) -> str:
    """`text` with each run of overlapping or touching spans replaced by one mask, named after the
    rule that covered the most of it (the first such rule on a tie)."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    ordered = sorted(spans, key=lambda s: (s[0], -s[1]))
    i = 0
    while i < len(ordered):
        start, end, name = ordered[i]
        best = end - start
        i += 1
        while i < len(ordered) and ordered[i][0] <= end:
            s, e, n = ordered[i]
            if e - s > best:
                best, name = e - s, n
            end = max(end, e)
            i += 1
        out.append(text[pos:start])
        out.append(_mask(name))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _rule_spans(rule: Rule, text: str) -> list[Span]:
    spans = []
    for m in rule.pattern.finditer(text):
        if rule.group and m.group(rule.group) is not None:
            start, end = m.span(rule.group)
        else:
            start, end = m.span()
        if end > start:
            spans.append((start, end, rule.name))
    return spans


def _assignment_spans(text: str, lowered: str) -> list[Span]:
    spans: list[Span] = []
    pos = 0
    # lower() keeps offsets unless the text has characters like "İ" that lower to two.
    keys = _KEYWORD_LOWER.finditer(lowered) if len(lowered) == len(text) else _KEYWORD.finditer(text)
    for key in keys:
        if key.start() < pos:
            continue
        tail = _ASSIGNMENT_TAIL.match(text, key.end())
        if tail is None or not looks_like_secret_value(tail.group("value"), literal=_dotenv_line(text, key.start(), tail)):
            continue
        start, pos = tail.span("value")
        spans.append((start, pos, "keyword"))
    return spans


def _dotenv_line(text: str, key_start: int, tail: re.Match[str]) -> bool:
    if tail.group("sep") != "=" or tail.group("q"):
        return False
    line_start = text.rfind("\n", 0, key_start) + 1
    name_end = tail.start("sep")
    at_line_end = tail.end() == len(text) or text.startswith(("\n", "\r"), tail.end())
    return at_line_end and _DOTENV_NAME.fullmatch(text, line_start, name_end) is not None


def _redact_string(text: str) -> str:
    """A string that is a JSON document (a tool result in a chat message) is redacted decoded,
    field by field, and encoded again only if something changed; other strings as text."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "[") and len(text) > 2:
        try:
            decoded = json.loads(text)
        except ValueError:
            pass
        else:
            if isinstance(decoded, (dict, list)):
                redacted = redact_obj(decoded)
                return text if redacted == decoded else json.dumps(redacted, ensure_ascii=False)
    return redact_text(text)


def redact_obj(obj: Any) -> Any:
    """A copy of `obj` (dicts, lists, strings) with secrets redacted; other values unchanged.

    A string stored under a secret-looking key (`api_key`, `password`, `authorization`) is
    redacted whole when it looks like a secret value.
    """
    if isinstance(obj, str):
        return _redact_string(obj)
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


# -- cutting text without cutting a secret --------------------------------------------------------

# What secrets are made of (keys, tokens, base64, URLs with credentials). A cut between two such
# characters may split a secret, and a secret cut in two is no longer recognised by redaction
# (`sk-` and 31 of its 32 characters): the cut word is left out instead. A run longer than
# _MAX_WORD is data (minified code, a base64 blob), not one token: it is cut as it is (the secret
# shapes that matter in part, PEM bodies, are recognised in part).
_MAX_WORD = 256
_WORD = "A-Za-z0-9_+/=.~:%@!*-"
_LAST_RUN = re.compile(f"[{_WORD}]+\\Z")
_FIRST_RUN = re.compile(f"\\A[{_WORD}]+")


def _drop_last_word(head: str, rest: str) -> str:
    """`head` without its last word when the cut (between `head` and `rest`) splits it."""
    before = _LAST_RUN.search(head)
    after = _FIRST_RUN.match(rest)
    if before is None or after is None:
        return head
    if len(before.group()) + len(after.group()) > _MAX_WORD:
        return head
    return head[: before.start()]


def cut_head(text: str, limit: int, *, cut_inside: bool | None = None) -> str:
    """The start of `text` in at most `limit` UTF-8 bytes, without a word the cut splits.
    `cut_inside=True`: what followed the cut is gone (head and tail output), assume it continued
    the word; otherwise `text` holds more than the head and shows whether it did."""
    raw = text.encode("utf-8")
    head = raw[:limit].decode("utf-8", "ignore") if len(raw) > limit else text
    rest = "x" if cut_inside else text[len(head):]
    return _drop_last_word(head, rest)


def cut_tail(text: str, *, cut_inside: bool = True) -> str:
    """`text`, the part kept after a cut, without the word the cut split at its start."""
    if not cut_inside:
        return text
    run = _FIRST_RUN.match(text)
    return text[run.end():] if run is not None and len(run.group()) < _MAX_WORD else text


def cut_chars(text: str, max_chars: int) -> str:
    """`text` in at most `max_chars` characters, without a word the cut splits."""
    if len(text) <= max_chars:
        return text
    return _drop_last_word(text[:max_chars], text[max_chars:])

#!/usr/bin/env python3
"""Regenerate `deepseek_ls/policy/secret_rules.json`, the maintained secret-rule set redaction uses.

    pip install 'kingfisher-secret-scanner==1.5.0'   # the pinned source (`rules` extra)
    python scripts/update-secret-rules.py            # rewrites the JSON; review the diff
    pytest tests/unit/policy -k "rule_set or key_families or real_code"

The rules are betterleaks' (gitleaks' successor, by gitleaks' author; MIT) and OSV-SCALIBR's
veles detectors (Apache-2.0), as the Kingfisher scanner (MongoDB, Apache-2.0) ships them on PyPI
with their patterns readable through `Rules.detail`. Kingfisher itself is not used at run time:
compiling its ~500 rules takes ~10 s (0.8 s from its cache) and its wheel is 36 MB, for a check
that runs on every request body and log line. Each kept rule is written with its pattern
translated to Python (`policy/rules_re2.py`), the group that holds the secret, and its needles
(literals one of which every match contains), so the run-time gate needs no analysis.

Left out (listed in the JSON with the reason): rules that find identifiers rather than secrets
(client, account, tenant and application ids, host names, URLs, user names, public keys), rules
meant for one kind of file (generic `password = "…"` shapes for .tf or .php files), rules
with no literal to gate on (their regex would search every text whole), and rules whose regex
costs more than `_BUDGET` times a plain one's in Python's backtracking engine.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deepseek_ls.policy.rules_re2 import FLAGS, needles, to_python  # noqa: E402

PACKAGE, VERSION = "kingfisher-secret-scanner", "1.5.0"
OUT = ROOT / "deepseek_ls" / "policy" / "secret_rules.json"

# Identifiers, not secrets: redacting them would hide what the model needs (which account, which
# host) and protect nothing. Webhook and Sidekiq URLs carry their credential: kept.
_IDENTIFIER = re.compile(
    r"(?:-ids?|-url|-host|-domain|-username|-address|-name|-repository|public-key|pub-key|pub-api-key"
    r"|public-api-token|-api-id|-access-id|-auth-id)(?:\.\d+)?$"
)
_KEEP = {"betterleaks.slack-webhook-url", "betterleaks.sidekiq-sensitive-url",
         "betterleaks.kubernetes-secret-yaml"}  # a Secret manifest is one in any text
# Mask names (`[REDACTED:<family>]`) where the id's first word says little.
_FAMILY = {
    "private-key": "private_key", "generic-credential-uri": "basic_auth", "curl-auth-user": "basic_auth",
    "curl-auth-header": "bearer", "jwt-base64": "jwt", "kubernetes-secret-yaml": "kubernetes",
    "1password-secret-key": "onepassword", "1password-service-account-token": "onepassword",
    "gcp-api-key": "google", "gcp-gemini-api": "google", "gcp-service-account": "google",
    "gcp-application-default-credentials": "google",
}
# A rule whose regex costs more than this many times a plain one's on the same text (a pattern
# that backtracks) is left out and listed. A ratio, measured in one run, holds on a busy machine.
_BUDGET = 25.0
_REFERENCE = r"\bghp_[0-9a-zA-Z]{36}"


def _family(rule_id: str) -> str:
    short = rule_id.split(".", 1)[1] if rule_id.startswith("betterleaks.") else rule_id.rsplit("/", 1)[-1]
    short = re.sub(r"\.\d+$", "", short)
    name = _FAMILY.get(short) or short.split("-")[0]
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def _secret_group(compiled: re.Pattern[str], declared: int) -> int:
    """gitleaks' rule: the declared group, else the first group, else the whole match (0). A
    group of 0 with groups present means "the first group that matched" at run time (-1)."""
    if declared:
        return declared
    return -1 if compiled.groups else 0


def _timing_text() -> str:
    """Ordinary text dense in every rule's needles: what a rule costs where its gate opens."""
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = [(stdlib / name).read_text() for name in ("argparse.py", "configparser.py", "smtplib.py", "http/client.py")]
    return "\n".join(parts)


def _cost(compiled: re.Pattern[str], text: str) -> float:
    """The best of three times of a full scan of `text`, in ms."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in compiled.finditer(text):
            pass
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> int:
    try:
        installed = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        print(f"install the pinned source first: pip install '{PACKAGE}=={VERSION}'", file=sys.stderr)
        return 1
    if installed != VERSION:
        print(f"{PACKAGE} {installed} is installed; this script is pinned to {VERSION} (change VERSION "
              "to update the rule set, then review the diff and run the tests)", file=sys.stderr)
        return 1
    import kingfisher_sdk

    catalog = kingfisher_sdk.Rules(builtins=True, confidence="low", cache=False)
    base = _timing_text()
    reference = _cost(re.compile(_REFERENCE, FLAGS), base)
    kept, left_out = [], {}
    for meta in sorted(catalog.metadata(), key=lambda m: m["id"]):
        rule_id = meta["id"]
        if _IDENTIFIER.search(rule_id) and rule_id not in _KEEP:
            left_out[rule_id] = "finds an identifier, not a secret"
            continue
        detail = catalog.detail(rule_id)
        if detail.get("path") and rule_id not in _KEEP:
            # Written for one kind of file (a `password = "…"` in .tf files): on any text it is a
            # generic password rule, which the keyword rule does with more care for code.
            left_out[rule_id] = f"meant only for files matching {detail['path']}"
            continue
        try:
            pattern = to_python(detail["pattern"])
            compiled = re.compile(pattern, FLAGS)
        except (ValueError, re.error) as exc:
            left_out[rule_id] = f"its pattern does not translate to Python: {exc}"
            continue
        gate = needles(pattern)
        if not gate:
            # Nothing to gate on: its regex would search every request body and log line whole.
            left_out[rule_id] = "no literal every match contains, so no gate (the keyword and entropy rules remain)"
            continue
        text = base + "\n" + " ".join(gate)  # the gate open, as on a file that has the word
        ratio = _cost(compiled, text) / reference
        if ratio > _BUDGET:
            left_out[rule_id] = f"its regex costs {ratio:.0f}x a plain one's on ordinary text"
            continue
        kept.append({
            "id": rule_id,
            "family": _family(rule_id),
            "pattern": pattern,
            "group": _secret_group(compiled, int(detail.get("betterleaks_secret_group") or 0)),
            "needles": list(gate),
        })
    data = {
        "source": f"{PACKAGE}=={VERSION} (PyPI): betterleaks rules (MIT) and OSV-SCALIBR veles detectors "
                  "(Apache-2.0), as Kingfisher (Apache-2.0) ships them; regenerate with scripts/update-secret-rules.py",
        "regex_flags": "ASCII",
        "rules": kept,
        "left_out": left_out,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n")
    ungated = [r["id"] for r in kept if not r["needles"]]
    print(f"{len(kept)} rules kept, {len(left_out)} left out, {len(ungated)} without a needle: {ungated}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The environment commands run with: the user's, less anything that looks like a credential.

A variable is dropped when its name says it holds a secret (`*PASS*`, `*PWD`,
`*SECRET*`, `*TOKEN*`, `*KEY*`, `*AUTH*`, `*CREDENTIAL*`, `*COOKIE*`,
`*SESSION*`, `*PRIVATE*`, `*SIGNATURE*`, `*_DSN`, `DATABASE_URL`...), or when its value
does (a URL with a password, a key the redaction rules recognise). `PWD`/`OLDPWD`
(directories) are kept.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

_SECRET_NAME = re.compile(
    r"PASS|PWD|SECRET|TOKEN|KEY|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE|SIGNATURE|CERT|_DSN$|^DSN$|"
    r"DATABASE_URL|DB_URL|CONNECTION_STRING|CONN_STR|WEBHOOK|SAS_|_SAS$|API_?ID",
    re.IGNORECASE,
)
_KEEP = {"PWD", "OLDPWD", "SSH_AUTH_SOCK_DISABLED"}
# A URL carrying a user:password@ part.
_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@", re.IGNORECASE)


def is_secret_variable(name: str, value: str) -> bool:
    if name.upper() in _KEEP:
        return False
    if _SECRET_NAME.search(name):
        return True
    if _URL_CREDENTIALS.search(value):
        return True
    from deepseek_ls.policy.redact import redact_text

    return len(value) >= 16 and "[REDACTED" in redact_text(value)


def scrubbed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) without the variables that may hold credentials."""
    source = dict(os.environ if env is None else env)
    return {k: v for k, v in source.items() if not is_secret_variable(k, v)}

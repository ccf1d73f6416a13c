"""The environment commands run with: the user's, less anything that looks like a credential.

A variable is dropped when its name says it holds a secret (`*PASS*`, `*PWD`,
`*SECRET*`, `*TOKEN*`, `*KEY*`, `*AUTH*`, `*CREDENTIAL*`, `*COOKIE*`,
`*SESSION*`, `*PRIVATE*`, `*SIGNATURE*`, `*_DSN`, `DATABASE_URL`...), or when its value
does (a URL with a password, a key the redaction rules recognise). `PWD`/`OLDPWD`
(directories) are kept. `PATH` keeps only absolute directories.
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
    from deepseek_ls.policy.redact import is_known_secret

    if is_known_secret(value.strip()):
        return True  # the API key we read, under whatever name the config gave its variable
    if _URL_CREDENTIALS.search(value):
        return True
    from deepseek_ls.policy.redact import redact_text

    return len(value) >= 16 and "[REDACTED" in redact_text(value)


def safe_exec_path(value: str | None) -> str:
    """`PATH` without its empty and relative entries (`PATH=/usr/bin:` or `.:$PATH`,
    `node_modules/.bin`): they name directories relative to where a program starts — the
    workspace, whose files the repository chooses — so `git` or `pytest` would be a file of the
    repository. Absolute entries are kept (a virtualenv the person activated)."""
    kept = [entry for entry in (value or "").split(os.pathsep) if entry and os.path.isabs(entry)]
    return os.pathsep.join(kept) or os.defpath.lstrip(os.pathsep)


def scrubbed_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) without the variables that may hold credentials, and with
    a `PATH` that only names absolute directories (`safe_exec_path`)."""
    source = dict(os.environ if env is None else env)
    out = {k: v for k, v in source.items() if not is_secret_variable(k, v)}
    if "PATH" in out:
        out["PATH"] = safe_exec_path(out["PATH"])
    return out

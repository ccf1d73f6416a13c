"""Secret files recognised by what they contain, not by their name.

The deny-list (`policy.deny_paths`) knows where secrets usually live, but a
service-account key saved as `deploy/ci.json` or a kubeconfig called
`cluster.yaml` has no telling name. These checks look at a file's text (its
first `HEAD_BYTES`) for the shapes of credential files; a file that matches is
treated like a deny-listed one: never read by a tool, never indexed, never
searched, never patched.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from deepseek_ls.policy import safe_files
from deepseek_ls.policy.errors import PolicyViolation

HEAD_BYTES = 64_000

def _contains(*needles: str) -> Callable[[str], bool]:
    return lambda head: any(needle in head for needle in needles)


# (kind, gate, pattern) - each pattern is specific to a credential *file*, not to
# code that merely mentions the format. The gate is a plain substring test the pattern
# cannot match without (true for few files): the index checks every file it reads, so
# the regexes must not scan ordinary code.
_SHAPES: list[tuple[str, Callable[[str], bool], re.Pattern[str]]] = [
    ("private key", _contains("PRIVATE KEY"),
     re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*(?:\\n|\n)\s*[A-Za-z0-9+/=]{16}")),
    ("private key", _contains("PuTTY-User-Key-File-"),
     re.compile(r"^PuTTY-User-Key-File-\d+:", re.M)),
    ("gcloud credentials", _contains('"type"'),
     re.compile(r"\"type\"\s*:\s*\"(?:service_account|authorized_user|external_account|impersonated_service_account)\"")),
    (
        "kubeconfig", _contains("kind:"),
        re.compile(r"(?ms)^kind:\s*[\"']?Config[\"']?\s*$.*^\s*(?:users|contexts|clusters):"
                   r"|^\s*(?:users|contexts|clusters):.*^kind:\s*[\"']?Config[\"']?\s*$"),
    ),
    ("docker credentials", _contains('"auths"'),
     re.compile(r"\"auths\"\s*:\s*\{[^}]*\"auth\"\s*:\s*\"[A-Za-z0-9+/=]{8,}\"", re.S)),
    ("netrc", _contains("password"),
     re.compile(r"(?m)^\s*(?:machine\s+\S+|default)\b[^\n]*(?:\n[^\n]*){0,3}?\bpassword\s+\S+")),
    ("aws credentials", lambda head: "aws_secret_access_key" in head.lower(),
     re.compile(r"(?im)^\s*aws_secret_access_key\s*=\s*\S{16,}")),
    ("npm credentials", _contains("_auth", "_password"),
     re.compile(r"(?m)^\s*(?://\S+/:)?_(?:authToken|auth|password)\s*=\s*\S{8,}")),
    ("git credentials", lambda head: head.startswith("http"),  # the pattern is anchored at the start
     re.compile(r"(?m)\Ahttps?://[^:/\s@]+:[^@\s]{6,}@\S+\s*$")),
]


def secret_kind(text: str) -> str | None:
    """What kind of credential file `text` is (its head is enough), or None."""
    head = text[:HEAD_BYTES]
    for kind, gate, pattern in _SHAPES:
        if gate(head) and pattern.search(head):
            return kind
    return None


def check_not_secret(rel: str, text: str) -> None:
    """Raise `PolicyViolation` when `text` (the content of `rel`) is a credential file."""
    kind = secret_kind(text)
    if kind is not None:
        raise PolicyViolation(rel, "secret_content", f"the file's content looks like {kind}; secret files are never read")


def file_is_secret(root: Path, rel: str) -> bool:
    """Whether workspace file `rel` must stay hidden for its content (or cannot be opened safely:
    a hard link, a link swapped in). Unreadable files are not secret (there is nothing to show)."""
    try:
        head = safe_files.read_bytes(root, rel, max_bytes=HEAD_BYTES)
    except PolicyViolation:
        return True
    except OSError:
        return False
    return secret_kind(head.decode("utf-8", "replace")) is not None

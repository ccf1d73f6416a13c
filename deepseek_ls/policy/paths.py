"""Path policy: every path a tool or patch touches is resolved here first.

Paths come from a model, so they are hostile until proven otherwise: they must
be relative, stay inside the workspace after symlinks are resolved, never touch
`.git/` or our own `.deepseek/`, and never name a secret location (deny-list,
gitignore-style patterns matched case-insensitively because macOS and Windows
file systems are).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from deepseek_ls.globs import fast_matcher, unanchored
from deepseek_ls.policy.errors import PolicyViolation

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# Directories nobody but git (or we) may touch, compared case-insensitively.
_RESERVED_DIRS = (".git", ".deepseek")


class PathPolicy:
    """Canonicalises workspace-relative paths and refuses the unsafe ones."""

    def __init__(self, root: Path, deny_paths: list[str] | tuple[str, ...] = ()) -> None:
        self.root = Path(root).resolve()
        self.deny_patterns = list(deny_paths)
        self._deny_match = fast_matcher([unanchored(p.lower()) for p in deny_paths])

    def resolve(self, rel: str) -> Path:
        """The absolute path for workspace-relative `rel`, or `PolicyViolation`."""
        clean = self.normalize(rel)
        target = (self.root / clean).resolve(strict=False)
        if target != self.root and not target.is_relative_to(self.root):
            raise PolicyViolation(rel, "symlink_escape", "it resolves outside the workspace root")
        # A symlink inside the workspace may still point at .git or a secret file.
        real_rel = target.relative_to(self.root).as_posix() if target != self.root else ""
        if real_rel and real_rel != clean:
            self._check_components(rel, real_rel)
        return target

    def relative(self, rel: str) -> str:
        """The canonical workspace-relative POSIX form of `rel` (validated)."""
        self.resolve(rel)
        return self.normalize(rel)

    def is_allowed(self, rel: str) -> bool:
        try:
            self.resolve(rel)
        except PolicyViolation:
            return False
        return True

    def normalize(self, rel: str) -> str:
        """Lexical checks only (no file system): the canonical relative form."""
        if not isinstance(rel, str) or not rel.strip():
            raise PolicyViolation(str(rel), "empty_path", "the path is empty")
        if _CONTROL.search(rel):
            raise PolicyViolation(rel, "control_character", "the path contains control characters")
        if "\\" in rel:
            raise PolicyViolation(rel, "backslash", "use '/' as the separator; backslashes are refused")
        # Look-alike characters (fullwidth dots and slashes, ...) that NFKC folds
        # into separators or dots could escape on a system that normalises names.
        if not rel.isascii() and _separator_count(unicodedata.normalize("NFKC", rel)) != _separator_count(rel):
            raise PolicyViolation(rel, "unicode_lookalike", "the path contains look-alike dot or slash characters")
        if rel.startswith(("/", "~")) or (len(rel) > 1 and rel[1] == ":"):
            raise PolicyViolation(rel, "absolute_path", "absolute paths are refused; give a path relative to the workspace root")
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if not parts:
            raise PolicyViolation(rel, "workspace_root", "the path names the workspace root itself")
        if ".." in parts:
            raise PolicyViolation(rel, "dotdot", "'..' components are refused")
        clean = "/".join(parts)
        self._check_components(rel, clean)
        return clean

    def _check_components(self, subject: str, clean: str) -> None:
        parts = clean.split("/")
        for part in parts:
            # Trailing dots/spaces are dropped by Windows: ".git." is ".git".
            folded = part.casefold().rstrip(". ")
            if folded in _RESERVED_DIRS:
                raise PolicyViolation(subject, "reserved_dir", f"'{part}/' is reserved and cannot be read or written by tools")
        lowered = clean.lower()
        # As a file, or as a directory itself (".ssh"); files below a denied
        # directory (".ssh/config") are matched by the gitignore semantics.
        if self._deny_match(lowered) or self._deny_match(lowered + "/"):
            raise PolicyViolation(subject, "deny_list", "the path matches the secret-location deny-list (policy.deny_paths)")



def _separator_count(text: str) -> int:
    return sum(text.count(ch) for ch in "./\\:")




def secret_location(path: str, deny_paths: list[str] | tuple[str, ...]) -> str | None:
    """Why a path someone else names (an absolute path, the path of a `file://` URI: an editor's
    attachment, an MCP server's resource) is a secret location by `deny_paths` (or `.git/`), or None.
    Unanchored deny patterns match at any depth, so `/home/me/.aws/credentials` is caught as
    `.aws/credentials` would be."""
    parts = [p for p in str(path).replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if parts and len(parts[0]) == 2 and parts[0][1] == ":":
        parts = parts[1:]  # a Windows drive
    if not parts:
        return None
    try:
        PathPolicy(Path("/"), deny_paths)._check_components(path, "/".join(parts))
    except PolicyViolation as exc:
        return exc.reason
    return None

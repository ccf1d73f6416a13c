"""Workspace trust: settings from a repository's own files cannot loosen policy until trusted.

A repository can ship `.deepseek/config.toml` (and `.mcp.json`). Like VS Code's
Restricted Mode, settings from those files that *loosen* policy (approval
modes, allowlisted commands, shell metacharacters, deny-list removals, `yolo`,
a different LLM endpoint or key variable, larger safety-gate limits, anything
new under `[policy]` ...) are ignored until the person trusts the workspace
(`deepseek-ls trust`, or the `deepseek.trustWorkspace` command). Tightening is
always allowed.

Trust is stored in the user's config directory, never in the workspace, and is
bound to the *content* of the workspace's config files: when
`.deepseek/config.toml` changes (say a tool's `--log-file` overwrote it), the
loosening settings are ignored again until the person trusts it again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import namedtuple
from pathlib import Path
from urllib.parse import urlsplit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping

    from deepseek_ls.config_models import Config

# The config models (and typing, dataclasses) are imported where needed: the trust check
# itself stays cheap for `config show`'s fast path (cli/show_fast.py).

TRUST_FILE_NAME = "trusted-workspaces.json"
# Workspace files that configure the agent, relative to the root. (`.mcp.json` servers are
# approved one by one by `deepseek-ls mcp approve`; trust covers its presence for the record.)
# The hooks files are there because a hook runs without asking: one added or changed after the
# person trusted the workspace waits for trust again (docs/hooks.md).
TRUSTED_FILES = (".deepseek/config.toml", ".mcp.json", ".deepseek/hooks.json", ".claude/settings.json",
                 ".claude/settings.local.json")
# Claude Code's settings files: only their `hooks` section counts (Claude Code itself writes the rest,
# its permissions, as the person works; that must not take trust away).
HOOKS_SECTION_ONLY = frozenset({".claude/settings.json", ".claude/settings.local.json"})

_APPROVAL_RANK = {"never": 0, "suggest": 1, "auto": 2}
_LEGACY_RANK = {"never": 0, "ask": 1, "auto": 2}
# hetun runs an approved mission without per-hunk prompts (looser than agent), but always asks for
# the mission itself, whatever approval_mode says (tighter than yolo).
_MODE_RANK = {"plan": 0, "agent": 1, "hetun": 2, "yolo": 3}


class TrustState(namedtuple("TrustState", ["trusted", "reason"])):
    """`trusted` (bool) and `reason`: "never" (never trusted), "changed" (trusted, but a
    config file changed since) or "trusted"."""

    __slots__ = ()


def trust_file(user_config: Path) -> Path:
    """Where trust decisions live: beside the user config (never inside a workspace)."""
    return user_config.parent / TRUST_FILE_NAME


def fingerprint(root: Path, known: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
    """sha256 of each workspace config file (None when absent); `known`: hashes of bytes the caller
    already read (and will use), taken instead of reading the file again."""
    out: dict[str, str | None] = {}
    for rel in TRUSTED_FILES:
        if known and rel in known:
            out[rel] = known[rel]
            continue
        path = root / rel
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError:
            data = None
        if data is not None and rel in HOOKS_SECTION_ONLY:
            data = _hooks_section(data)
        out[rel] = hashlib.sha256(data).hexdigest() if data is not None else None
    return out


def _hooks_section(data: bytes) -> bytes | None:
    """The `hooks` of a Claude Code settings file, canonical (None: it has none); a file that does
    not parse counts as a whole, so no change to it can pass unseen."""
    try:
        parsed = json.loads(data)
    except ValueError:
        return data
    hooks = parsed.get("hooks") if isinstance(parsed, dict) else None
    return None if hooks is None else json.dumps(hooks, sort_keys=True).encode()


class TrustStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"version": 1, "workspaces": {}}
        if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
            return {"version": 1, "workspaces": {}}
        return data

    def _write(self, data: dict[str, Any]) -> None:
        import tempfile

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
        os.replace(tmp, self.path)

    def state(self, root: Path, known: Mapping[str, str | None] | None = None) -> TrustState:
        entry = self._read()["workspaces"].get(str(Path(root).resolve()))
        if not isinstance(entry, dict):
            return TrustState(False, "never")
        stored = entry.get("files") if isinstance(entry.get("files"), dict) else {}
        # A file trust did not cover yet (recorded before it was a trusted file) counts as absent then.
        if any(stored.get(rel) != digest for rel, digest in fingerprint(Path(root).resolve(), known).items()):
            return TrustState(False, "changed")
        return TrustState(True, "trusted")

    def trust(self, root: Path) -> None:
        from datetime import datetime, timezone

        root = Path(root).resolve()
        data = self._read()
        data["workspaces"][str(root)] = {
            "trusted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "files": fingerprint(root),
        }
        self._write(data)

    def revoke(self, root: Path) -> bool:
        data = self._read()
        removed = data["workspaces"].pop(str(Path(root).resolve()), None) is not None
        if removed:
            self._write(data)
        return removed

    def entries(self) -> dict[str, Any]:
        return dict(self._read()["workspaces"])


def loosened_keys(before: Config, after: Config) -> list[str]:
    """Dotted keys whose value in `after` is looser than in `before`.

    Known keys are compared by meaning (an approval mode that asks less, a command
    added to the allowlist, a deny-list pattern removed, a larger limit); under
    `[policy]` and in sections not known to be harmless, any change counts.
    """
    return loosened_in_dumps(before.model_dump(mode="json"), after.model_dump(mode="json"))


def loosened_in_dumps(b: dict[str, Any], a: dict[str, Any]) -> list[str]:
    """`loosened_keys` on the configs' JSON dumps (`Config.model_dump(mode="json")`)."""
    out: list[str] = []
    bp, ap = b["policy"], a["policy"]
    handled = set()

    def rank(key: str, table: Mapping[str, int]) -> None:
        handled.add(key)
        if table.get(ap[key], 9) > table.get(bp[key], 9):
            out.append(f"policy.{key}")

    rank("approval_mode", _APPROVAL_RANK)
    rank("approve_edits", _LEGACY_RANK)
    rank("approve_bash", _LEGACY_RANK)
    handled |= {"allowlist", "deny_paths", "allow_shell_metacharacters"}
    if set(ap["allowlist"]) - set(bp["allowlist"]):
        out.append("policy.allowlist")
    if set(bp["deny_paths"]) - set(ap["deny_paths"]):
        out.append("policy.deny_paths")
    if ap["allow_shell_metacharacters"] and not bp["allow_shell_metacharacters"]:
        out.append("policy.allow_shell_metacharacters")
    for key in set(ap) - handled:
        if ap[key] == bp.get(key):
            continue
        if isinstance(ap[key], (int, float)) and isinstance(bp.get(key), (int, float)) and ap[key] < bp[key]:
            continue  # a smaller limit (timeout, output size) is stricter
        out.append(f"policy.{key}")
    if _MODE_RANK[a["agent_loop"]["mode"]] > _MODE_RANK[b["agent_loop"]["mode"]]:
        out.append("agent_loop.mode")
    for key, value in a["agent_loop"]["safety_gate"].items():
        if value > b["agent_loop"]["safety_gate"][key]:
            out.append(f"agent_loop.safety_gate.{key}")
    # Where the code and the API key are sent.
    for key in ("base_url", "api_key_env"):
        if _other_endpoint(a["llm"], b["llm"], key):
            out.append(f"llm.{key}")
    for name, profile in a["llm"]["profiles"].items():
        old = b["llm"]["profiles"].get(name)
        if old is None:  # a profile new in `after` is compared with a default one
            from deepseek_ls.config_models import ModelProfile

            old = ModelProfile().model_dump(mode="json")
        for key in ("base_url", "api_key_env"):
            if _other_endpoint(profile, old, key):
                out.append(f"llm.profiles.{name}.{key}")
    # MCP servers that come with the repository have their own approval, bound to each
    # definition (tools/mcp/servers.py); the section's other switches are compared here.
    for key, value in a["mcp"].items():
        if key != "servers" and _looser(value, b["mcp"].get(key)):
            out.append(f"mcp.{key}")
    # Model registry entries: prices and capabilities are tuning; where requests go is not.
    for name, entry in a.get("models", {}).items():
        old = b.get("models", {}).get(name, {})
        for key in ("base_url", "api_key_env"):
            if _other_endpoint(entry, old, key):
                out.append(f"models.{name}.{key}")
    # Inline completion sends the buffer being typed in: turning it on loosens; the rest is tuning.
    inline_now, inline_before = a.get("inline_completion", {}), b.get("inline_completion", {})
    if inline_now.get("enabled") and not inline_before.get("enabled", True):
        out.append("inline_completion.enabled")
    # Sections added later (sandbox, ...) loosen until proven otherwise. `code_actions` only shows or
    # hides actions the person must choose: tuning.
    for section in set(a) - {"llm", "router", "policy", "index", "agent_loop", "mcp", "models", "inline_completion",
                             "code_actions"}:
        if a[section] != b.get(section):
            out.append(section)
    return out


def _other_endpoint(new: Mapping[str, Any], old: Mapping[str, Any], key: str) -> bool:
    """Whether `key` (base_url or api_key_env) changed in a way that sends code or a key
    elsewhere. A model served on loopback (llama.cpp, Ollama) sees nothing that leaves
    this machine, so pointing at one - with its own key variable - is not loosening."""
    if new.get(key) == old.get(key):
        return False
    url = new.get("base_url")
    if isinstance(url, str):
        host = (urlsplit(url).hostname or "").lower()
        if host in ("localhost", "::1") or host.startswith("127."):
            return False
    return True


def _looser(new: Any, old: Any) -> bool:
    """A switch turned on, a limit raised, or any other change of a value with no known order."""
    if isinstance(new, bool) and isinstance(old, bool):
        return new and not old
    if isinstance(new, (int, float)) and isinstance(old, (int, float)):
        return new > old
    return new != old


# -- yolo needs a trusted workspace -------------------------------------------------------


class UntrustedWorkspace(Exception):
    """A request that needs a trusted workspace (yolo mode) in one that is not trusted."""

    exit_code = 2

    @property
    def user_message(self) -> str:
        return str(self)


def workspace_trust(root: Path, env: Mapping[str, str] | None = None) -> TrustState:
    """Whether the person trusted `root` (and its config files are as they were then)."""
    from deepseek_ls.config_layers import user_config_path

    return TrustStore(trust_file(user_config_path(env))).state(root)


def yolo_refusal(root: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why yolo mode (approve everything allowlisted without asking) may not run in `root`, or None.

    Yolo trusts the repository's code and instructions as much as the person does: its
    `conftest.py`, its `AGENTS.md`, what its README steers the model to do. So it runs only in a
    workspace the person trusted with `deepseek-ls trust`."""
    state = workspace_trust(root, env)
    if state.trusted:
        return None
    why = ("its .deepseek/config.toml, .mcp.json or hooks changed since you trusted it" if state.reason == "changed"
           else "it is not a trusted workspace")
    return (f"yolo mode approves edits and commands without asking, so it runs only in a workspace you "
            f"trust; {Path(root)}: {why}. If you trust this repository, run `deepseek-ls trust` in it "
            "(or 'DeepSeek: Trust Workspace' / :DeepSeekTrust in the editor); otherwise use agent mode.")


def require_trusted_for_yolo(root: Path, mode: str | None, env: Mapping[str, str] | None = None) -> None:
    """Raise `UntrustedWorkspace` when `mode` is yolo and `root` is not trusted."""
    if mode == "yolo":
        refusal = yolo_refusal(root, env)
        if refusal:
            raise UntrustedWorkspace(refusal)

"""Which MCP servers exist, where each was defined, and whether it may start.

Servers come from the `[mcp.servers.NAME]` tables of our TOML config (any layer) and
from the `mcpServers` object of a `.mcp.json` at the workspace root, the shape other
agents read. A definition from the user's own config (user file, `--config`, the
environment, the editor's settings) is the person's and starts when needed. One that
came with the repository — the workspace's `.deepseek/config.toml` or `.mcp.json` —
starts programs an attacker may have written, so it waits until the person approves
it once; the approval is kept outside the workspace, bound to the definition's exact
content, so an edited definition needs approving again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Literal, Mapping

from pydantic import ValidationError

from deepseek_ls.config_models import McpServerConfig

MCP_JSON = ".mcp.json"
Origin = Literal["user", "workspace"]
_NAME_OK = re.compile(r"[^A-Za-z0-9_-]")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(ValueError):
    """A server definition that cannot be used as written (the message names the server)."""


@dataclass
class McpServerSpec:
    """One server: its name, its definition, where it came from, and whether it may start."""

    name: str
    config: McpServerConfig
    source: str  # a file path or a layer label, shown to the person
    origin: Origin
    approved: bool = True
    problem: str | None = None  # a definition error: the server is listed but never started
    fingerprint: str = ""

    @property
    def startable(self) -> bool:
        return self.config.enabled and self.approved and self.problem is None

    @property
    def state_hint(self) -> str:
        if self.problem:
            return f"invalid: {self.problem}"
        if not self.config.enabled:
            return "disabled"
        if not self.approved and self.source == "editor settings":
            return ("not approved (defined in the editor's settings, which a repository's .vscode/settings.json "
                    "can set; approve it with 'DeepSeek: Approve MCP Servers' or :DeepSeekMcp approve, "
                    "or trust the workspace)")
        if not self.approved:
            return f"not approved (defined in {self.source}; run `deepseek-ls mcp approve`)"
        return "ready to start"


@dataclass
class McpServerSet:
    servers: dict[str, McpServerSpec] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def pending_approval(self) -> list[McpServerSpec]:
        return [s for s in self.servers.values() if not s.approved and s.problem is None and s.config.enabled]


def safe_name(name: str) -> str:
    """A server or tool name as it may appear inside an OpenAI function name."""
    return _NAME_OK.sub("_", name)


def fingerprint(name: str, config: McpServerConfig) -> str:
    body = json.dumps({"name": name, **config.model_dump(mode="json")}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def expand(
    value: str, env: Mapping[str, str], *, where: str, refuse: Callable[[str, str], bool] | None = None
) -> str:
    """`${VAR}` / `${VAR:-default}` from `env`; an unset variable without a default is an error, and
    so is a variable `refuse(name, value)` rejects (a credential asked for by the repository)."""

    def sub(m: re.Match[str]) -> str:
        var, default = m.group(1), m.group(2)
        if var in env and env[var] != "":
            if refuse is not None and refuse(var, env[var]):
                raise McpConfigError(
                    f"{where} uses ${{{var}}}, which holds a credential; a server the repository defines is not "
                    "given your credentials (define the server in your user config to pass one)"
                )
            return env[var]
        if default is not None:
            return default
        raise McpConfigError(f"{where} uses ${{{var}}}, which is not set in the environment")

    return _VAR.sub(sub, value)


def expanded(spec: McpServerSpec, env: Mapping[str, str]) -> McpServerConfig:
    """The definition with every `${VAR}` replaced; raises `McpConfigError` naming what is missing.
    A repository-defined server (`.mcp.json`, the workspace's config) never gets a variable that
    looks like a credential (`policy/env.py`: DEEPSEEK_API_KEY, *_TOKEN, a URL with a password...):
    its approval shows a command line, not what each `${VAR}` in its env or headers would carry."""
    from deepseek_ls.policy.env import is_secret_variable

    c = spec.config
    w = f"MCP server {spec.name!r}"
    refuse = is_secret_variable if spec.origin == "workspace" else None
    return c.model_copy(
        update={
            "command": expand(c.command, env, where=f"{w} command", refuse=refuse) if c.command else None,
            "args": [expand(a, env, where=f"{w} args", refuse=refuse) for a in c.args],
            "env": {k: expand(v, env, where=f"{w} env {k}", refuse=refuse) for k, v in c.env.items()},
            "url": expand(c.url, env, where=f"{w} url", refuse=refuse) if c.url else None,
            "headers": {k: expand(v, env, where=f"{w} header {k}", refuse=refuse) for k, v in c.headers.items()},
        }
    )


def variables(config: McpServerConfig) -> list[str]:
    """The environment variables a definition's `${VAR}`s name, anywhere in it."""
    texts = [config.command or "", *config.args, *config.env.values(), config.url or "", *config.headers.values()]
    return sorted({m.group(1) for text in texts for m in _VAR.finditer(text)})


# -- approvals of repository-defined servers ------------------------------------------


class McpApprovals:
    """Approved repository-defined servers: {workspace: {server name: fingerprint}} in a JSON file
    beside the user's config (never inside the workspace, which the repository controls)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def is_approved(self, root: Path, spec: McpServerSpec) -> bool:
        return self._load().get(str(root), {}).get(spec.name) == spec.fingerprint

    def approve(self, root: Path, specs: list[McpServerSpec]) -> None:
        with self._changing() as data:
            entry = data.setdefault(str(root), {})
            for spec in specs:
                entry[spec.name] = spec.fingerprint

    def revoke(self, root: Path) -> None:
        with self._changing() as data:
            data.pop(str(root), None)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[dict[str, dict[str, str]]]:
        """Read, change and write the file as one step under a lock file, through a temp file of
        its own: the file is per user, so two editors (or two worker threads of one server) may
        approve at once; a shared temp name made one of them fail, and the read-modify-write lost
        the other's entry. Readers never see a half-written file (revoke wrote in place)."""
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{self.path}.lock"):
            data = self._load()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) == before:
                return  # nothing changed (e.g. revoking a workspace never approved)
            text = json.dumps(data, indent=2, sort_keys=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(text)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise


def approvals_path(env: Mapping[str, str] | None = None) -> Path:
    from deepseek_ls.config import user_config_path

    return user_config_path(env).parent / "mcp-approvals.json"


# -- loading ----------------------------------------------------------------------------


def load_servers(
    root: Path,
    servers: Mapping[str, McpServerConfig],
    sources: Mapping[str, str],
    *,
    workspace_config: Path | None,
    read_workspace_json: bool = True,
    approvals: McpApprovals | None = None,
    untrusted_sources: Collection[str] = (),
) -> McpServerSet:
    """Every server the person could use here: the TOML ones, then `.mcp.json`'s (TOML wins a name)."""
    root = Path(root).resolve()
    approvals = approvals or McpApprovals(approvals_path())
    out = McpServerSet()
    ws_label = str(workspace_config) if workspace_config else None
    for name, cfg in servers.items():
        source = _source_of(name, sources)
        # `untrusted_sources`: other layers the repository may control (the editor's settings).
        origin: Origin = "workspace" if (ws_label and source == ws_label) or source in untrusted_sources else "user"
        out.servers[name] = McpServerSpec(name, cfg, source, origin)
    if read_workspace_json:
        for spec in _read_mcp_json(root / MCP_JSON, out.warnings):
            if spec.name in out.servers:
                out.warnings.append(
                    f"{MCP_JSON}: server {spec.name!r} is also defined in {out.servers[spec.name].source}; that one is used"
                )
                continue
            out.servers[spec.name] = spec
    seen: dict[str, str] = {}
    for spec in out.servers.values():
        spec.fingerprint = fingerprint(spec.name, spec.config)
        if spec.origin == "workspace":
            spec.approved = approvals.is_approved(root, spec)
        prefix = safe_name(spec.name)
        if prefix in seen:
            spec.problem = f"its tool prefix mcp_{prefix}_ clashes with server {seen[prefix]!r}; rename one"
        seen.setdefault(prefix, spec.name)
    return out


def _source_of(name: str, sources: Mapping[str, str]) -> str:
    prefix = f"mcp.servers.{name}."
    for key, label in sources.items():
        if key.startswith(prefix) and label != "default":
            return label
    return "config"


def _read_mcp_json(path: Path, warnings: list[str]) -> list[McpServerSpec]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: not readable as JSON ({exc}); its servers are ignored")
        return []
    block = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(block, dict):
        warnings.append(f"{path}: no \"mcpServers\" object; nothing to load")
        return []
    known = set(McpServerConfig.model_fields)
    specs: list[McpServerSpec] = []
    for name, raw in block.items():
        if not isinstance(raw, dict):
            specs.append(_invalid(name, path, "its definition is not an object"))
            continue
        raw = dict(raw)
        if raw.get("type") in ("streamable-http", "streamableHttp", "streamable_http"):
            raw["type"] = "http"
        if "type" not in raw and "url" in raw:
            raw["type"] = "http"
        if "disabled" in raw and "enabled" not in raw:  # a spelling other agents use
            raw["enabled"] = not bool(raw.pop("disabled"))
        ignored = sorted(set(raw) - known)
        if ignored:
            warnings.append(f"{path}: server {name!r}: ignoring keys {', '.join(ignored)}")
        try:
            cfg = McpServerConfig.model_validate({k: v for k, v in raw.items() if k in known})
        except ValidationError as exc:
            reason = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'definition'}: {e['msg']}" for e in exc.errors())
            specs.append(_invalid(name, path, reason[:300]))
            continue
        specs.append(McpServerSpec(name, cfg, str(path), "workspace"))
    return specs


def _invalid(name: str, path: Path, reason: str) -> McpServerSpec:
    placeholder = McpServerConfig(command="false", enabled=False)
    return McpServerSpec(name, placeholder, str(path), "workspace", problem=reason)


def describe(spec: McpServerSpec) -> dict[str, Any]:
    """What a person needs to decide on approving a server: exactly what would run."""
    c = spec.config
    what = " ".join([c.command or "", *c.args]).strip() if c.type == "stdio" else f"{c.type} {c.url}"
    return {"name": spec.name, "source": spec.source, "runs": what, "env": sorted(c.env),
            "headers": sorted(c.headers), "variables": variables(c)}

"""The core services one editor connection uses, built lazily from the workspace
root and the effective config.

The LSP features never construct core objects themselves; they ask here. A
service whose module is missing or fails to build raises `FeatureUnavailable`
with a message for the person, so one broken part does not stop the others.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from deepseek_ls.workspace import state_dir

if TYPE_CHECKING:
    from deepseek_ls.config_models import Config
    from deepseek_ls.ui_port import UIPort

log = logging.getLogger(__name__)


class FeatureUnavailable(RuntimeError):
    """A core service cannot be used; `str()` says which and why."""


EDITOR_SETTINGS = "editor settings"


class Services:
    def __init__(
        self, root: Path, config: Config, ui: UIPort, *, on_state_change: Callable[[Any], None] | None = None,
        applier: Callable[..., Any] | None = None, restorer: Callable[..., Any] | None = None,
    ) -> None:
        self.root = root
        self.config = config
        self.ui = ui
        # Given to every agent built here (a rebuilt agent after new settings too).
        self.on_state_change = on_state_change
        self.applier = applier  # how the agent's own applies reach the editor (`World.applier`)
        self.restorer = restorer  # how its undos do (`Agent.restorer`)
        self._built: dict[str, Any] = {}
        self.overlay = self._try("overlay", self._make_overlay)

    @property
    def state_dir(self) -> Path:
        """`.deepseek/`, created (and excluded from git) on first use, not merely
        because an editor opened the folder."""
        return state_dir(self.root)

    # -- building ---------------------------------------------------------
    def _get(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self._built:
            try:
                self._built[name] = make()
            except FeatureUnavailable:
                raise
            except ImportError as error:
                raise FeatureUnavailable(
                    f"deepseek-ls: {name} is not available in this build ({error})."
                ) from error
            except Exception as error:
                log.exception("could not start %s", name)
                raise FeatureUnavailable(f"deepseek-ls: could not start {name}: {error}") from error
        return self._built[name]

    def _try(self, name: str, make: Callable[[], Any]) -> Any:
        try:
            return self._get(name, make)
        except FeatureUnavailable as error:
            log.warning("%s", error)
            return None

    def reconfigure(self, config: Config) -> list[Any]:
        """New settings: services that hold config are rebuilt on next use. Returns
        the replaced LLM client(s), for the caller to close."""
        self.config = config
        dropped = [self._built.pop(name, None) for name in ("llm", "mcp", "agent", "index", "patch store")]
        # The LLM client and the MCP servers of the old config are closed by the caller.
        return [d for d in dropped[:2] if d is not None]

    async def aclose(self) -> None:
        for name in ("llm", "mcp"):
            service = self._built.get(name)
            if service is not None:
                await service.aclose()

    # -- the services -----------------------------------------------------
    @property
    def patches(self) -> Any:
        return self._get("patch store", self._make_patches)

    @property
    def index(self) -> Any:
        return self._get("index", self._make_index)

    @property
    def llm(self) -> Any:
        return self._get("llm", self._make_llm)

    @property
    def agent(self) -> Any:
        return self._get("agent", self._make_agent)

    @property
    def mcp(self) -> Any:
        return self._get("mcp", self._make_mcp)

    def index_if_built(self) -> Any | None:
        """The index when enabled and already built on disk; None otherwise (a save
        must not start a full build)."""
        if not self.config.index.enabled:
            return None
        index = self._try("index", self._make_index)
        return index if index is not None and index.is_built() else None

    def _make_overlay(self) -> Any:
        from deepseek_ls.patch.overlay import DocumentOverlay

        return DocumentOverlay(self.root)

    def _make_patches(self) -> Any:
        from deepseek_ls.patch import PatchStore, SafetyGate
        from deepseek_ls.policy import PathPolicy

        # The agent's store routes PatchApplied/PatchRejected to the session that
        # staged the patch; use it whenever the agent can run.
        agent = self._try("agent", self._make_agent)
        if agent is not None:
            return agent.patches
        policy = PathPolicy(self.root, self.config.policy.deny_paths)
        gate = SafetyGate.from_config(self.config.agent_loop, self.config.policy)
        return PatchStore(self.root, self.state_dir, policy=policy, overlay=self.overlay, gate=gate)

    def _make_index(self) -> Any:
        from deepseek_ls.index import CodeIndex

        return CodeIndex.for_workspace(self.root, self.state_dir, self.config)

    def _make_llm(self) -> Any:
        from deepseek_ls.llm.client import LLMClient

        # The client's default hook is the policy layer's redact_obj (every request body).
        return LLMClient(self.config.llm)

    def _make_mcp(self) -> Any:
        from deepseek_ls.tools.mcp import McpManager

        return McpManager(self.root, self.mcp_servers(), self.config.mcp, log_dir=self.root / ".deepseek" / "mcp",
                          deny_paths=self.config.policy.deny_paths)

    def mcp_servers(self) -> Any:
        """The MCP server definitions as of now (files re-read, approvals re-checked)."""
        from deepseek_ls.config import load_config, workspace_config_path
        from deepseek_ls.tools.mcp.servers import McpServerSet, load_servers

        if not self.config.mcp.enabled:
            return McpServerSet()
        from deepseek_ls.trust import workspace_trust

        # Which layer defined each server decides whether it needs approval: the workspace file
        # and .mcp.json are the repository's. So are the editor's settings until the workspace is
        # trusted (a repository's .vscode/settings.json can define or change a server there).
        try:
            loaded = load_config(self.root)
            sources, from_files = dict(loaded.sources), loaded.config.mcp.servers
        except Exception:  # noqa: BLE001 - a broken file: its servers are not used at all
            sources, from_files = {}, {}
        untrusted = []
        if not workspace_trust(self.root).trusted:
            for name, cfg in self.config.mcp.servers.items():
                if from_files.get(name) != cfg:  # defined or changed by the editor's settings
                    sources = {k: v for k, v in sources.items() if not k.startswith(f"mcp.servers.{name}.")}
                    sources[f"mcp.servers.{name}.command"] = EDITOR_SETTINGS
            untrusted.append(EDITOR_SETTINGS)
        return load_servers(self.root, self.config.mcp.servers, sources,
                            workspace_config=workspace_config_path(self.root),
                            read_workspace_json=self.config.mcp.read_workspace_json,
                            untrusted_sources=untrusted)

    def _make_agent(self) -> Any:
        from deepseek_ls.agent.assemble import build_agent

        return build_agent(
            self.root, self.config, ui=self.ui, llm=self.llm, overlay=self.overlay,
            index=self._try("index", self._make_index) if self.config.index.enabled else None,
            mcp=self._try("mcp", self._make_mcp), state_dir=self.state_dir,
            applier=self.applier, restorer=self.restorer, on_state_change=self.on_state_change,
        )

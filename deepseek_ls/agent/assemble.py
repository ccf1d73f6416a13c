"""`build_agent(...)`: the one way to build the `Agent`.

The language server (`lsp/services.py`), ACP (`acp/wiring.py`), the CLI (`cli/agent_cmd.py`) and
teammate lanes (`lane_agent`, the factory `LaneRunner` is handed) all build it here. What differs
between them is an argument — the UI port, where documents are read from, how an editor applies
and undoes, the index and MCP servers, the model client to share, a state listener, read-only —
and the agent comes back fully wired: nothing is assigned onto it afterwards.

The index and the MCP servers are made one way: `CodeIndex.for_workspace` (used only when built,
unless the caller shares its own) and `McpManager.for_workspace` (the config's layers decide which
servers need the person's approval; `extra_mcp_servers` are the person's client's).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from deepseek_ls.agent.agent import Agent, Restorer
from deepseek_ls.agent.state import StateListener
from deepseek_ls.agent.world import Applier
from deepseek_ls.config_models import Config
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.ui_port import UIPort
from deepseek_ls.workspace import state_dir as workspace_state_dir

if TYPE_CHECKING:
    from deepseek_ls.config import LoadedConfig
    from deepseek_ls.llm.capacity import ModelManager
    from deepseek_ls.tools.mcp import McpManager
    from deepseek_ls.tools.mcp.servers import McpServerSpec

log = logging.getLogger("deepseek_ls.agent")

IF_BUILT = "if_built"


def build_agent(
    root: Path,
    config: Config,
    *,
    ui: UIPort,
    llm: Any = None,
    overlay: DocumentOverlay | None = None,
    index: Any = IF_BUILT,
    loaded: LoadedConfig | None = None,
    extra_mcp_servers: Iterable[McpServerSpec] = (),
    mcp: McpManager | None = None,
    applier: Applier | None = None,
    restorer: Restorer | None = None,
    on_state_change: StateListener | None = None,
    state_dir: Path | None = None,
    patch_dir: Path | None = None,
    session_extra: dict[str, Any] | None = None,
    models: ModelManager | None = None,
    clock: Callable[[], float] = time.monotonic,
    read_only: bool = False,
    lanes: bool = True,
    warn: Callable[[str], None] = log.warning,
) -> Agent:
    """The agent of workspace `root` under `config`, wired for its adapter.

    - `ui`: the adapter's `UIPort` (approvals, questions, streamed text).
    - `llm`: a model client to use (the language server's service, a lane's owner's); None: a new
      `LLMClient(config.llm)`. Either way the caller closes it (`agent.llm.aclose()`).
    - `overlay`: where the text the person sees comes from (an editor's open buffers); None: the disk.
    - `index`: `"if_built"` — the workspace's index when it has been built (a one-off command does
      not wait for a build; one that cannot be opened is `warn`ed about and left out); a `CodeIndex`
      to share (the language server's, kept fresh on save); None: no index.
    - `loaded`: the config's layers; with it the agent gets the workspace's MCP servers (each
      needing approval or not by the layer that defined it) plus `extra_mcp_servers` (an ACP
      client's `session/new`). `mcp`: a manager to share instead (the language server's, which it
      shows and refreshes). Neither: no MCP servers.
    - `applier`, `restorer`: how an editor applies the loop's changes and undoes them (into its
      buffers, never over unsaved typing); None: the disk.
    - `on_state_change`: told every session transition once it is durable.
    - `read_only`: the review path's agent — every session's tools only read, no lanes.
    - `lanes`: whether it runs teammate lanes (built by `lane_agent`).
    - `warn`: where problems that leave a part out are told (the index, MCP definitions).
    `state_dir`, `patch_dir`, `session_extra`, `models`, `clock`: see `Agent`.
    """
    sdir = Path(state_dir) if state_dir else workspace_state_dir(Path(root))
    if llm is None:
        from deepseek_ls.llm.client import LLMClient

        llm = LLMClient(config.llm)
    return Agent(
        root, config, llm=llm, ui=ui, overlay=overlay,
        index=_index(Path(root), sdir, config, index, warn),
        mcp=mcp if mcp is not None else _mcp(Path(root), sdir, loaded, extra_mcp_servers, warn),
        state_dir=sdir, patch_dir=patch_dir, session_extra=session_extra, models=models,
        applier=applier, restorer=restorer, on_state_change=on_state_change, clock=clock,
        read_only=read_only, lane_agents=lane_agent if lanes else None,
    )


def lane_agent(root: Path, config: Config, *, ui: UIPort, llm: Any, state_dir: Path, patch_dir: Path,
               session_extra: dict[str, Any]) -> Agent:
    """A teammate lane's agent (`lanes.runner.LaneAgentFactory`): no index (the worktree is new), no
    MCP servers, no lanes of its own, the owner's model client and session store."""
    return build_agent(root, config, ui=ui, llm=llm, index=None, state_dir=state_dir, patch_dir=patch_dir,
                       session_extra=session_extra, lanes=False)


def _index(root: Path, sdir: Path, config: Config, index: Any, warn: Callable[[str], None]) -> Any:
    if not isinstance(index, str):
        return index
    if index != IF_BUILT:
        raise ValueError(f"index={index!r}: give 'if_built', an index or None")
    if not config.index.enabled:
        return None
    try:
        from deepseek_ls.index import CodeIndex

        candidate = CodeIndex.for_workspace(root, sdir, config)
        return None if candidate.status().state == "missing" else candidate
    except Exception as exc:  # noqa: BLE001 - planning works without the index, slower
        warn(f"index unavailable ({exc}); planning without it")
        return None


def _mcp(root: Path, sdir: Path, loaded: LoadedConfig | None, extra: Iterable[McpServerSpec],
         warn: Callable[[str], None]) -> McpManager | None:
    extra = list(extra)
    if loaded is None:
        if extra:
            raise ValueError("extra MCP servers need the workspace's config layers (loaded=)")
        return None
    from deepseek_ls.tools.mcp import McpManager

    manager = McpManager.for_workspace(root, loaded, sdir, extra=extra)
    for warning in manager.servers.warnings:
        warn(warning)
    return manager

"""Building one ACP session's `Agent`: the workspace's config, index and MCP servers (plus
the ones the client passed in `session/new`), and the client's files when it offers them.

When the client offers `fs.readTextFile`, files are read through it (so its unsaved
buffers are what the model sees); when it offers `fs.writeTextFile`, accepted changes
are written through it — both or neither, so a patch is never made against a buffer
and then written over the disk behind it. Reads on the event loop itself (rare) and any
failed client call fall back to the disk.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from deepseek_ls.tools.overlay import DocumentOverlay

log = logging.getLogger(__name__)
CLIENT_FILE_TIMEOUT = 30.0


class ClientFiles:
    """Blocking reads and writes through the ACP client, for worker threads."""

    def __init__(self, conn: Any, session_id: str, root: Path, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.session_id = session_id
        self.root = root
        self.loop = loop

    def _call(self, coro: Any) -> Any:
        if _on_loop(self.loop):  # waiting here would deadlock the loop the answer must arrive on
            coro.close()
            raise RuntimeError("client file access from the event loop thread")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(CLIENT_FILE_TIMEOUT)

    def read(self, relpath: str) -> str | None:
        try:
            response = self._call(self.conn.read_text_file(session_id=self.session_id, path=str(self.root / relpath)))
        except Exception as exc:  # noqa: BLE001 - the disk is the fallback
            log.debug("fs/read_text_file %s: %s", relpath, exc)
            return None
        return getattr(response, "content", None)

    def write(self, relpath: str, text: str) -> bool:
        try:
            self._call(self.conn.write_text_file(session_id=self.session_id, path=str(self.root / relpath), content=text))
        except Exception as exc:  # noqa: BLE001 - written to disk instead
            log.warning("fs/write_text_file %s failed (%s); writing to disk", relpath, exc)
            return False
        return True


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class ClientOverlay(DocumentOverlay):
    """The open-buffer view, asked of the ACP client file by file."""

    def __init__(self, root: Path, files: ClientFiles) -> None:
        super().__init__(root)
        self.files = files

    def get(self, relpath: str) -> tuple[str, int | None] | None:
        doc = super().get(relpath)
        if doc is not None or _on_loop(self.files.loop):
            return doc
        text = self.files.read(relpath)
        return (text, None) if text is not None else None


def session_mcp_servers(servers: list[Any]) -> dict[str, Any]:
    """ACP `mcpServers` (stdio / http / sse) as our server definitions (the client's, so trusted)."""
    from deepseek_ls.config_models import McpServerConfig

    out: dict[str, Any] = {}
    for s in servers:
        kind = getattr(s, "type", None) or "stdio"
        name = getattr(s, "name", "") or f"server{len(out) + 1}"
        try:
            if kind in ("http", "sse"):
                out[name] = McpServerConfig(type=kind, url=s.url, headers={h.name: h.value for h in s.headers or []})
            elif kind == "stdio":
                out[name] = McpServerConfig(command=s.command, args=list(s.args or []),
                                            env={e.name: e.value for e in s.env or []})
        except Exception as exc:  # noqa: BLE001 - one bad definition does not stop the session
            log.warning("ignoring MCP server %r from the client: %s", name, exc)
    return out


def build_agent(root: Path, loaded: Any, ui: Any, mcp_servers: list[Any], *, conn: Any, session_id: str,
                client_capabilities: Any) -> Any:
    from deepseek_ls.agent import Agent
    from deepseek_ls.config import load_config, workspace_config_path
    from deepseek_ls.llm.client import LLMClient
    from deepseek_ls.tools.mcp import McpManager
    from deepseek_ls.tools.mcp.servers import McpServerSpec
    from deepseek_ls.workspace import state_dir

    if loaded.workspace_path != workspace_config_path(root):
        loaded = load_config(root)  # the session's own workspace, with its trust and layers
    config = loaded.config
    sdir = state_dir(root)
    fs = getattr(client_capabilities, "fs", None)
    both = bool(fs is not None and getattr(fs, "read_text_file", False) and getattr(fs, "write_text_file", False))
    files = ClientFiles(conn, session_id, root, asyncio.get_running_loop()) if both else None
    overlay = ClientOverlay(root, files) if files else DocumentOverlay(root)
    index = None
    if config.index.enabled:
        try:
            from deepseek_ls.index import CodeIndex

            candidate = CodeIndex(root, sdir, config.index, deny_paths=config.policy.deny_paths)
            index = None if candidate.status().state == "missing" else candidate
        except Exception as exc:  # noqa: BLE001 - planning works without the index
            print(f"deepseek-ls acp: index unavailable ({exc})", file=sys.stderr)
    mcp = McpManager.for_workspace(root, loaded, sdir)
    extra = session_mcp_servers(mcp_servers)
    if extra:
        servers = mcp.servers
        for name, cfg in extra.items():
            servers.servers[name] = McpServerSpec(name, cfg, "the editor (session/new)", "user")
        mcp = McpManager(root, servers, config.mcp, log_dir=sdir / "mcp", deny_paths=config.policy.deny_paths)
    agent = Agent(root, config, llm=LLMClient(config.llm), ui=ui, overlay=overlay, index=index, mcp=mcp,
                  state_dir=sdir)
    if files is not None:
        agent.patches.write_through = files.write
    return agent


def undo_latest(agent: Any) -> str:
    """`/undo`: take back the latest apply that is not undone yet (the workspace's, as `deepseek-ls
    apply --undo`), three-way against the text as it is now, so what was typed since stays; an
    overlap refuses it, nothing changed. When the client offers its files, the text is read from and
    written through it (a file the apply created is removed from the disk); else the disk. Blocking
    (client calls from a worker thread): run it with `asyncio.to_thread`. Returns what to tell."""
    from deepseek_ls.patch.model import PatchError

    store, write = agent.patches, agent.patches.write_through
    latest = store.checkpoints.latest_unrestored()
    if latest is None:
        return "Nothing to undo: every applied change is already undone."
    try:
        if write is None:
            plan = store.undo_on_disk([latest])
            assert plan is not None
            via = "disk"
        else:
            plan = store.plan_undo([latest], lambda rel: _text_now(agent, rel))
            _write_undo(agent, plan.files, write)
            via = "fs/write_text_file"
            store.finish_undo(plan, via)
    except (PatchError, OSError) as exc:
        return f"[undo refused] {exc}"
    merged = [f.path for f in plan.files if f.merged]
    lines = [f"Undid the latest apply ({', '.join(plan.restored) or 'no file'}) through {via}."]
    if merged:
        lines.append(f"Edits made since were kept in {', '.join(merged)}.")
    if plan.kept:
        lines.append(f"Left as they are (changed since, nothing of the apply to take out): {', '.join(plan.kept)}.")
    return "\n".join(lines)


def _text_now(agent: Any, rel: str) -> str | None:
    """The text the person sees: the client's buffer, else the disk (None: no such file)."""
    try:
        return agent.overlay.read_text(rel)
    except (OSError, ValueError):  # missing, unreadable, not UTF-8, refused by the policy
        return None


def _write_undo(agent: Any, files: list[Any], write: Any) -> None:
    """Each file's restored text through the client (a removal on the disk), all or nothing: a
    write the client refuses puts back what was written and refuses the undo."""
    from deepseek_ls.patch.model import PatchError
    from deepseek_ls.policy import safe_files

    written: list[Any] = []
    try:
        for f in files:
            if f.target is None:
                if _text_now(agent, f.path) != f.now:
                    raise PatchError(f"{f.path} changed while undoing; nothing was changed")
                safe_files.unlink(agent.root, f.path)
            elif not write(f.path, f.target):
                raise PatchError(f"the client did not write {f.path}; nothing was changed")
            written.append(f)
    except (PatchError, OSError):
        for f in reversed(written):
            try:
                if f.now is None:
                    safe_files.unlink(agent.root, f.path)
                elif f.target is None:
                    safe_files.write_bytes(agent.root, f.path, f.now.encode("utf-8", "surrogatepass"))
                else:
                    write(f.path, f.now)
            except OSError:
                log.warning("could not put %s back after a refused undo", f.path)
        raise


"""The deepseek-ls language server: a thin pygls 2.x adapter over the core.

`DeepSeekServer` holds the per-connection state (workspace root, settings,
services, pending approvals, background tasks); each feature lives in its own
module with a ``register(server)`` function, added by `create_server()`.
A feature that fails to register is logged and left out; the others still work.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from deepseek_ls import __version__
from deepseek_ls.lsp.buffer_sync import BufferSync
from deepseek_ls.lsp.questions import QuestionBroker
from deepseek_ls.lsp.tasks import BackgroundTasks
from deepseek_ls.lsp.transport.decoding import strict_converter
from deepseek_ls.lsp.transport.limits import Limits, cap
from deepseek_ls.lsp.transport.protocol import HardenedProtocol
from deepseek_ls.lsp.transport.serving import serve_stdio, serve_tcp
from deepseek_ls.lsp.uris import relpath_to_uri

if TYPE_CHECKING:
    from deepseek_ls.config_models import Config
    from deepseek_ls.lsp.approvals import ApprovalBroker, LspUI
    from deepseek_ls.lsp.services import Services
    from deepseek_ls.lsp.settings import Settings

log = logging.getLogger(__name__)

# One module per feature, in registration order. Each exposes `register(server)`.
FEATURE_MODULES = (
    "deepseek_ls.lsp.lifecycle",
    "deepseek_ls.lsp.documents",
    "deepseek_ls.lsp.progress",
    "deepseek_ls.lsp.approvals",
    "deepseek_ls.lsp.questions",
    "deepseek_ls.lsp.edits",
    "deepseek_ls.lsp.code_lens",
    "deepseek_ls.lsp.hover",
    "deepseek_ls.lsp.commands",
    "deepseek_ls.lsp.mission",
    "deepseek_ls.lsp.verification",
    "deepseek_ls.lsp.sessions",
    "deepseek_ls.lsp.transcript",
    "deepseek_ls.lsp.mcp",
    "deepseek_ls.lsp.trust",
    "deepseek_ls.lsp.lanes",
    "deepseek_ls.lsp.code_actions",
    "deepseek_ls.lsp.review",
)


class DeepSeekServer(LanguageServer):
    """The language server and the state of one editor connection."""

    def __init__(self) -> None:
        super().__init__(
            "deepseek-ls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=HardenedProtocol,
            converter_factory=strict_converter,
        )
        self.root: Path | None = None  # resolved: what the policy and the file guards check against
        self.client_root: Path | None = None  # the editor's spelling of `root` when it differs (a symlink)
        self.initialization_options: Any = None
        self.settings: Settings | None = None
        self.services: Services | None = None
        self.approvals: ApprovalBroker | None = None
        self.ui: LspUI | None = None
        # Clarifying questions of the agent waiting for `deepseek.answer`.
        self.questions = QuestionBroker()
        self.tasks = BackgroundTasks()
        # Whether the server's copy of each buffer is the editor's; applies to a file one at a time.
        self.buffer_sync = BufferSync()
        self.failed_features: dict[str, str] = {}
        # Messages for the person produced before the client could show them.
        self.pending_messages: list[str] = []
        self.pending_warnings: list[str] = []  # shown as warnings after `initialized` (workspace trust)
        # Called with a URI whenever the client changes / saves a buffer.
        self.document_listeners: list[Callable[[str], None]] = []
        self.save_listeners: list[Callable[[str], None]] = []
        self.index_debouncer: Any = None
        # Cached positions of staged hunks (edits.py) and listeners told when a
        # patch's hunks were accepted or rejected (the plan flow verifies steps).
        self.hunk_views: Any = None
        self.lens_cache: dict[str, tuple[Any, Any]] = {}
        self.patch_listeners: list[Callable[[str], Awaitable[None]]] = []
        # Views of sessions the editor has seen: {session_id: Session.view()}.
        self.session_views: dict[str, dict[str, Any]] = {}
        self.views_generation = 0  # bumped on every refresh (lens cache key)
        # The command task currently driving each session, and every running agent
        # command (ask/plan before their session exists too): deepseek.cancel cancels them.
        self.session_tasks: dict[str, asyncio.Task[Any]] = {}
        self.running_commands: set[asyncio.Task[Any]] = set()
        # Steps whose hunks are settled, verified once their files are saved:
        # {session_id: (step_id, files)}.
        self.pending_verification: dict[str, tuple[str, list[str]]] = {}
        # The session the editor is looking at (the last plan/ask/resume).
        self.active_session: str | None = None
        # The editor's teammate-mode switch (deepseek.toggleTeammateMode); None: agent_loop.teammate_mode.
        self.teammate_mode: bool | None = None

    @property
    def config(self) -> Config:
        if self.settings is not None:
            return self.settings.config
        from deepseek_ls.config_models import Config

        return Config()

    def show_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """`window/showMessage`: what happened and what to do, for the person."""
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def show_error(self, message: str) -> None:
        self.show_message(message, types.MessageType.Error)

    def show_warning(self, message: str) -> None:
        self.show_message(message, types.MessageType.Warning)

    def notify(self, method: str, params: Any) -> None:
        """Send one of our custom notifications (`deepseek/...`)."""
        self.protocol.notify(method, params)

    def patch_info(self, patch_id: str) -> dict[str, Any]:
        """What a session knows of a staged patch: step_id, profile, decision_id."""
        for view in self.session_views.values():
            for record in view.get("patches") or []:
                if record.get("patch_id") == patch_id:
                    return {**record, "session_id": view.get("session_id")}
        return {}

    def uri_of(self, relpath: str) -> str:
        """The URI of the workspace file `relpath`, spelled as the editor spells the root (a
        symlink it opened the workspace through), so it names the editor's buffer (`uris`)."""
        assert self.root is not None
        uri = relpath_to_uri(self.root, relpath, self.client_root)
        if self.client_root is not None and unquote(uri) not in self.workspace.text_documents:
            real = relpath_to_uri(self.root, relpath)
            if unquote(real) in self.workspace.text_documents:  # this buffer it opened under the real path
                return real
        return uri

    def client_supports(self, *path: str) -> bool:
        """True when the client's capabilities have a truthy value at `path`."""
        node: Any = self.client_capabilities
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls' hook for errors outside a request's response. Logged (and so
        forwarded to `window/logMessage`); a failing notification handler is also
        shown, since the person may be waiting on it. Never raises into the IO loop."""
        name = getattr(source, "__name__", str(source))
        if isinstance(error, JsonRpcRequestCancelled):
            log.info("%s", error)  # the person cancelled: not a server error
            return
        if name == "FeatureRequestError":
            return  # answered to the client, and logged where it was raised
        log.error("server error (%s): %s", name, cap(str(error), 500))
        if name == "FeatureNotificationError":
            self.show_error(f"deepseek-ls: an editor notification could not be handled: {cap(str(error))}")


def create_server() -> DeepSeekServer:
    """Build a server with every feature registered."""
    server = DeepSeekServer()
    for name in FEATURE_MODULES:
        try:
            importlib.import_module(name).register(server)
        except Exception as error:  # noqa: BLE001 - one feature must not take the others down
            server.failed_features[name] = f"{type(error).__name__}: {error}"
            log.exception("feature %s failed to register; continuing without it", name)
    return server


def run(
    transport: str = "stdio", host: str = "127.0.0.1", port: int = 2087, max_message_bytes: int | None = None
) -> int:
    """Run the server until the client sends `exit` or disconnects (`deepseek-ls
    serve`); the process exit code (0 after `shutdown`, else 1)."""
    from deepseek_ls.lsp.logging import configure_stderr_logging

    configure_stderr_logging()
    limits = Limits.from_env(max_message_bytes)
    server = create_server()
    if transport == "tcp":
        return serve_tcp(server, limits, host, port)
    if transport == "stdio":
        return serve_stdio(server, limits)
    raise ValueError(f"unknown transport {transport!r}; use 'stdio' or 'tcp'")

"""`DeepSeekServer`: one editor connection's wiring, below every feature.

It holds what every feature is wired to — the workspace root, the settings, the
core services, the UI port the agent talks through, the background tasks — and
each feature's own state (`feature_state`), which the feature module defines and
the server only keeps. Features import this module; it imports none of them
(`setup.py` registers them), so a feature is a unit on its own, as in pygls'
examples and esbonio.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.lsp.server import LanguageServer

from deepseek_ls import __version__
from deepseek_ls.lsp.tasks import BackgroundTasks
from deepseek_ls.lsp.transport.decoding import strict_converter
from deepseek_ls.lsp.transport.limits import cap
from deepseek_ls.lsp.transport.protocol import HardenedProtocol
from deepseek_ls.lsp.uris import relpath_to_uri

if TYPE_CHECKING:
    from deepseek_ls.config_models import Config
    from deepseek_ls.lsp.services import Services
    from deepseek_ls.lsp.settings import Settings
    from deepseek_ls.ui_port import UIPort

log = logging.getLogger(__name__)

S = TypeVar("S")


class DeepSeekServer(LanguageServer):
    """The language server of one editor connection: its wiring, and its features' state."""

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
        self.settings: Settings | None = None
        self.services: Services | None = None
        self.ui: UIPort | None = None  # how the agent asks and tells the person (`approvals.LspUI`)
        self.tasks = BackgroundTasks()
        self.failed_features: dict[str, str] = {}  # module -> why it could not be registered (`setup.py`)
        self._feature_states: dict[type[Any], Any] = {}

    def feature_state(self, kind: type[S]) -> S:
        """This connection's state of one feature: the `kind()` the feature module defines
        (`BufferSync`, `QuestionBroker`, `SessionViews`, ...), made on first use and kept
        for the connection. The feature owns what it holds; the server only keeps it."""
        state = self._feature_states.get(kind)
        if state is None:
            state = self._feature_states[kind] = kind()
        return state

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

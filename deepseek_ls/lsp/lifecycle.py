"""initialize / initialized / shutdown and settings changes."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from deepseek_ls.lsp import documents, names, text_sync
from deepseek_ls.lsp.approvals import ApprovalBroker, LspUI
from deepseek_ls.lsp.logging import detach_client_logs, forward_logs_to_client
from deepseek_ls.lsp.questions import QuestionBroker
from deepseek_ls.lsp.server import DeepSeekServer
from deepseek_ls.lsp.services import Services
from deepseek_ls.lsp.session_views import state_changed, status
from deepseek_ls.lsp.uris import editor_spelling

log = logging.getLogger(__name__)


@dataclass
class Initialization:
    """What `initialize` said that `initialized` sets up with (`DeepSeekServer.feature_state`)."""

    options: Any = None  # the client's initializationOptions (the editor's settings)


def workspace_root(params: types.InitializeParams) -> Path:
    """The folder the editor opened: first workspace folder, else rootUri/rootPath, else cwd."""
    candidate = _root_as_sent(params)
    return Path(candidate).resolve() if candidate else Path.cwd().resolve()


def _root_as_sent(params: types.InitializeParams) -> str | None:
    candidates: list[str | None] = []
    if params.workspace_folders:
        candidates.append(to_fs_path(params.workspace_folders[0].uri))
    if params.root_uri:
        candidates.append(to_fs_path(params.root_uri))
    candidates.append(params.root_path)
    return next((c for c in candidates if c), None)


def initialize(ls: DeepSeekServer, params: types.InitializeParams) -> None:
    """Only what the response needs: the root. Config, settings and services are
    set up in `initialized`, after the response (pydantic and the config files
    are not on the start-up path). Nothing is logged here: the first record loads
    the redaction rules (~0.2 s, `policy/log_gate.py`), which the answer must not wait for."""
    text_sync.install(ls)  # positions in the negotiated encoding, LSP's line breaks
    ls.root = workspace_root(params)
    sent = _root_as_sent(params)
    # The editor names files under its own spelling of the root (e.g. a symlink to it): URIs the
    # server sends are spelled the same way, or they would never match the editor's buffers.
    ls.client_root = editor_spelling(sent, ls.root) if sent else None
    ls.feature_state(Initialization).options = params.initialization_options


def _set_up(ls: DeepSeekServer) -> tuple[list[str], list[str]]:
    """Settings, the UI port and the services; the errors and warnings for the person."""
    from deepseek_ls.lsp.settings import Settings, SettingsError, load_base_config

    assert ls.root is not None
    from deepseek_ls.trust import workspace_trust

    errors: list[str] = []
    warnings: list[str] = []  # shown as warnings (workspace trust)
    base, load_error, trust_warning = load_base_config(ls.root)
    root = ls.root
    ls.settings = Settings(base, trusted=lambda: workspace_trust(root).trusted)
    if load_error:
        errors.append(load_error)
    if trust_warning:
        warnings.append(trust_warning)
    try:
        ls.settings.apply(ls.feature_state(Initialization).options)
    except SettingsError as error:
        errors.append(str(error))
    if (ignored := ls.settings.take_trust_warning()) is not None:
        warnings.append(ignored)
    ls.ui = LspUI(ls, ls.feature_state(ApprovalBroker))
    loop = asyncio.get_running_loop()  # the server's; transitions made on other threads are handed to it
    ls.services = Services(
        ls.root, ls.config, ls.ui, on_state_change=lambda change: state_changed(ls, change, loop),
        # The agent's own store is the server's (`edits.patch_store`), which the apply looks the patch up in.
        applier=lambda _patches, patch_id, hunk_ids=None: _apply_in_editor(ls, patch_id, hunk_ids),
        restorer=lambda checkpoint_ids: _undo_in_editor(ls, checkpoint_ids),
    )
    ls.tasks.on_error = lambda name, error: ls.show_error(f"deepseek-ls: {name} failed: {error}")
    return errors, warnings


async def _apply_in_editor(ls: DeepSeekServer, patch_id: str, hunk_ids: list[str] | None) -> Any:
    """Every patch the agent applies itself lands through `workspace/applyEdit` (`editor_apply`)."""
    from deepseek_ls.lsp.editor_apply import apply_patch

    return await apply_patch(ls, patch_id, hunk_ids)


async def _undo_in_editor(ls: DeepSeekServer, checkpoint_ids: list[str]) -> Any:
    """Every undo lands on the buffers through `workspace/applyEdit` (`editor_undo`)."""
    from deepseek_ls.lsp.editor_undo import undo_checkpoints

    return await undo_checkpoints(ls, checkpoint_ids)


def initialized(ls: DeepSeekServer, params: types.InitializedParams) -> None:
    log.info("workspace root %s%s", ls.root, f" (the editor's spelling: {ls.client_root})" if ls.client_root else "")
    forward_logs_to_client(ls)
    errors, warnings = _set_up(ls)
    documents.initialized(ls)
    # The core (agent, patch store, router) is imported after the initialize
    # response, off the event loop, so the editor is not kept waiting.
    ls.tasks.spawn(asyncio.to_thread(_warm_imports), "load the core")
    ls.notify(names.NOTIFY_STATUS, status(ls))  # status bars start from "Idle"
    for message in errors:
        ls.show_error(message)
    for message in warnings:
        ls.show_warning(message)
    for name, reason in ls.failed_features.items():
        ls.show_error(f"deepseek-ls: feature {name} is disabled: {reason}")


def _warm_imports() -> None:
    import deepseek_ls.agent  # noqa: F401
    import deepseek_ls.patch  # noqa: F401
    import deepseek_ls.router  # noqa: F401


def did_change_configuration(ls: DeepSeekServer, params: types.DidChangeConfigurationParams) -> None:
    from deepseek_ls.lsp.settings import SettingsError

    if ls.settings is None:
        return
    try:
        config = ls.settings.apply(params.settings)
    except SettingsError as error:
        ls.show_error(str(error))
        return
    if (ignored := ls.settings.take_trust_warning()) is not None:
        ls.show_warning(ignored)
    if ls.services is not None:
        for client in ls.services.reconfigure(config):
            ls.tasks.spawn(client.aclose(), "close the previous LLM client")
    from deepseek_ls.lsp.settings_events import SettingsEvents

    for listener in ls.feature_state(SettingsEvents).changed:
        try:
            listener()
        except Exception:  # noqa: BLE001 - the settings are applied; logged
            log.exception("settings listener failed")


async def shutdown(ls: DeepSeekServer, params: None) -> None:
    ls.tasks.cancel_all()
    ls.feature_state(ApprovalBroker).cancel_all()
    ls.feature_state(QuestionBroker).cancel_all()
    if ls.services is not None:
        try:
            await ls.services.aclose()
        except Exception:  # noqa: BLE001 - shutting down regardless
            log.exception("closing services failed")
    detach_client_logs()
    _cancel_pending_requests(ls)


def _cancel_pending_requests(ls: DeepSeekServer) -> None:
    """Cancel what is in flight (the editor's commands, our requests to it) before pygls does:
    its shutdown cancels them while iterating over the same table, which a command's
    cancellation changes (`RuntimeError: dictionary changed size during iteration`)."""
    protocol = ls.protocol
    current, this_task = protocol.msg_id, asyncio.current_task()  # the shutdown request and this handler
    for msg_id, future in list(protocol._request_futures.items()):  # noqa: SLF001 - pygls 2.x bookkeeping
        if msg_id != current and future is not this_task and not future.done():
            future.cancel()


def register(server: DeepSeekServer) -> None:
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.SHUTDOWN)(shutdown)

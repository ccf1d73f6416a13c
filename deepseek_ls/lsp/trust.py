"""`deepseek.trustWorkspace` / `deepseek.untrustWorkspace`: the editor's way to `deepseek-ls trust`.

Trusting re-reads the workspace's config files, so settings that loosen policy
take effect at once (services holding the old config are rebuilt on next use).
"""

from __future__ import annotations

from typing import Any

from deepseek_ls.lsp import names
from deepseek_ls.lsp.server import DeepSeekServer


def _store() -> Any:
    from deepseek_ls.config import user_config_path
    from deepseek_ls.trust import TrustStore, trust_file

    return TrustStore(trust_file(user_config_path()))


def _reload(ls: DeepSeekServer) -> dict[str, Any]:
    from deepseek_ls.lsp.settings import load_base_config

    assert ls.root is not None and ls.settings is not None
    base, error, warning = load_base_config(ls.root)
    if error:
        ls.show_error(error)
    if warning:
        ls.show_warning(warning)
    ls.settings.base = base
    config = ls.settings.apply({})
    if (ignored := ls.settings.take_trust_warning()) is not None:
        ls.show_warning(ignored)
    if ls.services is not None:
        for client in ls.services.reconfigure(config):
            ls.tasks.spawn(client.aclose(), "close the previous LLM client")
    return {"workspace": str(ls.root), "warning": warning, "ignored_editor_settings": list(ls.settings.ignored)}


def trust_workspace(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    if ls.root is None:
        raise ValueError("no workspace root")
    _store().trust(ls.root)
    result = _reload(ls)
    ls.show_message(f"deepseek-ls: {ls.root} is trusted; its .deepseek/config.toml applies in full.")
    return {"trusted": True, **result}


def untrust_workspace(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    if ls.root is None:
        raise ValueError("no workspace root")
    removed = _store().revoke(ls.root)
    result = _reload(ls)
    return {"trusted": False, "was_trusted": removed, **result}


def trust_status(ls: DeepSeekServer, args: Any) -> dict[str, Any]:
    """Whether this workspace is trusted and what is held back because it is not (editors show it:
    `:checkhealth deepseek`, VS Code's status bar)."""
    from deepseek_ls.config import load_config
    from deepseek_ls.trust import workspace_trust

    if ls.root is None or ls.settings is None:
        raise ValueError("no workspace root")
    state = workspace_trust(ls.root)
    try:
        ignored_files = load_config(ls.root).ignored_untrusted
    except Exception:  # noqa: BLE001 - a broken file is reported elsewhere; nothing of it applies
        ignored_files = []
    config = ls.settings.config
    return {
        "workspace": str(ls.root),
        "trusted": state.trusted,
        "state": state.reason,
        "ignored_workspace_config": ignored_files,
        "ignored_editor_settings": list(ls.settings.ignored),
        "effective": {
            "policy.approval_mode": config.policy.approval_mode,
            "agent_loop.mode": config.agent_loop.mode,
            "llm.base_url": config.llm.base_url,
            "llm.api_key_env": config.llm.api_key_env,
            "policy.allowlist": list(config.policy.allowlist),
        },
    }


def register(server: DeepSeekServer) -> None:
    from deepseek_ls.lsp.guard import command

    command(server, names.CMD_TRUST_WORKSPACE, trust_workspace)
    command(server, names.CMD_UNTRUST_WORKSPACE, untrust_workspace)
    command(server, names.CMD_TRUST_STATUS, trust_status)

"""Editor settings: the same keys as `.deepseek/config.toml`, layered on top of it.

Settings arrive in `initializationOptions` and `workspace/didChangeConfiguration`
as a nested object (``{"router": {"threshold_high": 0.8}}``), optionally wrapped
in a ``"deepseek"`` section as VS Code sends it. They are validated with the
typed config models; a bad value is reported and the previous value kept.

The server cannot tell a user-level setting from one a repository's
`.vscode/settings.json` supplied (editors merge them), so editor settings get the
workspace-trust rule of `.deepseek/config.toml` (`trust.py`): until the workspace
is trusted, values that loosen policy are ignored and the person is told which.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Mapping

from pydantic import ValidationError

from deepseek_ls.config import deep_merge, strip_loosening
from deepseek_ls.config_models import Config

log = logging.getLogger(__name__)

SECTION = "deepseek"


class SettingsError(ValueError):
    """Editor settings that do not validate; `str()` is the message for the person."""


def load_base_config(root: Path) -> tuple[Config, str | None, str | None]:
    """The workspace's effective config from files and environment. Returns the config,
    an error message when the files are invalid, and the workspace-trust warning when
    settings of an untrusted `.deepseek/config.toml` were ignored."""
    from deepseek_ls.config import load_config

    try:
        loaded = load_config(root)
    except Exception as error:  # noqa: BLE001 - a broken config.toml must not stop the server
        return Config(), f"deepseek-ls: the configuration could not be loaded ({error}); using defaults.", None
    return loaded.config, None, loaded.trust_warning()


def _unwrap(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise SettingsError(
            f"deepseek-ls settings must be an object with config sections, got {type(options).__name__}"
        )
    inner = options.get(SECTION)
    return dict(inner) if isinstance(inner, Mapping) else dict(options)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


class Settings:
    """The effective configuration of this connection: files, then editor overrides."""

    def __init__(self, base: Config, trusted: Callable[[], bool] = lambda: True) -> None:
        self.base = base
        self.trusted = trusted
        self.overrides: dict[str, Any] = {}
        self.config = base
        # Dotted keys of the editor's settings ignored because they loosen policy (untrusted workspace).
        self.ignored: list[str] = []
        self._reported: list[str] = []

    def apply(self, options: Any) -> Config:
        """Layer new editor settings; raises `SettingsError` (and keeps the previous
        effective config) when they do not validate."""
        overrides = _unwrap(options)
        candidate = deep_merge(self.overrides, overrides)
        try:
            config = Config.model_validate(deep_merge(self.base.model_dump(), candidate))
        except ValidationError as error:
            raise SettingsError(
                f"deepseek-ls: invalid setting ({_describe(error)}); the previous value is kept."
            ) from None
        ignored: list[str] = []
        if not self.trusted():
            kept, ignored = strip_loosening(self.base, candidate, "editor settings")
            if ignored:
                config = Config.model_validate(deep_merge(self.base.model_dump(), kept))
                log.warning("editor settings ignored in an untrusted workspace: %s", ", ".join(ignored))
        self.overrides = candidate  # kept whole: trusting the workspace later applies them
        self.config = config
        self.ignored = ignored
        log.info("settings applied: %s", sorted(overrides))
        return config

    def take_trust_warning(self) -> str | None:
        """The line for the person when editor settings are ignored (once per distinct set), else None."""
        if self.ignored == self._reported:
            return None
        self._reported = list(self.ignored)
        if not self.ignored:
            return None
        return (
            f"deepseek-ls: ignoring editor settings that loosen policy ({', '.join(self.ignored)}): this "
            "workspace is not trusted, and a repository's .vscode/settings.json can set them. If they are "
            "yours, trust the workspace ('DeepSeek: Trust Workspace', :DeepSeekTrust or `deepseek-ls trust`) "
            "or put them in your user config.toml."
        )

"""Who is told when the editor's settings changed: a light module, so a feature that listens
(hunk_actions) can be registered when the server is built without importing the config models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass
class SettingsEvents:
    """Who is told when the editor's settings changed (`DeepSeekServer.feature_state`): a feature
    whose switch turns something the client already shows on or off."""

    changed: list[Callable[[], None]] = field(default_factory=list)

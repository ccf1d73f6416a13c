"""Our own API key never reaches a command, whatever its variable is called and whatever it looks like.

`policy/env.py` drops variables whose name says credential (`DEEPSEEK_API_KEY`, `*_TOKEN`) or
whose value has a known shape (`sk-...`). A person using a local or self-hosted endpoint may name
the variable anything (`llm.api_key_env = "MODEL_ACCESS"`) and its key may have no known shape;
then the repository's `conftest.py`, run by an unprompted `pytest -q`, printed it to the model.
The key the LLM client reads is remembered: no variable holding it is passed to a command, and
redaction replaces it wherever it appears.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest
from sandbox_kit import SANDBOX, RecordingUI, make_workspace

from deepseek_ls.agent.world import World
from deepseek_ls.config_models import Config, PolicyConfig
from deepseek_ls.llm.profiles import resolve_profile
from deepseek_ls.patch.overlay import DocumentOverlay
from deepseek_ls.policy.env import scrubbed_env
from deepseek_ls.policy.redact import redact_obj, redact_text
from deepseek_ls.sink import ListSink
from deepseek_ls.tools.host import ToolHost

CONFTEST = "import os\nprint('ENV', sorted(os.environ.items()))\n"
NAMES = ["MODEL_ACCESS", "LOCAL_LLM", "OLLAMA_HOST_CRED"]


def _canary() -> str:
    return "canary" + uuid.uuid4().hex[:12].translate(str.maketrans("0123456789", "ghijklmnop")) + "zebra"


@pytest.mark.skipif(not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.reason}")
@pytest.mark.parametrize("name", NAMES)
async def test_no_leak_api_key_to_unprompted_verification(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          name: str) -> None:
    canary = _canary()
    monkeypatch.setenv(name, canary)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    root, canaries = make_workspace(tmp_path)
    (root / "conftest.py").write_text(CONFTEST)
    config = Config(policy=PolicyConfig(approval_mode="suggest"))
    config.llm.api_key_env = name
    assert resolve_profile(config.llm, "fast").api_key == canary  # what the LLM client does first
    ui = RecordingUI("deny")
    sink = ListSink()
    host = ToolHost(root, config, sink=sink, ui=ui, overlay=DocumentOverlay(root))
    world = World(root, config, sink=sink, overlay=host.overlay, patches=None, tools=host)
    result = await world.run_command("python -m pytest -q -s", 60)
    assert "ENV" in result.output and ui.approvals == []
    assert canary not in result.output


@pytest.mark.parametrize("name", NAMES)
def test_no_leak_api_key_is_redacted_and_scrubbed_once_read(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    canary = _canary()
    config = Config()
    config.llm.api_key_env = name
    assert scrubbed_env({name: canary, "OTHER": "x"})[name] == canary  # unknown before it is read
    resolve_profile(config.llm, "fast", env={name: canary})
    assert name not in scrubbed_env({name: canary, "OTHER": "x"})
    assert canary not in redact_text(f"the key is {canary}.")
    assert canary not in str(redact_obj({"messages": [{"content": f"echo {canary}"}]}))


def test_short_values_are_not_remembered() -> None:
    config = Config()
    config.llm.api_key_env = "TINY_KEY_VAR"
    resolve_profile(config.llm, "fast", env={"TINY_KEY_VAR": "test-key"})
    assert redact_text("a test-key b") == "a test-key b"  # the test suites' placeholder key

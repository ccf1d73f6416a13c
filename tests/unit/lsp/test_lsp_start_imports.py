"""The language server answers `initialize` before loading the core: building the server
(every feature registered) imports neither pydantic nor the agent, the config, the LLM client,
the tools or the policy layer; they load in `initialized`, after the answer
(bench/bench_lsp.py measures start -> initialize against a bare pygls server)."""

from __future__ import annotations

import subprocess
import sys

# Light modules of those packages may load (policy/log_gate.py formats the server's logs); these may not.
HEAVY = ("pydantic", "deepseek_ls.agent", "deepseek_ls.config", "deepseek_ls.llm", "deepseek_ls.tools",
         "deepseek_ls.policy.redact", "deepseek_ls.policy.paths", "deepseek_ls.patch", "deepseek_ls.index",
         "httpx", "tantivy", "pathspec", "hyperscan")


def test_building_the_server_loads_none_of_the_core():
    code = (
        "import sys\n"
        "from deepseek_ls.lsp.setup import create_server\n"
        "server = create_server()\n"
        "assert not server.failed_features, server.failed_features\n"
        f"print('HEAVY', sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out

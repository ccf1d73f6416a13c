"""The language server answers `initialize` before loading the core: building the server
(every feature registered) and answering `initialize` at the default log level import neither
pydantic nor the agent, the config, the LLM client, the tools, the redaction rules or the rest
of the policy layer; they load in `initialized`, after the answer (bench/bench_lsp.py measures
start -> initialize against a bare pygls server)."""

from __future__ import annotations

import os
import subprocess
import sys

# Light modules of those packages may load (policy/log_gate.py formats the server's logs); these may not.
HEAVY = ("pydantic", "deepseek_ls.agent", "deepseek_ls.config", "deepseek_ls.llm", "deepseek_ls.tools",
         "deepseek_ls.policy.redact", "deepseek_ls.policy.paths", "deepseek_ls.patch", "deepseek_ls.index",
         "httpx", "tantivy", "pathspec", "hyperscan", "detect_secrets")

# One process: the server built as `deepseek-ls serve` builds it (logging at the level an editor
# leaves it: info), then served over a pipe holding `initialize` and `exit`; the wire records
# which heavy modules were loaded when the answer was written.
CHILD = f"""
import json, os, sys
from deepseek_ls.lsp.logging import configure_stderr_logging
from deepseek_ls.lsp.setup import create_server
from deepseek_ls.lsp.transport.limits import Limits
from deepseek_ls.lsp.transport.serving import serve_stdio

def heavy():
    return sorted(m for m in sys.modules if m.startswith({HEAVY!r}))

def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body

configure_stderr_logging()
server = create_server()
assert not server.failed_features, server.failed_features
print("BUILT", heavy())
root = os.getcwd()
read, write = os.pipe()
os.write(write, frame({{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {{"processId": None, "rootUri": "file://" + root, "capabilities": {{}}}}}}))
os.write(write, frame({{"jsonrpc": "2.0", "method": "exit"}}))
os.close(write)

class Wire:
    answered = None
    def write(self, data):
        if Wire.answered is None and b'"capabilities"' in data:
            Wire.answered = heavy()
    def flush(self):
        pass

serve_stdio(server, Limits.from_env(None), os.fdopen(read, "rb"), Wire())
print("ANSWERED", Wire.answered)
"""


def test_building_the_server_and_answering_initialize_load_none_of_the_core(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "DEEPSEEK_LS_LOG"}  # the default level logs
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True,
                         cwd=tmp_path, env=env).stdout
    assert "BUILT []" in out, out
    assert "ANSWERED []" in out, out

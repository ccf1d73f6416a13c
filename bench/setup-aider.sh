#!/usr/bin/env bash
# Installs Aider (aider-chat from PyPI) into a bench-only venv, .bench-aider/, so that
# bench/bench_edit_apply.py can compare deepseek-ls with Aider's own flexible appliers.
# Never used by deepseek-ls itself or its tests. Usage: bash bench/setup-aider.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${AIDER_BENCH_VENV:-$root/.bench-aider}
python=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q aider-chat
"$venv/bin/python" -c "import aider.coders.udiff_coder, aider.coders.editblock_coder" \
  && echo "[setup-aider] aider $("$venv/bin/python" -c 'import aider; print(aider.__version__)') ready in $venv"

#!/usr/bin/env bash
# Set up (Python only) and run the deepseek-ls CLI: scripts/run.sh [ARGS...] (default: --help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
if [ "$#" -eq 0 ]; then
  set -- --help
fi
exec "${VENV:-$ROOT/.venv}/bin/deepseek-ls" "$@"

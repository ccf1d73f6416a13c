#!/usr/bin/env bash
# Set up deepseek-ls for development and tests. Idempotent: quick when nothing changed.
#   scripts/setup.sh            Python only: .venv with `pip install -e .[test]`
#   scripts/setup.sh --nvim     ... plus Neovim for the nvim/ plugin tests (scripts/setup-nvim.sh)
#   scripts/setup.sh --vscode   ... plus code-server, Chromium and npm packages (scripts/setup-vscode.sh)
#   scripts/setup.sh --mcp      ... plus the npm MCP servers the MCP tests use (scripts/setup-mcp.sh)
#   scripts/setup.sh --acp      ... plus the npm ACP clients the ACP tests use: acpx, the TypeScript SDK (scripts/setup-acp.sh)
#   scripts/setup.sh --llama    ... plus llama.cpp's server and SmolLM2-135M (scripts/setup-llama.sh; slow once)
#   scripts/setup.sh --all      everything the full test suite needs
# Environment: PYTHON (interpreter to build the venv from, >= 3.11), VENV (default .venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
log() { echo "[setup] $*" >&2; }

want_nvim=0 want_vscode=0 want_mcp=0 want_acp=0 want_llama=0
for arg in "$@"; do
  case "$arg" in
    --nvim) want_nvim=1 ;;
    --vscode) want_vscode=1 ;;
    --mcp) want_mcp=1 ;;
    --acp) want_acp=1 ;;
    --llama) want_llama=1 ;;
    --all) want_nvim=1 want_vscode=1 want_mcp=1 want_acp=1 want_llama=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) log "unknown option: $arg"; exit 2 ;;
  esac
done

find_python() {
  for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  return 1
}

# 1. The virtualenv.
if [ ! -x "$VENV/bin/python" ]; then
  python="$(find_python)" || { log "Python >= 3.11 is required (set PYTHON=/path/to/python3.11)"; exit 1; }
  log "creating $VENV with $python"
  if ! "$python" -m venv "$VENV" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing python3-venv (apt)"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
      rm -rf "$VENV"
      "$python" -m venv "$VENV"
    else
      log "cannot create a venv: install python3-venv (sudo apt-get install python3-venv)"; exit 1
    fi
  fi
fi

# 2. Python packages: reinstall only when pyproject.toml, setup.py or the native
#    part (deepseek_ls/index/_native.c, compiled in place by the editable install) changed.
stamp="$VENV/.deepseek-ls-installed"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/setup.py" "$ROOT"/deepseek_ls/index/*.c | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/deepseek-ls" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] ||
   ! ls "$ROOT"/deepseek_ls/index/_native.*.so >/dev/null 2>&1; then
  log "installing deepseek-ls and test dependencies into $VENV"
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test]"
  echo "$want" > "$stamp"
fi

# 3. bubblewrap: the OS sandbox every command the agent starts runs in (docs/tools.md).
#    Without it the product still works, but asks before every command.
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing bubblewrap (apt)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; }; } ||
      log "could not install bubblewrap; commands will need approval every time"
  else
    log "bubblewrap (bwrap) is not installed: commands will need approval every time (sudo apt-get install bubblewrap)"
  fi
fi

# 4. Optional editors.
run_optional() {
  local script="$ROOT/scripts/$1"
  if [ -x "$script" ] || [ -f "$script" ]; then
    log "running $1"
    VENV="$VENV" bash "$script" >&2
  else
    log "$1 not present yet; skipping"
  fi
}
[ "$want_nvim" = 1 ] && run_optional setup-nvim.sh
[ "$want_vscode" = 1 ] && run_optional setup-vscode.sh
[ "$want_mcp" = 1 ] && run_optional setup-mcp.sh
[ "$want_acp" = 1 ] && run_optional setup-acp.sh
[ "$want_llama" = 1 ] && run_optional setup-llama.sh
[ "$want_nvim" = 1 ] && run_optional setup-clients.sh
log "ready: $VENV/bin/deepseek-ls"

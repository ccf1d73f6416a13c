#!/usr/bin/env bash
# Installs the third-party MCP servers the MCP tests (tests/mcp) talk to, from the registries:
#   - @modelcontextprotocol/server-everything and @modelcontextprotocol/server-filesystem (npm)
#     into .tools/mcp (git-ignored), pinned, in one npm call (a later `npm install` of one
#     package would prune the other);
#   - mcp-server-time and mcp-server-git come from PyPI with the test extras (pyproject.toml).
# Idempotent: quick when the pinned versions are already there. Prints the servers' entry points.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
PREFIX="$ROOT/.tools/mcp"
SCOPE="$PREFIX/node_modules/@modelcontextprotocol"
log() { echo "[setup-mcp] $*" >&2; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

has() { [ -f "$SCOPE/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$SCOPE/$1/package.json"; }

if ! command -v node >/dev/null 2>&1; then
  log "node is required for the npm MCP servers"; exit 1
fi
if ! has server-everything "$EVERYTHING_VERSION" || ! has server-filesystem "$FILESYSTEM_VERSION"; then
  log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION and" \
      "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION into $PREFIX (npm)"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{"name":"deepseek-ls-mcp-servers","private":true}' > "$PREFIX/package.json"
  (cd "$PREFIX" && npm install --no-save --silent \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2)
fi
echo "$SCOPE/server-everything/dist/index.js"
echo "$SCOPE/server-filesystem/dist/index.js"

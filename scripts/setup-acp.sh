#!/usr/bin/env bash
# Installs the third-party ACP clients the ACP tests (tests/acp) drive `deepseek-ls acp` with, from npm,
# into .tools/acp (git-ignored):
#   - acpx, a headless ACP client used as it is (its --approve-all / --deny-all / permission policies);
#   - @agentclientprotocol/sdk 1.x, the official TypeScript SDK (its ClientSideConnection), which
#     tests/acp/sdk_client.mjs is written against.
# Idempotent: quick when the pinned versions are already there. Prints the prefix.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ACPX_VERSION=0.19.1
SDK_VERSION=1.9.0
PREFIX="$ROOT/.tools/acp"
log() { echo "[setup-acp] $*" >&2; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# acpx declares node >= 22.13; what the tests use of it runs on the Node 20 we have (checked by the tests).
export npm_config_engine_strict=false

have() {  # have PACKAGE VERSION: that version is installed under the prefix
  local manifest="$PREFIX/node_modules/$1/package.json"
  [ -f "$manifest" ] && grep -q "\"version\": \"$2\"" "$manifest"
}

if ! command -v node >/dev/null 2>&1; then
  log "node is required for acpx and the ACP TypeScript SDK"; exit 1
fi
if ! have acpx "$ACPX_VERSION" || ! have @agentclientprotocol/sdk "$SDK_VERSION"; then
  log "installing acpx@$ACPX_VERSION and @agentclientprotocol/sdk@$SDK_VERSION into $PREFIX (npm)"
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || echo '{"name":"deepseek-ls-acp-clients","private":true,"type":"module"}' > "$PREFIX/package.json"
  (cd "$PREFIX" && npm install --no-save --silent "acpx@$ACPX_VERSION" "@agentclientprotocol/sdk@$SDK_VERSION" >&2)
fi
echo "$PREFIX"

#!/usr/bin/env bash
# Installs what the VS Code extension's build and end-to-end test need, from
# the package registries only (npm, Debian apt). Idempotent: quick when done.
#   - Debian: chromium (driven by playwright-core), libkrb5-dev (code-server's kerberos module)
#   - vscode-client/node_modules (TypeScript, esbuild, vsce, playwright-core, languageclient)
#   - code-server 4.100.3 in .tools/code-server (git-ignored)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CODE_SERVER_VERSION=4.100.3
TOOLS="$ROOT/.tools"
CS_PREFIX="$TOOLS/code-server"
log() { echo "[setup-vscode] $*" >&2; }

# node-gyp splits include paths at spaces: in a checkout whose path has one, code-server's
# native modules (argon2: "napi.h: No such file or directory") fail to build. Such a checkout
# gets code-server in a space-free directory of its own, linked from .tools/code-server.
# The link made once is kept while it leads to a whole install: a process with another HOME (the
# tests give each of theirs a private one) would otherwise relink it to an empty directory and
# reinstall, while other processes run the code-server that just went away.
cs_linked="$(readlink "$CS_PREFIX" 2>/dev/null || true)"
if [ -n "$cs_linked" ] && [ -d "$cs_linked/node_modules/code-server/lib/vscode/node_modules" ] &&
   grep -qs "\"version\": \"$CODE_SERVER_VERSION\"" "$cs_linked/node_modules/code-server/package.json"; then
  CS_PREFIX="$cs_linked"
fi
case "$CS_PREFIX" in
  *[[:space:]]*)
    cs_home="${XDG_CACHE_HOME:-$HOME/.cache}/deepseek-ls-dev"
    case "$cs_home" in *[[:space:]]*) cs_home="/tmp/deepseek-ls-dev-$(id -u)" ;; esac
    cs_real="$cs_home/code-server-$CODE_SERVER_VERSION-$(printf %s "$ROOT" | cksum | cut -d' ' -f1)"
    mkdir -p "$TOOLS" "$cs_real"
    if [ "$(readlink "$CS_PREFIX" 2>/dev/null)" != "$cs_real" ]; then
      [ -L "$CS_PREFIX" ] && rm -f "$CS_PREFIX"
      [ -e "$CS_PREFIX" ] && rm -rf "$CS_PREFIX"  # a half-built install from before this rule
      ln -s "$cs_real" "$CS_PREFIX"
      log "the checkout's path has a space: code-server goes to $cs_real (linked from $CS_PREFIX)"
    fi
    CS_PREFIX="$cs_real"
    ;;
esac

# Native modules build against the installed Node headers, never downloaded ones.
if [ -d /usr/include/node ] && [ -z "${npm_config_nodedir:-}" ]; then
  export npm_config_nodedir=/usr
fi
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

chromium_bin() {
  for c in /usr/lib/chromium/chromium /usr/bin/chromium /usr/bin/chromium-browser; do
    [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}

# 1. Debian packages.
if ! chromium_bin >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    log "chromium and libkrb5-dev are missing; run as root or: sudo apt-get install -y chromium libkrb5-dev"
    exit 1
  fi
  log "installing chromium and libkrb5-dev (apt)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium libkrb5-dev >/dev/null
fi

# 2. The extension's own toolchain.
cd "$ROOT/vscode-client"
if [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ]; then
  log "installing vscode-client dependencies (npm)"
  npm install --no-audit --no-fund --loglevel=error
fi

# 3. code-server. Its VS Code part depends on @vscode/ripgrep, whose postinstall
# downloads rg from the web unless its cache (os.tmpdir()/vscode-ripgrep-cache-
# <pkg version>/ripgrep-<rg tag>-<target>.tar.gz, a tarball with `rg` at its
# top) already holds it. We seed that cache with the rg shipped by the PyPI
# `ripgrep` package in the project's venv.
if [ -f "$CS_PREFIX/node_modules/code-server/package.json" ] \
   && [ -d "$CS_PREFIX/node_modules/code-server/lib/vscode/node_modules" ] \
   && grep -q "\"version\": \"$CODE_SERVER_VERSION\"" "$CS_PREFIX/node_modules/code-server/package.json"; then
  log "code-server $CODE_SERVER_VERSION already installed"
else
  RG="$(command -v rg || true)"
  VENV_RG="${VENV:-$ROOT/.venv}/bin/rg"
  [ -x "$VENV_RG" ] && RG="$VENV_RG"
  if [ -z "$RG" ]; then
    log "no rg binary found: install the project first (pip install -e '.[test]' brings ripgrep)"
    exit 1
  fi
  TMP="${TMPDIR:-/tmp}"
  stage="$(mktemp -d)"
  cp "$RG" "$stage/rg"
  # Seed every @vscode/ripgrep version/tag pair code-server 4.100.3 may ask for.
  for pair in "1.15.11 v13.0.0-10" "1.15.10 v13.0.0-10" "1.15.9 v13.0.0-10"; do
    set -- $pair
    cache="$TMP/vscode-ripgrep-cache-$1"
    mkdir -p "$cache"
    tar -czf "$cache/ripgrep-$2-x86_64-unknown-linux-musl.tar.gz" -C "$stage" rg
  done
  rm -rf "$stage"
  log "installing code-server $CODE_SERVER_VERSION into $CS_PREFIX (npm; a few minutes)"
  mkdir -p "$CS_PREFIX"
  [ -f "$CS_PREFIX/package.json" ] || echo '{"name":"deepseek-ls-tools","private":true}' > "$CS_PREFIX/package.json"
  (cd "$CS_PREFIX" && npm_config_unsafe_perm=true npm_config_yes=true \
     npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION")
fi
log "ready: code-server at $CS_PREFIX/node_modules/.bin/code-server, chromium at $(chromium_bin)"

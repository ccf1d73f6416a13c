#!/usr/bin/env bash
# Installs what the Emacs end-to-end tests (tests/emacs/) need, from Debian's packages only:
# emacs-nox, and elpa-eglot where the Emacs has no eglot of its own (Emacs 29+ ships it).
# Idempotent: apt runs only when something is missing.
set -euo pipefail
log() { echo "[setup-emacs] $*" >&2; }

has_eglot() { command -v emacs >/dev/null 2>&1 && timeout 60 emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; }

if has_eglot; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  log "Emacs with eglot is missing; run as root on Debian/Ubuntu or: sudo apt-get install -y emacs-nox elpa-eglot"
  exit 1
fi
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; }
}
if ! command -v emacs >/dev/null 2>&1; then
  log "installing emacs-nox (apt)"
  apt_install emacs-nox
fi
if ! has_eglot; then
  log "installing elpa-eglot (apt)"
  apt_install elpa-eglot
fi
has_eglot || { log "emacs cannot load eglot after installing emacs-nox and elpa-eglot"; exit 1; }

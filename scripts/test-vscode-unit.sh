#!/usr/bin/env bash
# Unit tests of the VS Code extension's own logic (node --test, no VS Code needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/vscode-client"
if [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund --loglevel=error
fi
rm -rf out/unit
npx --no-install tsc -p tsconfig.test.json
node --test --test-reporter=spec out/unit/test/

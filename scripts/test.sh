#!/usr/bin/env bash
# Set up everything (Python, Neovim, VS Code/code-server, Chromium) and run the whole test suite.
# Extra arguments go to pytest instead of the default (every test under tests/, from
# pyproject's testpaths), e.g. scripts/test.sh tests/unit/config. Exits non-zero on any failure,
# and also when pytest ran no test at all.
# DEEPSEEK_LS_TEST_WORKERS=N runs the tests on N pytest-xdist workers, a whole file per worker at a
# time (--dist loadfile) so a file's shared server or editor is started once. The default is 3 (the
# tests mostly wait on subprocesses: 38 min against ~63 in one process on 2 cores); 0 runs them in
# this one process (docs/testing.md, "CI time").
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
cd "$ROOT"

"$ROOT/scripts/setup.sh" --all || { echo "[test] setup failed" >&2; exit 1; }

status=0
report="$(mktemp -t deepseek-ls-junit.XXXXXX.xml)"
trap 'rm -f "$report"' EXIT

# The suite runs as users run the product: without the venv's bin on PATH (an activated venv, or a
# checkout that happens to have it there, must not hide a test that only passes with it).
path="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$VENV/bin" | paste -sd: -)"
PATH="${path:-/usr/local/bin:/usr/bin:/bin}" "$VENV/bin/pytest" -q -n "${DEEPSEEK_LS_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@" --junitxml="$report"
pytest_status=$?
if [ "$pytest_status" -ne 0 ]; then
  echo "[test] pytest failed (exit $pytest_status)" >&2
  status=1
fi
# A green run must have run something: count tests that were not skipped.
ran="$("$VENV/bin/python" - "$report" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0)
    raise SystemExit
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
print(sum(int(s.get("tests", 0)) - int(s.get("skipped", 0)) for s in suites))
PY
)"
if [ "${ran:-0}" -le 0 ]; then
  echo "[test] pytest ran no test" >&2
  status=1
fi

if [ -f "$ROOT/scripts/test-vscode-unit.sh" ]; then
  echo "[test] VS Code extension unit tests" >&2
  bash "$ROOT/scripts/test-vscode-unit.sh" || { echo "[test] VS Code unit tests failed" >&2; status=1; }
fi

if [ "$status" -eq 0 ]; then
  echo "[test] all passed ($ran pytest tests ran)" >&2
fi
exit "$status"

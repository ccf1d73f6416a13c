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

started=$SECONDS
"$ROOT/scripts/setup.sh" --all || { echo "[test] setup failed" >&2; exit 1; }
setup_seconds=$((SECONDS - started))

status=0
report="$(mktemp -t deepseek-ls-junit.XXXXXX.xml)"
trap 'rm -f "$report"' EXIT

# The suite runs as users run the product: without the venv's bin on PATH (an activated venv, or a
# checkout that happens to have it there, must not hide a test that only passes with it).
path="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$VENV/bin" | paste -sd: -)"
started=$SECONDS
PATH="${path:-/usr/local/bin:/usr/bin:/bin}" "$VENV/bin/pytest" -q -n "${DEEPSEEK_LS_TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@" --junitxml="$report"
pytest_status=$?
pytest_seconds=$((SECONDS - started))
if [ "$pytest_status" -ne 0 ]; then
  echo "[test] pytest failed (exit $pytest_status)" >&2
  status=1
fi
# Where the time went (docs/testing.md, "CI time"): the slowest files, summed from the report.
# Its first line is the number of tests that ran (not skipped): a green run must have run something.
summary="$("$VENV/bin/python" "$ROOT/scripts/junit_by_file.py" --top 15 --root "$ROOT" "$report")"
ran="$(printf '%s\n' "$summary" | head -n 1)"
if [ "${ran:-0}" -le 0 ]; then
  echo "[test] pytest ran no test" >&2
  status=1
fi

if [ -f "$ROOT/scripts/test-vscode-unit.sh" ]; then
  echo "[test] VS Code extension unit tests" >&2
  started=$SECONDS
  bash "$ROOT/scripts/test-vscode-unit.sh" || { echo "[test] VS Code unit tests failed" >&2; status=1; }
  echo "[test] VS Code unit tests: $((SECONDS - started)) s" >&2
fi

{
  printf '%s\n' "$summary" | tail -n +2 | sed 's/^/[test] /'
  echo "[test] set-up (scripts/setup.sh --all): $setup_seconds s; pytest: $pytest_seconds s wall"
} >&2

if [ "$status" -eq 0 ]; then
  echo "[test] all passed ($ran pytest tests ran)" >&2
fi
exit "$status"

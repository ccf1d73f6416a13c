-- Teammate lanes in Neovim against the real deepseek-ls and the fake DeepSeek server
-- (scripted by tests/nvim/test_lanes.py): :DeepSeekTeammate on -> :DeepSeekPlan (two
-- independent steps) -> the Step 1 lens runs the wave in lanes -> both steps' hunks are
-- pending at once, and each step's lens names its lane.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local status = require("deepseek.status")

local buf

H.run({
  {
    ":DeepSeekTeammate on turns teammate mode on",
    function()
      buf = S.start()
      vim.cmd("DeepSeekTeammate on")
      H.wait(20000, function()
        return H.notified("teammate mode on")
      end, "teammate mode on")
      H.wait(10000, function()
        return status.current and status.current.teammate_mode == true
      end, "deepseek/status with teammate_mode")
    end,
  },
  {
    "running Step 1 runs both independent steps in lanes; both are staged",
    function()
      S.plan(buf, "edit greet and util")
      S.run_step(buf, 1)
      vim.lsp.codelens.refresh({ bufnr = buf })
      H.wait(20000, function()
        return S.find_lens(buf, "lane 1: merged")
      end, "the Step 1 lens naming lane 1")
      vim.cmd("split util.py")
      local util = vim.api.nvim_get_current_buf()
      vim.lsp.codelens.refresh({ bufnr = util })
      H.wait(20000, function()
        return S.find_lens(util, "lane 2: merged") and S.find_lens(util, "Accept")
      end, "util.py: its step's lens names lane 2 and its hunk waits for review")
      local lanes = status.current and status.current.lanes
      H.eq(#lanes.lanes, 2, "two lanes in the status")
    end,
  },
})

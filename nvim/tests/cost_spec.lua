-- Cost in Neovim against the real deepseek-ls and the fake DeepSeek server
-- (scripted and priced by tests/nvim/test_cost.py): after planning and running
-- the step, the statusline shows the session's tokens and money, and
-- :DeepSeekWhy shows the session's and the step's cost.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")

local buf

H.run({
  {
    "plan and run the step",
    function()
      buf = S.start()
      S.plan(buf, "make greet use an f-string and make add convert its arguments")
      S.run_step(buf, 2)
    end,
  },
  {
    "the statusline shows the session's tokens and cost",
    function()
      local text = H.wait(20000, function()
        local t = require("deepseek").status()
        return t:find(" tok · $", 1, true) and t
      end, "tokens and cost in the statusline: " .. require("deepseek").status())
      print("statusline: " .. text)
      H.matches(text, "^DeepSeek awaiting approval · [%d%.]+k? tok · %$%d+%.%d+ · ctx [%d%.]+k/1M %(%d+%%%)$",
        "state, tokens, money and the context meter")
      local line = H.ok(require("deepseek.status").cost_text(), "the session's cost line")
      print("cost: " .. line)
      H.matches(line, "in %(.+ cached, .+ missed%), %d+ out · %$%d+%.%d+", "tokens by kind and money")
    end,
  },
  {
    ":DeepSeekWhy shows what the session and the step cost",
    function()
      vim.cmd("DeepSeekWhy")
      local why = H.wait(20000, function()
        local b = vim.fn.bufnr("deepseek://why")
        return b ~= -1 and H.text(b):find("cost (session", 1, true) and b
      end, "the cost in the routing explanation buffer")
      local text = H.text(why)
      print(text)
      H.matches(text, "cost %(session, 2 calls%): .+ out · %$%d+%.%d+", "the session's cost")
      H.matches(text, "cost %(this step, 1 calls%): .+ out · %$%d+%.%d+", "the step's cost")
    end,
  },
})

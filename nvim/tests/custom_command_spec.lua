-- :DeepSeekCommand: the custom commands complete from the server (deepseek.listCommands) and one runs
-- with its arguments: its expanded prompt goes to the model, the answer shows in the stream.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local ui = require("deepseek.ui")

H.run({
  {
    ":DeepSeekCommand completes the custom commands' names",
    function()
      S.start()
      local names = H.wait(20000, function()
        local found = vim.fn.getcompletion("DeepSeekCommand st", "cmdline")
        return #found > 0 and found
      end, "the completion of :DeepSeekCommand")
      H.eq(names, { "standup" }, "the user's command (the workspace's wait for trust)")
    end,
  },
  {
    ":DeepSeekCommand name arguments runs it and shows the answer",
    function()
      local done = H.run_until_done("DeepSeekCommand standup what changed yesterday", 60000, "deepseek.runCommand")
      H.eq(done.ok, true, "the command ended well")
      H.wait(10000, function()
        local text = table.concat(vim.api.nvim_buf_get_lines(ui.scratch("stream"), 0, -1, false), "\n")
        return text:find("Nothing changed.", 1, true)
      end, "the answer in the stream buffer")
    end,
  },
})

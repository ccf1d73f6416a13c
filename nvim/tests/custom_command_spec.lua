-- The commands that take the person's words. :DeepSeekCommand: the custom commands complete from the
-- server (deepseek.listCommands) and one runs with its arguments: its expanded prompt goes to the model,
-- the answer shows in the stream. :DeepSeekEdit: the instruction (typed after it, or asked with
-- vim.ui.input) runs on the range's lines (deepseek.edit): "Run DeepSeek's plan" is asked, and once
-- allowed the change is pending hunks; dismissing the input sends nothing. A `deepseek:` comment is
-- offered as a code action that Neovim's own vim.lsp.buf.code_action() runs (deepseek.edit again).
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local ui = require("deepseek.ui")
local diff = require("deepseek.diff")
local buf

H.run({
  {
    ":DeepSeekCommand completes the custom commands' names",
    function()
      buf = S.start()
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
  {
    ":DeepSeekEdit with nothing typed sends nothing",
    function()
      local asked = {}
      vim.ui.input = function(opts, on_confirm)
        table.insert(asked, opts.prompt)
        on_confirm(nil) -- Escape
      end
      vim.cmd("2DeepSeekEdit")
      H.eq(#asked, 1, "the instruction was asked with vim.ui.input")
      H.eq(#diff.pending(buf), 0, "no change")
    end,
  },
  {
    ":[range]DeepSeekEdit runs the instruction on those lines and ends in pending hunks",
    function()
      table.insert(S.choosers, "Allow once")
      vim.ui.input = function(_, on_confirm)
        on_confirm("use an f-string edit-tag")
      end
      local done = H.run_until_done("2DeepSeekEdit", 60000, "deepseek.edit")
      H.eq(done.ok, true, "the edit ended well")
      local approval = vim.tbl_filter(function(call)
        return call.kind == "deepseek_approval"
      end, S.selects)[1]
      H.matches(approval and approval.prompt or "", "Run DeepSeek's plan for: use an f%-string edit%-tag", "asked before running")
      H.wait(20000, function()
        return #diff.pending(buf) == 1
      end, "one pending hunk")
    end,
  },
  {
    "a deepseek: comment is a code action that Neovim's vim.lsp.buf.code_action() runs",
    function()
      vim.fn.writefile({ "x = 1", "# deepseek: name it count comment-tag" }, "notes.py")
      vim.cmd("edit notes.py")
      local notes = vim.api.nvim_get_current_buf()
      H.wait(20000, function()
        return vim.lsp.get_clients({ name = "deepseek_ls", bufnr = notes })[1]
      end, "deepseek_ls attached to notes.py")
      local offered = {}
      vim.lsp.buf.code_action({
        apply = true,
        range = { start = { 2, 0 }, ["end"] = { 2, 0 } },
        filter = function(action)
          table.insert(offered, action.title)
          return action.title == "DeepSeek: name it count comment-tag"
        end,
      })
      H.wait(60000, function()
        return #diff.pending(notes) == 1
      end, "the comment's change pending in notes.py")
      H.ok(vim.tbl_contains(offered, "DeepSeek: name it count comment-tag"), "offered: " .. vim.inspect(offered))
    end,
  },
})

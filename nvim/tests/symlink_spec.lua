-- A workspace opened through a symlink (the file is edited by its path through the link).
-- Neovim may name the buffer by the link's path or by the resolved one; either way,
-- accepting a hunk in a buffer with unsaved typing must land in that buffer, once, in
-- its place (the server keeps the editor's spelling of the root and of each buffer).
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local diff = require("deepseek.diff")
local buf

H.run({
  {
    "the server starts on the file opened through the link",
    function()
      require("deepseek").setup({ cmd = { vim.env.DEEPSEEK_LS_BIN, "serve", "--stdio" } })
      vim.cmd("edit " .. vim.fn.fnameescape(vim.env.DEEPSEEK_LINKED_FILE))
      buf = vim.api.nvim_get_current_buf()
      H.wait(20000, function()
        local c = vim.lsp.get_clients({ name = "deepseek_ls", bufnr = buf })[1]
        return c and c.initialized
      end, "deepseek_ls to initialize")
    end,
  },
  {
    "accepting a hunk under unsaved typing lands in the buffer, once, in its place",
    function()
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, { "# typed, not saved" })
      H.wait(20000, function()
        diff.refresh(buf)
        return #diff.pending(buf) == 2
      end, "two pending hunks")
      vim.api.nvim_win_set_cursor(0, { 4, 0 }) -- "line 3", below the inserted line
      H.run_until_done("DeepSeekAccept", 20000)
      H.wait(10000, function()
        return H.text(buf):find("inserted A", 1, true)
      end, "the accepted hunk in the buffer")
      local lines = vim.api.nvim_buf_get_lines(buf, 0, 5, false)
      H.eq(lines, { "# typed, not saved", "line 1", "line 2", "inserted A", "line 3" }, "the top of the buffer")
      H.eq(select(2, H.text(buf):gsub("inserted A", "")), 1, "the hunk once")
      vim.cmd("write")
    end,
  },
})

-- Position encodings: Neovim offers utf-8/utf-16/utf-32 and the server picks
-- utf-8. Hunks sit on lines with emoji and CJK; the last one is on the last
-- line of a file without a final newline. Accepting them must give exactly
-- the expected buffer (the end column of that line used to be counted in UTF-16).
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local client = require("deepseek.client")
local diff = require("deepseek.diff")
local buf

local function accept_at(line, expect)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  H.run_until_done("DeepSeekAccept", 20000)
  H.wait(10000, function()
    return H.text(buf):find(expect, 1, true)
  end, "the accepted hunk in the buffer: " .. expect)
end

H.run({
  {
    "the server speaks utf-8 with Neovim and shows both hunks",
    function()
      buf = S.start()
      H.eq(client.offset_encoding(buf), "utf-8", "negotiated encoding")
      H.eq(vim.bo[buf].eol, false, "the file has no final newline")
      H.wait(20000, function()
        diff.refresh(buf)
        return #diff.pending(buf) == 2
      end, "two pending hunks")
      -- A :'<,'> range ends at the last line's length in the negotiated encoding.
      local range = client.line_range(buf, 2, 2)
      H.eq(range["end"].character, #"smile = '😀 中文'  # 🎉", "end column in bytes (utf-8)")
    end,
  },
  {
    "accepting the hunk on the last line (no newline, emoji) changes exactly that line",
    function()
      accept_at(11, "終了 🚀")
      H.eq(vim.api.nvim_buf_get_lines(buf, 9, -1, false), { "filler 7", "end = '🎉 終了 🚀'" }, "the end of the buffer")
      H.eq(vim.api.nvim_buf_line_count(buf), 11, "no line added or lost")
    end,
  },
  {
    "then the hunk next to the emoji on line 2, against the buffer the server synced",
    function()
      accept_at(2, "中文!")
      H.eq(H.text(buf), table.concat({
        "head",
        "smile = '😀 中文!'  # 🎉",
        "filler 0", "filler 1", "filler 2", "filler 3", "filler 4", "filler 5", "filler 6", "filler 7",
        "end = '🎉 終了 🚀'",
      }, "\n"), "the whole buffer")
      vim.bo[buf].fixeol = false -- write the buffer as it is (no newline added)
      vim.cmd("write")
    end,
  },
})

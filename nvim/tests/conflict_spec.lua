-- The user edits a line a pending hunk also changes, then accepts that hunk:
-- nothing is applied (the user's edit stays) and the plugin says why; the
-- other hunk, untouched by the user, still applies.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local diff = require("deepseek.diff")
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
    "hunks follow the user's edits above them",
    function()
      H.eq(diff.pending(buf)[1].range.start.line, 0, "first hunk starts on line 1")
      vim.cmd("normal! ggO# notes")
      H.wait(10000, function()
        return diff.pending(buf)[1].range.start.line == 1
      end, "the hunks to be re-fetched after the edit")
      vim.cmd("normal gg]h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 3, "]h lands on greet's return line, now line 3")
    end,
  },
  {
    "accepting a hunk over the user's own edit of the same line changes nothing",
    function()
      vim.api.nvim_buf_set_lines(buf, 2, 3, false, { "    return 'hi ' + name  # mine" })
      vim.api.nvim_win_set_cursor(0, { 3, 0 })
      H.ok(diff.hunk_at(buf, 2), "a hunk is under the cursor")
      H.run_until_done("DeepSeekAccept", 20000)
      local told = vim.tbl_filter(function(n)
        return n.msg:find("changed since the hunk was staged", 1, true) ~= nil
      end, H.notifications)
      H.eq(#told, 1, "the user is told once why: " .. vim.inspect(H.messages()))
      H.eq(told[1].level, vim.log.levels.WARN, "as a warning")
      H.eq(vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1], "    return 'hi ' + name  # mine", "the user's line is kept")
    end,
  },
  {
    "the other hunk still applies",
    function()
      vim.api.nvim_win_set_cursor(0, { 7, 0 })
      vim.cmd("DeepSeekAccept")
      H.wait(20000, function()
        return H.text(buf):find("int(a) + int(b)", 1, true)
      end, "the second hunk in the buffer")
      H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), {
        "# notes",
        "def greet(name):",
        "    return 'hi ' + name  # mine",
        "",
        "",
        "def add(a, b):",
        "    return int(a) + int(b)",
      }, "user's edit and the second hunk, nothing else")
    end,
  },
})

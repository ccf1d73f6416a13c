-- :DeepSeekReview on a changed app.py: the findings arrive as diagnostics (source "deepseek-review"),
-- the code action "Apply fix" stages the suggested fix as a pending hunk, :DeepSeekAccept applies it.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local diff = require("deepseek.diff")
local buf

local function review_diagnostics()
  return vim.tbl_filter(function(d)
    return d.source == "deepseek-review"
  end, vim.diagnostic.get(buf))
end

H.run({
  {
    ":DeepSeekReview publishes the findings as diagnostics",
    function()
      buf = S.start()
      local done = H.run_until_done("DeepSeekReview", 60000)
      H.eq(done, { command = "deepseek.review", ok = true }, "User DeepSeekDone data")
      local found = H.wait(10000, function()
        return #review_diagnostics() == 1 and review_diagnostics()
      end, "one review diagnostic on app.py")
      H.eq(found[1].lnum, 5, "on line 6 (0-based 5)")
      H.eq(found[1].severity, vim.diagnostic.severity.ERROR, "an error finding")
      H.ok(found[1].message:find("add multiplies", 1, true), "the finding's message: " .. found[1].message)
      H.ok(H.notified("review: 1 finding(s)"), "says what it found: " .. vim.inspect(H.messages()))
    end,
  },
  {
    "the code action Apply fix stages a pending hunk; :DeepSeekAccept applies it",
    function()
      vim.api.nvim_win_set_cursor(0, { 6, 4 })
      vim.lsp.buf.code_action({
        apply = true,
        filter = function(action)
          return action.title:find("Apply fix", 1, true) ~= nil
        end,
      })
      H.wait(20000, function()
        return #diff.pending(buf) == 1
      end, "the fix as one pending hunk")
      H.eq(H.text(buf):find("return a + b", 1, true), nil, "nothing applied before Accept")
      vim.api.nvim_win_set_cursor(0, { diff.pending(buf)[1].range.start.line + 1, 0 })
      local done = H.run_until_done("DeepSeekAccept", 20000)
      H.eq(done.ok, true, "accepted")
      H.wait(10000, function()
        return H.text(buf):find("return a + b", 1, true)
      end, "the fix in the buffer")
    end,
  },
})

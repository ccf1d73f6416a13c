-- :DeepSeekUndo of an apply made from a shell (`deepseek-ls apply`) while app.py is open and
-- the user has typed in it since: the undo lands in the buffer (their typing kept, the file on
-- disk left for them to save), and the message says which file kept edits and needs saving.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local buf

local function disk(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  return text
end

H.run({
  {
    "an apply from the shell, then the user types in the reloaded buffer",
    function()
      buf = S.start()
      local out = vim.fn.system({ vim.env.DEEPSEEK_LS_BIN, "apply", "--diff", "fix.diff", "--yes" })
      H.eq(vim.v.shell_error, 0, "deepseek-ls apply: " .. out)
      vim.cmd("checktime")
      H.wait(10000, function()
        return H.text(buf):find("int(a) + int(b)", 1, true)
      end, "the buffer to reload the applied file")
      vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "    return 'hi ' + name  # mine" })
    end,
  },
  {
    ":DeepSeekUndo takes the apply out of the buffer and keeps the typing",
    function()
      local done = H.run_until_done("DeepSeekUndo", 20000)
      H.eq(done, { command = "deepseek.undo", ok = true }, "User DeepSeekDone data")
      H.wait(10000, function()
        return H.text(buf):find("return a + b", 1, true)
      end, "the undo in the buffer")
      H.eq(vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1], "    return 'hi ' + name  # mine", "the typing is kept")
      H.ok(disk("app.py"):find("int(a) + int(b)", 1, true), "the disk is the user's to write")
      H.ok(H.notified("your edits since were kept in app.py"), "says the typing was kept: " .. vim.inspect(H.messages()))
      H.ok(H.notified("unsaved in the buffers: app.py (:w to write)"), "says what to save")
    end,
  },
})

--- Tiny test harness for headless Neovim (`nvim --headless -l spec.lua`).
---
--- A spec calls `H.run({ ["case name"] = fn, ... })`. Each case runs under
--- xpcall; any failure (or an ERROR notification nobody expected) prints a
--- traceback and exits Neovim with a non-zero code via :cquit, so a broken
--- test can never hang or pass silently.
if _G.DeepSeekTestHelpers then
  return _G.DeepSeekTestHelpers -- one harness per Neovim, however many files load it
end
local H = {}
_G.DeepSeekTestHelpers = H

-- `-u NONE` leaves filetype detection off; a user's Neovim has it on, and
-- vim.lsp.enable() starts servers on the FileType event.
vim.cmd("filetype on")

--- Every notification of the run (cases see the earlier ones too).
H.notifications = {}
local case_start = 1
local expected_errors = {}

--- Record every vim.notify so tests can assert on what the user was told.
vim.notify = function(msg, level, _)
  table.insert(H.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  io.stdout:write(("[notify %s] %s\n"):format(level or vim.log.levels.INFO, tostring(msg)))
end

--- Allow ERROR notifications matching `pattern` (Lua pattern) in the current case.
function H.expect_error(pattern)
  table.insert(expected_errors, pattern)
end

local function unexpected_errors()
  local out = {}
  for i = case_start, #H.notifications do
    local n = H.notifications[i]
    if n.level == vim.log.levels.ERROR then
      local allowed = false
      for _, pat in ipairs(expected_errors) do
        if n.msg:find(pat) then
          allowed = true
        end
      end
      if not allowed then
        table.insert(out, n.msg)
      end
    end
  end
  return out
end

function H.fail(msg)
  error(msg, 2)
end

function H.ok(value, what)
  if not value then
    error(("expected %s"):format(what or "a true value"), 2)
  end
  return value
end

function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(("%s: expected %s, got %s"):format(what or "value", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.matches(text, pattern, what)
  if type(text) ~= "string" or not text:find(pattern) then
    error(("%s: expected text matching %q, got %s"):format(what or "text", pattern, vim.inspect(text)), 2)
  end
end

-- Wait limits are generous on a busy machine (8 test runs sharing 2 cores);
-- they only bound a failure, a passing wait returns as soon as it can.
local wait_scale = tonumber(vim.env.DEEPSEEK_NVIM_WAIT_SCALE or "") or 3

--- Wait (processing events) until `cond()` is truthy; error after `ms` (scaled).
function H.wait(ms, cond, what)
  ms = ms * wait_scale
  local value
  local ok = vim.wait(ms, function()
    value = cond()
    return value
  end, 20)
  if not ok then
    error(("timed out after %d ms waiting for %s"):format(ms, what or "a condition"), 2)
  end
  return value
end

--- Record the next `User DeepSeekDone` (of the server command `command`, e.g.
--- "deepseek.plan", when given); returns a function giving its data { command, ok } or nil.
function H.on_done(command)
  local done
  vim.api.nvim_create_autocmd("User", {
    pattern = "DeepSeekDone",
    callback = function(args)
      if command == nil or args.data.command == command then
        done = args.data
        return true -- delete this autocmd
      end
    end,
  })
  return function()
    return done
  end
end

--- Run the Ex command `cmd` and wait (up to `ms`) for the `User DeepSeekDone`
--- it fires (of `command` when given: another command may end meanwhile);
--- returns that event's data { command, ok }.
function H.run_until_done(cmd, ms, command)
  local done = H.on_done(command)
  vim.cmd(cmd)
  return H.wait(ms, done, ("the %s command to finish"):format(cmd))
end

--- The notification messages seen so far, at `level` or above.
function H.messages(level)
  local out = {}
  for _, n in ipairs(H.notifications) do
    if n.level >= (level or 0) then
      table.insert(out, n.msg)
    end
  end
  return out
end

--- Find the first notification containing `plain` text.
function H.notified(plain)
  for _, n in ipairs(H.notifications) do
    if n.msg:find(plain, 1, true) then
      return n
    end
  end
  return nil
end

local function finish(code)
  io.stdout:flush()
  io.stderr:flush()
  vim.cmd((code == 0 and "qall!" or ("cquit " .. code)))
end

--- Run `cases` (a list of {name, fn}) in order, then quit Neovim.
---@param cases { [1]: string, [2]: fun() }[]
function H.run(cases)
  local failed = 0
  for _, case in ipairs(cases) do
    local name, fn = case[1], case[2]
    case_start = #H.notifications + 1
    expected_errors = {}
    local ok, err = xpcall(fn, debug.traceback)
    if ok then
      local bad = unexpected_errors()
      if #bad > 0 then
        ok, err = false, "unexpected ERROR notifications:\n  " .. table.concat(bad, "\n  ")
      end
    end
    if ok then
      io.stdout:write(("PASS %s\n"):format(name))
    else
      failed = failed + 1
      io.stdout:write(("FAIL %s\n%s\n"):format(name, tostring(err)))
    end
  end
  io.stdout:write(("%d passed, %d failed\n"):format(#cases - failed, failed))
  finish(failed == 0 and 0 or 1)
end

--- The whole text of a buffer.
function H.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

return H

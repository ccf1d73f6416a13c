--- Where deepseek.nvim shows things: notifications, scratch buffers (in a
--- float or a split) and the streamed output of the model.
local config = require("deepseek.config")

local M = {}

--- Whether a `deepseek/stream` chunk arrived since the last begin_stream().
M.streamed = false

---@param msg string
---@param level integer|nil vim.log.levels.*
function M.notify(msg, level)
  vim.notify("DeepSeek: " .. msg, level or vim.log.levels.INFO, { title = "DeepSeek" })
end

--- Messages deepseek-ls showed (window/showMessage) -> when, in ms.
M.shown = {}

--- Record a window/showMessage of our server (see deepseek.handlers).
---@param message string
function M.remember_shown(message)
  M.shown[message] = vim.uv.now()
end

--- Whether the server showed exactly `message` in the last 30 seconds.
---@param message string|nil
---@return boolean
function M.already_shown(message)
  local at = message and M.shown[message]
  return at ~= nil and vim.uv.now() - at < 30000
end

--- Report a failed request the way the server worded it. The server already
--- shows the errors of commands the user started (window/showMessage, same
--- text); those are not repeated.
---@param what string what the user asked for, e.g. "plan"
---@param err lsp.ResponseError
function M.error(what, err)
  local message = err.message or vim.inspect(err)
  if M.already_shown(message) then
    return
  end
  M.notify(("%s failed: %s"):format(what, message), vim.log.levels.ERROR)
end

--- The scratch buffer named `deepseek://<name>`, created on first use.
---@param name string
---@return integer bufnr
function M.scratch(name)
  local bufname = "deepseek://" .. name
  local existing = vim.fn.bufnr(bufname)
  if existing ~= -1 and vim.api.nvim_buf_is_valid(existing) then
    return existing
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, bufname)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
  return buf
end

--- Show `buf` in a float or a split (per `stream.window`) unless it is visible.
---@param buf integer
---@param title string
---@return integer winid
function M.show(buf, title)
  local visible = vim.fn.bufwinid(buf)
  if visible ~= -1 then
    return visible
  end
  if config.current.stream.window == "split" then
    vim.cmd("botright split")
    local win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.cmd("wincmd p")
    return win
  end
  local width = math.max(40, math.floor(vim.o.columns * 0.6))
  local height = math.max(8, math.floor(vim.o.lines * 0.5))
  local win = vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    style = "minimal",
    border = "rounded",
    title = " " .. title .. " ",
  })
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true, desc = "Close" })
  return win
end

--- Replace the content of scratch buffer `name` and show it.
---@param name string
---@param text string|string[]
---@return integer bufnr
function M.show_text(name, text)
  local buf = M.scratch(name)
  local lines = type(text) == "table" and text or vim.split(text, "\n", { plain = true })
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  M.show(buf, "DeepSeek " .. name)
  return buf
end

--- Append streamed `text` to scratch buffer `name`, continuing the last line.
---@param name string
---@param text string
---@return integer bufnr
function M.append(name, text)
  local buf = M.scratch(name)
  local pieces = vim.split(text, "\n", { plain = true })
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
  pieces[1] = tail .. pieces[1]
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, pieces)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
  return buf
end

--- Handle a `deepseek/stream` notification: model content (and, when
--- `stream.reasoning` is on, its reasoning) goes to `deepseek://stream`.
---@param params { session_id: string, channel: string, text: string }
function M.on_stream(params)
  if params.channel == "reasoning" and not config.current.stream.reasoning then
    return
  end
  if params.channel == "status" then
    return
  end
  M.streamed = true
  local buf = M.append("stream", params.text or "")
  M.show(buf, "DeepSeek stream")
end

--- Start a fresh stream section (called when a command that streams begins).
---@param heading string
function M.begin_stream(heading)
  M.streamed = false
  local buf = M.scratch("stream")
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local blank = #lines == 1 and lines[1] == ""
  -- The last (empty) line is where streamed text continues.
  local header = { "## " .. heading, "", "" }
  if blank then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, header)
  else
    vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "", unpack(header) })
  end
end

return M

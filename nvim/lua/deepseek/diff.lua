--- Inline diffs of staged hunks, drawn with extmarks, and hunk navigation.
---
--- A pending hunk has not touched the buffer yet: the lines it replaces are
--- marked as removed and its new lines are shown as virtual lines below them.
--- An accepted hunk is in the buffer: its added lines are highlighted and the
--- lines it removed are shown as virtual lines where they were.
local client = require("deepseek.client")
local protocol = require("deepseek.protocol")

local M = {}

M.ns = vim.api.nvim_create_namespace("deepseek_hunks")

--- Last hunks fetched per buffer (as the server sent them).
---@type table<integer, table[]>
M.hunks = {}

local function define_highlights()
  vim.api.nvim_set_hl(0, "DeepSeekAdded", { default = true, link = "DiffAdd" })
  vim.api.nvim_set_hl(0, "DeepSeekRemoved", { default = true, link = "DiffDelete" })
  vim.api.nvim_set_hl(0, "DeepSeekHunkSign", { default = true, link = "DiffChange" })
end
define_highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("deepseek.diff.hl", {}),
  callback = define_highlights,
})

local function text_lines(text)
  if text == nil or text == "" or text == vim.NIL then
    return {}
  end
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines) -- text ends with a newline
  end
  return lines
end

local function virt(lines, prefix, hl)
  local out = {}
  for _, line in ipairs(lines) do
    table.insert(out, { { prefix .. line, hl } })
  end
  return out
end

--- First and last (exclusive) buffer lines covered by an LSP range.
local function line_span(range)
  local first = range.start.line
  local stop = range["end"].line
  if range["end"].character > 0 then
    stop = stop + 1
  end
  return first, math.max(stop, first)
end

local function place_virt_lines(bufnr, at, lines, line_count)
  if #lines == 0 then
    return
  end
  if at < line_count then
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, at, 0, { virt_lines = lines, virt_lines_above = true })
  else
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, math.max(line_count - 1, 0), 0, { virt_lines = lines })
  end
end

local function render_pending(bufnr, hunk, line_count)
  local first, stop = line_span(hunk.range)
  for line = first, math.min(stop, line_count) - 1 do
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, line, 0, {
      line_hl_group = "DeepSeekRemoved",
      sign_text = "-",
      sign_hl_group = "DeepSeekHunkSign",
    })
  end
  place_virt_lines(bufnr, stop, virt(text_lines(hunk.new_text), "+ ", "DeepSeekAdded"), line_count)
  -- An anchor on the hunk's first line, for ]h / [h and :DeepSeekAccept.
  local anchor = math.min(first, math.max(line_count - 1, 0))
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, anchor, 0, {
    virt_text = { { " DeepSeek hunk (pending)", "Comment" } },
    virt_text_pos = "eol",
  })
end

local function render_accepted(bufnr, hunk, line_count)
  for _, line in ipairs(hunk.added or {}) do
    if line < line_count then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, line, 0, {
        line_hl_group = "DeepSeekAdded",
        sign_text = "+",
        sign_hl_group = "DeepSeekHunkSign",
      })
    end
  end
  local at = hunk.removed_at
  if type(at) == "number" then
    place_virt_lines(bufnr, at, virt(text_lines(hunk.old_text), "- ", "DeepSeekRemoved"), line_count)
  end
end

--- Draw `hunks` in `bufnr`, replacing what was drawn before.
---@param bufnr integer
---@param hunks table[] Hunk objects of docs/protocol.md
function M.render(bufnr, hunks)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  M.hunks[bufnr] = hunks
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  if not require("deepseek.config").current.diff.enabled then
    return
  end
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  for _, hunk in ipairs(hunks) do
    if hunk.status == "pending" then
      render_pending(bufnr, hunk, line_count)
    elseif hunk.status == "accepted" then
      render_accepted(bufnr, hunk, line_count)
    end
  end
end

--- Fetch this buffer's hunks from the server and draw them.
---@param bufnr integer
---@param done fun(hunks: table[]|nil)|nil
function M.refresh(bufnr, done)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  client.request(protocol.req.hunks, { uri = uri }, function(err, result)
    if err then
      require("deepseek.ui").error("fetching hunks", err)
      if done then
        done(nil)
      end
      return
    end
    local hunks = (result and result ~= vim.NIL and result.hunks) or {}
    M.render(bufnr, hunks)
    if done then
      done(hunks)
    end
  end, bufnr)
end

--- Handle `deepseek/hunksChanged`: refresh the loaded buffers it names.
---@param uris string[]
function M.refresh_uris(uris)
  for _, uri in ipairs(uris or {}) do
    local bufnr = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.refresh(bufnr)
    end
  end
end

--- Pending hunks of `bufnr`, sorted by first line.
---@param bufnr integer
---@return table[]
function M.pending(bufnr)
  local out = {}
  for _, hunk in ipairs(M.hunks[bufnr] or {}) do
    if hunk.status == "pending" then
      table.insert(out, hunk)
    end
  end
  table.sort(out, function(a, b)
    return a.range.start.line < b.range.start.line
  end)
  return out
end

--- The pending hunk covering 0-based `line` (or starting on it, for a pure insertion).
---@param bufnr integer
---@param line integer
---@return table|nil
function M.hunk_at(bufnr, line)
  for _, hunk in ipairs(M.pending(bufnr)) do
    local first, stop = line_span(hunk.range)
    if line >= first and (line < stop or line == first) then
      return hunk
    end
  end
  return nil
end

--- Move the cursor to the next (`dir` = 1) or previous (-1) pending hunk.
---@param dir 1|-1
function M.jump(dir)
  local bufnr = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)[1] - 1
  local hunks = M.pending(bufnr)
  local target
  if dir > 0 then
    for _, hunk in ipairs(hunks) do
      if hunk.range.start.line > cursor then
        target = hunk
        break
      end
    end
  else
    for i = #hunks, 1, -1 do
      if hunks[i].range.start.line < cursor then
        target = hunks[i]
        break
      end
    end
  end
  if not target then
    require("deepseek.ui").notify(dir > 0 and "no next hunk" or "no previous hunk", vim.log.levels.WARN)
    return
  end
  local line = math.min(target.range.start.line + 1, vim.api.nvim_buf_line_count(bufnr))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
end

return M

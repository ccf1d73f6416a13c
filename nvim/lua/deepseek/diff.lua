--- Inline diffs of staged hunks, drawn with extmarks, and hunk navigation.
---
--- A pending hunk has not touched the buffer yet: the lines it would remove
--- are highlighted as removed and its new lines are shown as virtual lines
--- below them. Right after a hunk is accepted its added lines are highlighted
--- and the lines it removed are shown as virtual lines where they were, until
--- the buffer is written. Line-level changes come from diffing the hunk's old
--- and new text (its context lines are not marked).
local client = require("deepseek.client")
local protocol = require("deepseek.protocol")

local M = {}

M.ns = vim.api.nvim_create_namespace("deepseek_hunks")
M.ns_accepted = vim.api.nvim_create_namespace("deepseek_accepted")
-- One invisible extmark per pending hunk, at its first line: Neovim moves it
-- with the user's edits, which tells where a stale hunk went.
M.ns_track = vim.api.nvim_create_namespace("deepseek_hunk_track")

---@type table<integer, table<string, integer>> bufnr -> hunk_id -> extmark id
local tracked = {}

--- Last hunks fetched per buffer (as the server sent them).
---@type table<integer, table[]>
M.hunks = {}

local line_diff = (vim.text and vim.text.diff) or vim.diff

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

local function as_text(lines)
  return #lines == 0 and "" or (table.concat(lines, "\n") .. "\n")
end

--- Line-level changes of a hunk: { old_start, old_count, new_start, new_count }
--- (1-based within the hunk; a zero count's start is the line before).
---@return { old: string[], new: string[], changes: integer[][] }
function M.changes(hunk)
  if hunk._changes then
    return hunk._changes -- drawing, ]h/[h and sorting all ask; a hunk's text never changes
  end
  local old, new = text_lines(hunk.old_text), text_lines(hunk.new_text)
  local changes = line_diff(as_text(old), as_text(new), { result_type = "indices" }) or {}
  hunk._changes = { old = old, new = new, changes = changes }
  return hunk._changes
end

--- 0-based buffer line of the hunk's first changed line (now, while pending).
function M.first_changed(hunk)
  local base = hunk.range.start.line
  local c = M.changes(hunk).changes[1]
  if not c then
    return base
  end
  return c[2] > 0 and base + c[1] - 1 or base + c[1]
end

local function virt(lines, prefix, hl)
  local out = {}
  for _, line in ipairs(lines) do
    table.insert(out, { { prefix .. line, hl } })
  end
  return out
end

local function slice(list, first, count)
  return vim.list_slice(list, first, first + count - 1)
end

--- Virtual lines shown above 0-based line `at` (below the last line past the end).
local function place_virt_lines(bufnr, ns, at, lines)
  if #lines == 0 then
    return
  end
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  if at < line_count then
    vim.api.nvim_buf_set_extmark(bufnr, ns, at, 0, { virt_lines = lines, virt_lines_above = true })
  else
    vim.api.nvim_buf_set_extmark(bufnr, ns, math.max(line_count - 1, 0), 0, { virt_lines = lines })
  end
end

local function mark_lines(bufnr, ns, first, count, hl, sign)
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  for line = first, math.min(first + count, line_count) - 1 do
    vim.api.nvim_buf_set_extmark(bufnr, ns, line, 0, {
      line_hl_group = hl,
      sign_text = sign,
      sign_hl_group = "DeepSeekHunkSign",
    })
  end
end

local function render_pending(bufnr, hunk)
  local base = hunk.range.start.line
  local d = M.changes(hunk)
  for _, c in ipairs(d.changes) do
    local sa, ca, sb, cb = c[1], c[2], c[3], c[4]
    mark_lines(bufnr, M.ns, base + sa - 1, ca, "DeepSeekRemoved", "-")
    local at = ca > 0 and base + sa - 1 + ca or base + sa
    place_virt_lines(bufnr, M.ns, at, virt(slice(d.new, sb, cb), "+ ", "DeepSeekAdded"))
  end
  local anchor = math.min(M.first_changed(hunk), math.max(vim.api.nvim_buf_line_count(bufnr) - 1, 0))
  vim.api.nvim_buf_set_extmark(bufnr, M.ns, anchor, 0, {
    virt_text = { { hunk.stale and " DeepSeek hunk (moved: will be merged)" or " DeepSeek hunk", "Comment" } },
    virt_text_pos = "eol",
  })
end

--- Draw an accepted hunk (its new text is now in the buffer at its range's
--- start) in a namespace kept until the buffer is written.
---@param bufnr integer
---@param hunk table
function M.show_accepted(bufnr, hunk)
  if not require("deepseek.config").current.diff.enabled or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local base = hunk.range.start.line
  local d = M.changes(hunk)
  for _, c in ipairs(d.changes) do
    local sa, ca, sb, cb = c[1], c[2], c[3], c[4]
    mark_lines(bufnr, M.ns_accepted, base + sb - 1, cb, "DeepSeekAdded", "+")
    local at = cb > 0 and base + sb - 1 or base + sb
    place_virt_lines(bufnr, M.ns_accepted, at, virt(slice(d.old, sa, ca), "- ", "DeepSeekRemoved"))
  end
end

--- Forget the accepted-hunk decorations (on write).
function M.clear_accepted(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns_accepted, 0, -1)
  end
end

--- A stale hunk (its old text was edited) comes at the line where it was
--- staged; move it to where its tracking extmark says it is now. Then
--- (re)place the tracking marks of every pending hunk.
local function track(bufnr, hunks)
  local before, now = tracked[bufnr] or {}, {}
  local last = math.max(vim.api.nvim_buf_line_count(bufnr) - 1, 0)
  for _, hunk in ipairs(hunks) do
    if hunk.status == "pending" then
      local id = before[hunk.hunk_id]
      if hunk.stale and id then
        local pos = vim.api.nvim_buf_get_extmark_by_id(bufnr, M.ns_track, id, {})
        if pos[1] then
          local height = hunk.range["end"].line - hunk.range.start.line
          hunk.range = {
            start = { line = pos[1], character = 0 },
            ["end"] = { line = pos[1] + height, character = 0 },
          }
        end
      end
      local line = math.min(hunk.range.start.line, last)
      now[hunk.hunk_id] = vim.api.nvim_buf_set_extmark(bufnr, M.ns_track, line, 0, { id = id })
    end
  end
  for hunk_id, id in pairs(before) do
    if not now[hunk_id] then
      vim.api.nvim_buf_del_extmark(bufnr, M.ns_track, id)
    end
  end
  tracked[bufnr] = now
end

--- Draw the pending `hunks` in `bufnr`, replacing what was drawn before.
---@param bufnr integer
---@param hunks table[] Hunk objects of docs/protocol.md
function M.render(bufnr, hunks)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  track(bufnr, hunks)
  M.hunks[bufnr] = hunks
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  if not require("deepseek.config").current.diff.enabled then
    return
  end
  for _, hunk in ipairs(hunks) do
    if hunk.status == "pending" then
      render_pending(bufnr, hunk)
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

local scheduled = {}

--- refresh() once, shortly: a burst of edits (TextChanged) is one request.
---@param bufnr integer
function M.refresh_soon(bufnr)
  if scheduled[bufnr] then
    return
  end
  scheduled[bufnr] = true
  vim.defer_fn(function()
    scheduled[bufnr] = nil
    if vim.api.nvim_buf_is_valid(bufnr) then
      M.refresh(bufnr)
    end
  end, 150)
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

--- First and last (exclusive) buffer lines covered by an LSP range.
local function line_span(range)
  local first = range.start.line
  local stop = range["end"].line
  if range["end"].character > 0 then
    stop = stop + 1
  end
  return first, math.max(stop, first)
end

--- The pending hunk covering 0-based `line` (or starting on it, for a pure insertion).
--- A stale hunk (its old text was edited away) comes with an empty range at
--- where it was; it covers as many lines as its old text had.
---@param bufnr integer
---@param line integer
---@return table|nil
function M.hunk_at(bufnr, line)
  for _, hunk in ipairs(M.pending(bufnr)) do
    local first, stop = line_span(hunk.range)
    stop = math.max(stop, first + #text_lines(hunk.old_text))
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
      if M.first_changed(hunk) > cursor then
        target = hunk
        break
      end
    end
  else
    for i = #hunks, 1, -1 do
      if M.first_changed(hunks[i]) < cursor then
        target = hunks[i]
        break
      end
    end
  end
  if not target then
    require("deepseek.ui").notify(dir > 0 and "no next hunk" or "no previous hunk", vim.log.levels.WARN)
    return
  end
  local line = math.min(M.first_changed(target) + 1, vim.api.nvim_buf_line_count(bufnr))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
end

return M

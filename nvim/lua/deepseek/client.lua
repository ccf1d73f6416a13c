--- The deepseek-ls LSP client: find it, send requests and commands to it.
---
--- Every server command takes ONE JSON object (docs/protocol.md); `exec`
--- wraps that convention so callers pass a plain Lua table.
local protocol = require("deepseek.protocol")

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- The deepseek-ls client attached to `bufnr`, else any running one.
---@param bufnr integer|nil
---@return vim.lsp.Client|nil
function M.get(bufnr)
  if bufnr then
    local attached = vim.lsp.get_clients({ name = protocol.client_name, bufnr = bufnr })
    if attached[1] then
      return attached[1]
    end
  end
  return vim.lsp.get_clients({ name = protocol.client_name })[1]
end

--- Re-request code lenses in every buffer of the client `client_id`
--- (default: the running deepseek-ls client).
---@param client_id integer|nil
function M.refresh_lenses(client_id)
  local c = client_id and vim.lsp.get_client_by_id(client_id) or M.get()
  if not c then
    return
  end
  for _, bufnr in ipairs(vim.lsp.get_buffers_by_client_id(c.id)) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
  end
end

--- Client capabilities the server relies on beyond Neovim's defaults.
---@return lsp.ClientCapabilities
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  -- Neovim has no default handler for workspace/codeLens/refresh; ours
  -- (deepseek.handlers) re-requests lenses, so we can advertise support.
  caps.workspace.codeLens = { refreshSupport = true }
  -- Versioned TextDocumentEdits: Neovim refuses an edit whose version is older
  -- than the buffer's, so an accepted hunk can never land over newer typing.
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.window.showDocument = { support = true }
  -- deepseek.handlers answers deepseek/question with vim.ui.input ...
  -- ... and shows deepseek/attention with vim.notify (the server then skips its showMessage).
  caps.experimental = vim.tbl_extend("force", caps.experimental or {}, {
    [protocol.experimental.questions] = true,
    [protocol.experimental.attention] = true,
  })
  return caps
end

--- The JSON `{}` (a Lua empty table would encode as `[]`).
function M.empty_object()
  return vim.empty_dict()
end

local CANCELLED = vim.lsp.protocol.ErrorCodes.RequestCancelled

--- Requests of M.request not answered yet: client id -> request id -> finish(). Neovim
--- drops a RequestCancelled answer without calling the request's handler (vim.lsp.rpc
--- calls it "RPC-internal"), so a command stopped by :DeepSeekCancel would never end.
--- The `LspRequest` "complete" event still fires for that answer, before any handler:
--- once it has, a handler that was not called means the request was cancelled.
local unanswered = {}

vim.api.nvim_create_autocmd("LspRequest", {
  group = vim.api.nvim_create_augroup("deepseek.requests", { clear = true }),
  callback = function(ev)
    local data = ev.data or {}
    local of_client = unanswered[data.client_id]
    local finish = of_client and of_client[data.request_id]
    if finish and data.request and data.request.type == "complete" then
      of_client[data.request_id] = nil
      vim.schedule(finish) -- after the handler, if the answer had one
    end
  end,
})

--- Raw request; `callback(err, result)` always runs on the main loop, exactly once
--- when the server answers (a cancelled request: err.code == RequestCancelled).
---@param method string
---@param params table|nil
---@param callback fun(err: lsp.ResponseError|nil, result: any)
---@param bufnr integer|nil
---@return boolean sent
function M.request(method, params, callback, bufnr)
  local client = M.get(bufnr)
  if not client then
    callback({
      code = -32099,
      message = "deepseek-ls is not running: open a file of the workspace first, "
        .. "or run :checkhealth deepseek to see why the server did not start",
    }, nil)
    return false
  end
  local called = false
  local handler = function(err, result)
    called = true
    callback(err, result)
  end
  local sent, request_id
  if has_011 then
    sent, request_id = client:request(method, params or M.empty_object(), handler, bufnr)
  else
    sent, request_id = client.request(method, params or M.empty_object(), handler, bufnr)
  end
  if sent and request_id then
    unanswered[client.id] = unanswered[client.id] or {}
    unanswered[client.id][request_id] = function()
      if not called then
        handler({ code = CANCELLED, message = method .. " was cancelled" }, nil)
      end
    end
  end
  return sent
end

--- True when `err` says the request was cancelled (:DeepSeekCancel, $/cancelRequest).
---@param err lsp.ResponseError|nil
function M.cancelled(err)
  return err ~= nil and err.code == CANCELLED
end

--- Run a deepseek.* server command with its one JSON object argument.
---@param command string e.g. protocol.cmd.plan
---@param args table|nil
---@param callback fun(err: lsp.ResponseError|nil, result: any)
---@param bufnr integer|nil
function M.exec(command, args, callback, bufnr)
  local arg = args
  if arg == nil or next(arg) == nil then
    arg = M.empty_object()
  end
  return M.request("workspace/executeCommand", { command = command, arguments = { arg } }, callback, bufnr)
end

--- Run a deepseek.* server command and wait for its answer (at most `timeout_ms`): for callers
--- that cannot take a callback (:checkhealth, command-line completion). Returns the
--- `{ result, err }` of request_sync, or nil when there is no client or no answer in time.
---@param command string
---@param args table|nil
---@param timeout_ms integer
---@param bufnr integer|nil
function M.exec_sync(command, args, timeout_ms, bufnr)
  local c = M.get(bufnr)
  if not c then
    return nil
  end
  local arg = (args == nil or next(args) == nil) and M.empty_object() or args
  local params = { command = command, arguments = { arg } }
  if has_011 then
    return c:request_sync("workspace/executeCommand", params, timeout_ms)
  end
  return c.request_sync("workspace/executeCommand", params, timeout_ms)
end

--- The position encoding negotiated with the server (LSP 3.17
--- `positionEncoding`; Neovim offers utf-8, utf-16 and utf-32). Every column
--- this plugin sends or reads is in it.
---@param bufnr integer|nil
---@return "utf-8"|"utf-16"|"utf-32"
function M.offset_encoding(bufnr)
  local c = M.get(bufnr)
  return c and c.offset_encoding or "utf-16"
end

--- The LSP range of whole lines `first`..`last` of `bufnr`; the end column is
--- the last line's length in the negotiated encoding.
---@param bufnr integer
---@param first integer 1-based first line
---@param last integer 1-based last line (inclusive)
---@return lsp.Range
function M.line_range(bufnr, first, last)
  local last_text = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ""
  local end_char = vim.lsp.util.character_offset(bufnr, last - 1, #last_text, M.offset_encoding(bufnr))
  return {
    start = { line = first - 1, character = 0 },
    ["end"] = { line = last - 1, character = end_char },
  }
end

--- At most this many of the file's diagnostics go with Ask / Plan, each message cut to MAX_MESSAGE.
M.MAX_DIAGNOSTICS = 20
M.MAX_MESSAGE = 500
local OURS = { deepseek = true, ["deepseek-review"] = true }

--- The buffer's diagnostics as LSP `Diagnostic`s for `deepseek.ask` / `deepseek.plan` (`diagnostics`):
--- other tools' only (not our pending hunks or review findings), the most severe first, bounded.
function M.diagnostics(bufnr)
  local items = vim.tbl_filter(function(d)
    return not OURS[d.source or ""]
  end, vim.diagnostic.get(bufnr))
  table.sort(items, function(a, b)
    if (a.severity or 4) ~= (b.severity or 4) then
      return (a.severity or 4) < (b.severity or 4)
    end
    return a.lnum < b.lnum
  end)
  local encoding = M.offset_encoding(bufnr)
  local function character(row, col)
    local ok, offset = pcall(vim.lsp.util.character_offset, bufnr, row, col, encoding)
    return ok and offset or col
  end
  local out = {}
  for i = 1, math.min(#items, M.MAX_DIAGNOSTICS) do
    local d = items[i]
    local message = d.message or ""
    if vim.fn.strchars(message) > M.MAX_MESSAGE then
      message = vim.fn.strcharpart(message, 0, M.MAX_MESSAGE - 1) .. "…"
    end
    local end_row = d.end_lnum or d.lnum
    out[i] = {
      range = {
        start = { line = d.lnum, character = character(d.lnum, d.col or 0) },
        ["end"] = { line = end_row, character = character(end_row, d.end_col or d.col or 0) },
      },
      message = message,
      severity = d.severity,
      source = d.source,
      code = d.code,
    }
  end
  return out
end

return M

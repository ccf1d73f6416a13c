--- deepseek.nvim: the DeepSeek coding agent (deepseek-ls) in Neovim.
---
--- `require("deepseek").setup({...})` configures and starts the language
--- server; `require("deepseek").status()` is for the statusline. The user
--- commands (:DeepSeekPlan, ...) are defined by plugin/deepseek.lua.
local config = require("deepseek.config")
local protocol = require("deepseek.protocol")

local M = {}

M.configured = false

--- vim.lsp.config/enable arrived in Neovim 0.11; 0.10 starts clients by hand.
local function can_enable()
  return vim.lsp.config ~= nil and vim.lsp.enable ~= nil and vim.fn.has("nvim-0.11") == 1
end

--- The options that override lsp/deepseek_ls.lua.
local function overrides(cfg)
  return {
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    root_markers = cfg.root_markers,
    filetypes = cfg.filetypes,
    -- An empty Lua table would be sent as `[]`; the server wants an object.
    init_options = next(cfg.init_options) and cfg.init_options or vim.empty_dict(),
  }
end

--- The client config from lsp/deepseek_ls.lua with the user's options on top.
---@return table
function M.lsp_config()
  local file = vim.api.nvim_get_runtime_file("lsp/" .. protocol.client_name .. ".lua", false)[1]
  if not file then
    error("deepseek: lsp/" .. protocol.client_name .. ".lua is not on 'runtimepath'; is the plugin installed?", 0)
  end
  local base = dofile(file)
  local conf = vim.tbl_deep_extend("force", base, overrides(config.current))
  -- Lists are replaced, not merged index by index.
  conf.cmd = config.current.cmd
  conf.root_markers = config.current.root_markers
  conf.filetypes = config.current.filetypes
  conf.name = protocol.client_name
  return conf
end

--- Start (or reuse) the server for `bufnr` without vim.lsp.enable.
---@param bufnr integer|nil
---@return integer|nil client_id
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local conf = M.lsp_config()
  local fts = conf.filetypes
  if fts and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return nil
  end
  conf.root_dir = vim.fs.root(bufnr, conf.root_markers) or vim.fn.getcwd()
  conf.root_markers = nil
  conf.filetypes = nil
  return vim.lsp.start(conf, { bufnr = bufnr })
end

local function start_by_autocmd()
  local group = vim.api.nvim_create_augroup("deepseek.start", {})
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    callback = function(args)
      M.start(args.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= "" then
      M.start(buf)
    end
  end
end

local function watch_progress()
  vim.api.nvim_create_autocmd("LspProgress", {
    group = vim.api.nvim_create_augroup("deepseek.progress", {}),
    callback = function(args)
      local data = args.data or {}
      local c = data.client_id and vim.lsp.get_client_by_id(data.client_id)
      if c and c.name == protocol.client_name and data.params then
        require("deepseek.status").on_progress(data.params.token, data.params.value or {})
      end
    end,
  })
end

--- Configure deepseek.nvim and start the server for matching buffers.
---@param opts table|nil see :help deepseek-options
function M.setup(opts)
  local cfg = config.resolve(opts)
  config.current = cfg
  M.configured = true
  local use_enable = cfg.use_lsp_enable
  if use_enable == nil then
    use_enable = can_enable()
  elseif use_enable and not can_enable() then
    error("deepseek: option `use_lsp_enable`: vim.lsp.enable needs Neovim 0.11+", 0)
  end
  if use_enable then
    vim.lsp.config(protocol.client_name, overrides(cfg))
    if cfg.autostart then
      vim.lsp.enable(protocol.client_name)
    end
  elseif cfg.autostart then
    start_by_autocmd()
  end
end

--- Whether the user started the server without setup() (vim.lsp.enable or a
--- running client): then their vim.lsp.config must not be overwritten.
local function started_by_user()
  if require("deepseek.client").get() then
    return true
  end
  return vim.lsp.is_enabled ~= nil and vim.lsp.is_enabled(protocol.client_name)
end

--- setup() with the defaults unless the user already called it, so the
--- commands work without an explicit setup(). A server the user configured
--- and enabled with vim.lsp.config/enable is left as it is.
function M.ensure_setup()
  if M.configured then
    return
  end
  if started_by_user() then
    M.configured = true
  else
    M.setup({})
  end
end

--- Called for every buffer the client attaches to (from lsp/deepseek_ls.lua).
---@param client vim.lsp.Client
---@param bufnr integer
function M.on_attach(client, bufnr)
  local cfg = config.current
  local diff = require("deepseek.diff")
  watch_progress()
  local group = vim.api.nvim_create_augroup("deepseek.buf." .. bufnr, {})
  if cfg.codelens.enabled then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
    vim.api.nvim_create_autocmd(cfg.codelens.events, {
      group = group,
      buffer = bufnr,
      callback = function()
        vim.lsp.codelens.refresh({ bufnr = bufnr })
      end,
    })
  end
  diff.refresh(bufnr)
  -- Hunk positions follow the text: re-fetch after edits (debounced) and writes.
  vim.api.nvim_create_autocmd({ "BufWritePost", "InsertLeave", "TextChanged" }, {
    group = group,
    buffer = bufnr,
    callback = function(args)
      if args.event == "BufWritePost" then
        diff.clear_accepted(bufnr)
      end
      diff.refresh_soon(bufnr)
    end,
  })
  local keys = cfg.keymaps
  if keys.next_hunk then
    vim.keymap.set("n", keys.next_hunk, function()
      diff.jump(1)
    end, { buffer = bufnr, desc = "DeepSeek: next hunk" })
  end
  if keys.prev_hunk then
    vim.keymap.set("n", keys.prev_hunk, function()
      diff.jump(-1)
    end, { buffer = bufnr, desc = "DeepSeek: previous hunk" })
  end
  M.enable_inline_completion(client, bufnr)
  vim.api.nvim_exec_autocmds("User", { pattern = "DeepSeekAttach", modeline = false, data = { client_id = client.id, buf = bufnr } })
end

--- Ghost text from the server's inline completion (LSP 3.18) in `bufnr`, on Neovim 0.12+
--- (`vim.lsp.inline_completion`); on older versions, or when the server does not offer it,
--- nothing happens. The accept key is mapped in insert mode only where it is free.
---@param client vim.lsp.Client
---@param bufnr integer
---@return boolean enabled
function M.enable_inline_completion(client, bufnr)
  local cfg = config.current
  local inline = vim.lsp.inline_completion
  if not cfg.inline_completion.enabled or inline == nil or inline.enable == nil then
    return false
  end
  if not (client.server_capabilities or {}).inlineCompletionProvider then
    return false
  end
  inline.enable(true, { bufnr = bufnr })
  local key = cfg.keymaps.accept_suggestion
  if key and vim.fn.maparg(key, "i", false, false) == "" then
    vim.keymap.set("i", key, function()
      if not inline.get({ bufnr = bufnr }) then
        return key
      end
    end, { buffer = bufnr, expr = true, replace_keycodes = true, desc = "DeepSeek: accept the suggestion" })
  end
  return true
end

--- Statusline text: session state, max-think, progress; "" when idle.
---@return string
function M.status()
  return require("deepseek.status").text()
end

return M

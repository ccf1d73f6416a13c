--- Typed, validated options of deepseek.nvim.
---
--- `resolve(opts)` merges the user's options over the defaults and validates
--- the result; a bad option raises an error that names the option and says
--- what was expected, so `setup()` fails loudly instead of half-working.
local M = {}

---@class deepseek.Config
---@field cmd string[] Server command (argv); started over stdio.
---@field cmd_env table<string,string>|nil Extra environment for the server process.
---@field root_markers string[] Files/dirs that mark a workspace root.
---@field filetypes string[]|nil Filetypes to attach to; nil: every file buffer with a filetype (clients start on FileType).
---@field autostart boolean Start the server when a matching buffer opens.
---@field init_options table Sent as `initializationOptions` (server settings).
---@field codelens { enabled: boolean, events: string[] }
---@field diff { enabled: boolean }
---@field keymaps { next_hunk: string|false, prev_hunk: string|false, accept_suggestion: string|false }
---@field inline_completion { enabled: boolean } Ghost text from the server (Neovim 0.12+; skipped on 0.11).
---@field stream { window: "float"|"split", reasoning: boolean }
---@field notify boolean vim.notify when a session waits for you or finished (deepseek/attention).
---@field use_lsp_enable boolean|nil Use vim.lsp.config/enable (Nvim 0.11+); nil = when available.

---@type deepseek.Config
M.defaults = {
  cmd = { "deepseek-ls", "serve", "--stdio" },
  cmd_env = nil,
  root_markers = { ".deepseek", ".git" },
  filetypes = nil,
  autostart = true,
  init_options = {},
  codelens = { enabled = true, events = { "BufEnter", "InsertLeave", "BufWritePost" } },
  diff = { enabled = true },
  keymaps = { next_hunk = "]h", prev_hunk = "[h", accept_suggestion = "<M-l>" },
  inline_completion = { enabled = true },
  stream = { window = "float", reasoning = false },
  notify = true,
  use_lsp_enable = nil,
}

--- vim.validate changed signature in 0.11; the table form is deprecated there.
local function check(name, value, types, optional)
  if vim.fn.has("nvim-0.11") == 1 then
    vim.validate(name, value, types, optional)
  else
    vim.validate({ [name] = { value, types, optional } })
  end
end

local function fail(name, expected, value)
  error(("deepseek: option `%s`: expected %s, got %s"):format(name, expected, vim.inspect(value)), 0)
end

local function check_string_list(name, value, optional)
  if value == nil and optional then
    return
  end
  if type(value) ~= "table" or not vim.islist(value) or #value == 0 then
    fail(name, "a non-empty list of strings", value)
  end
  for i, item in ipairs(value) do
    if type(item) ~= "string" or item == "" then
      fail(("%s[%d]"):format(name, i), "a non-empty string", item)
    end
  end
end

local function check_key(name, value)
  if value ~= false and (type(value) ~= "string" or value == "") then
    fail(name, "a key sequence (string) or false", value)
  end
end

-- Top-level options whose default is nil (so absent from M.defaults).
local nil_default = { cmd_env = true, filetypes = true, use_lsp_enable = true }

local function check_unknown(prefix, given, defaults)
  for key, value in pairs(given) do
    if defaults[key] == nil and not (prefix == "" and nil_default[key]) then
      fail(prefix .. key, "a known option (see :help deepseek-options)", value)
    end
  end
end

--- Validate a fully merged config; raises on the first bad option.
---@param cfg deepseek.Config
function M.validate(cfg)
  check_string_list("cmd", cfg.cmd)
  check("cmd_env", cfg.cmd_env, "table", true)
  check_string_list("root_markers", cfg.root_markers)
  check_string_list("filetypes", cfg.filetypes, true)
  check("autostart", cfg.autostart, "boolean")
  check("init_options", cfg.init_options, "table")
  check("codelens", cfg.codelens, "table")
  check("codelens.enabled", cfg.codelens.enabled, "boolean")
  check_string_list("codelens.events", cfg.codelens.events)
  check("diff", cfg.diff, "table")
  check("diff.enabled", cfg.diff.enabled, "boolean")
  check("keymaps", cfg.keymaps, "table")
  check_key("keymaps.next_hunk", cfg.keymaps.next_hunk)
  check_key("keymaps.prev_hunk", cfg.keymaps.prev_hunk)
  check_key("keymaps.accept_suggestion", cfg.keymaps.accept_suggestion)
  check("inline_completion", cfg.inline_completion, "table")
  check("inline_completion.enabled", cfg.inline_completion.enabled, "boolean")
  check("stream", cfg.stream, "table")
  if cfg.stream.window ~= "float" and cfg.stream.window ~= "split" then
    fail("stream.window", '"float" or "split"', cfg.stream.window)
  end
  check("stream.reasoning", cfg.stream.reasoning, "boolean")
  check("notify", cfg.notify, "boolean")
  check("use_lsp_enable", cfg.use_lsp_enable, "boolean", true)
end

--- Merge `opts` over the defaults and validate.
---@param opts table|nil
---@return deepseek.Config
function M.resolve(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    fail("opts", "a table", opts)
  end
  check_unknown("", opts, M.defaults)
  for _, section in ipairs({ "codelens", "diff", "keymaps", "stream", "inline_completion" }) do
    if type(opts[section]) == "table" then
      check_unknown(section .. ".", opts[section], M.defaults[section])
    end
  end
  -- Lists replace the default list instead of merging index by index.
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  for _, list_key in ipairs({ "cmd", "root_markers", "filetypes" }) do
    if opts[list_key] ~= nil then
      cfg[list_key] = opts[list_key]
    end
  end
  if type(opts.codelens) == "table" and opts.codelens.events ~= nil then
    cfg.codelens.events = opts.codelens.events
  end
  M.validate(cfg)
  return cfg
end

--- The options in force (defaults until setup() runs).
---@type deepseek.Config
M.current = vim.deepcopy(M.defaults)

return M

--- deepseek-ls, the DeepSeek coding agent as a language server.
---
--- A |vim.lsp.Config|: with Neovim 0.11+ `vim.lsp.enable("deepseek_ls")`
--- uses it as is; `require("deepseek").setup()` layers your options on top
--- (and starts it by hand on Neovim 0.10).
local handlers = require("deepseek.handlers")
-- The same defaults as setup() (deepseek.config), written once.
local defaults = require("deepseek.config").defaults

---@type vim.lsp.Config
return {
  cmd = vim.deepcopy(defaults.cmd),
  root_markers = vim.deepcopy(defaults.root_markers),
  capabilities = require("deepseek.client").capabilities(),
  handlers = handlers.handlers,
  commands = handlers.commands,
  init_options = vim.empty_dict(),
  on_attach = function(client, bufnr)
    require("deepseek").on_attach(client, bufnr)
  end,
}

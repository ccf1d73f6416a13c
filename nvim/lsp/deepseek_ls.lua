--- deepseek-ls, the DeepSeek coding agent as a language server.
---
--- A |vim.lsp.Config|: with Neovim 0.11+ `vim.lsp.enable("deepseek_ls")`
--- uses it as is; `require("deepseek").setup()` layers your options on top
--- (and starts it by hand on Neovim 0.10).
local handlers = require("deepseek.handlers")

---@type vim.lsp.Config
return {
  cmd = { "deepseek-ls", "serve", "--stdio" },
  root_markers = { ".deepseek", ".git" },
  capabilities = require("deepseek.client").capabilities(),
  handlers = handlers.handlers,
  commands = handlers.commands,
  init_options = vim.empty_dict(),
  on_attach = function(client, bufnr)
    require("deepseek").on_attach(client, bufnr)
  end,
}

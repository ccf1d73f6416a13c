-- deepseek.nvim entry point: defines the :DeepSeek* commands once.
-- The server starts on require("deepseek").setup({...}) (or with
-- vim.lsp.enable("deepseek_ls") on Neovim 0.11+), never at load time.
if vim.g.loaded_deepseek == 1 then
  return
end
vim.g.loaded_deepseek = 1

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify("deepseek.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

require("deepseek.commands").register()

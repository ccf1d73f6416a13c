-- Inline completion: on Neovim 0.12 the plugin enables vim.lsp.inline_completion for the buffers
-- deepseek-ls attaches to; entering insert mode asks the server, which asks the fake model's FIM
-- endpoint; the suggestion shows as ghost text and the accept key inserts it. On 0.11 (no
-- vim.lsp.inline_completion) attaching works as before, without an error.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local buf

local function ghost_text()
  local ns = vim.api.nvim_get_namespaces()["nvim.lsp.inline_completion"]
  if not ns then
    return nil
  end
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local virt = mark[4].virt_text
    if virt and virt[1] then
      return virt[1][1]
    end
  end
end

H.run({
  {
    "the server attaches (inline completion on where Neovim has it, no error where it has not)",
    function()
      buf = S.start({ init_options = { index = { enabled = false },
                                       inline_completion = { debounce_ms = 0, index_hits = 0 } } })
      local client = vim.lsp.get_clients({ name = "deepseek_ls", bufnr = buf })[1]
      H.ok(client.server_capabilities.inlineCompletionProvider, "inlineCompletionProvider in initialize")
      if vim.lsp.inline_completion == nil then
        H.eq(vim.fn.maparg("<M-l>", "i"), "", "no accept key without inline completion")
        print("SKIP inline completion: this Neovim has no vim.lsp.inline_completion")
        return
      end
      H.ok(vim.lsp.inline_completion.is_enabled({ bufnr = buf }), "enabled for the buffer")
      H.ok(vim.fn.maparg("<M-l>", "i") ~= "", "the accept key is mapped in insert mode")
    end,
  },
  {
    "entering insert mode shows the model's suggestion; the accept key inserts it",
    function()
      if vim.lsp.inline_completion == nil then
        return
      end
      -- Headless, the script stays in normal mode, where the cursor cannot be past a line's last
      -- character: it sits on `pass`, so the suggestion goes before it.
      vim.api.nvim_buf_set_lines(buf, 6, 6, false, { "def sub(a, b):", "    pass" })
      vim.api.nvim_win_set_cursor(0, { 8, 4 })
      vim.api.nvim_exec_autocmds("InsertEnter", { buffer = buf, modeline = false })
      local shown = H.wait(20000, ghost_text, "the suggestion as ghost text")
      H.ok(shown:find("return a - b", 1, true), "ghost text: " .. vim.inspect(shown))
      H.ok(vim.lsp.inline_completion.get({ bufnr = buf }), "a suggestion to accept")
      local ok = vim.wait(5000, function()
        return vim.api.nvim_buf_get_lines(buf, 7, 8, false)[1] == "    return a - bpass"
      end, 20)
      H.ok(ok, "the suggestion in the buffer: " .. vim.inspect(vim.api.nvim_buf_get_lines(buf, 0, -1, false)))
    end,
  },
})

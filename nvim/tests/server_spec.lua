-- The plugin starts the real deepseek-ls and talks LSP to it.
-- Run by tests/nvim/test_server.py from a workspace holding app.py.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local function client()
  return require("deepseek.client").get()
end

H.run({
  {
    "opening a workspace file starts deepseek-ls and completes initialize",
    function()
      require("deepseek").setup({
        cmd = { vim.env.DEEPSEEK_LS_BIN, "serve", "--stdio" },
        use_lsp_enable = ({ ["1"] = true, ["0"] = false })[vim.env.DEEPSEEK_USE_LSP_ENABLE or ""],
      })
      vim.cmd("edit app.py")
      local buf = vim.api.nvim_get_current_buf()
      local c = H.wait(20000, function()
        local found = vim.lsp.get_clients({ name = "deepseek_ls", bufnr = buf })[1]
        return found and found.initialized and found
      end, "deepseek_ls to attach to app.py and initialize")
      H.eq(c.server_info and c.server_info.name, "deepseek-ls", "serverInfo.name")
      H.eq(c.root_dir, vim.fn.getcwd(), "root_dir is the workspace (found by .git)")
      H.ok(c.server_capabilities.executeCommandProvider, "server offers executeCommand")
    end,
  },
  {
    ":checkhealth deepseek sees the running server",
    function()
      vim.cmd("checkhealth deepseek")
      local text = H.text(0)
      H.matches(text, "deepseek%-ls is running %(client %d+", "running client")
      H.ok(not text:find("ERROR"), "no ERROR in :checkhealth deepseek:\n" .. text)
      vim.cmd("bwipeout!")
    end,
  },
  {
    "a request without a client says how to start one",
    function()
      local got
      vim.cmd("enew")
      vim.lsp.stop_client(client().id, true)
      H.wait(10000, function()
        return client() == nil
      end, "the client to stop")
      require("deepseek.client").request("deepseek/status", {}, function(err)
        got = err
      end)
      H.matches(got and got.message, "deepseek%-ls is not running", "error message")
    end,
  },
})

-- The plugin starts the real deepseek-ls and talks LSP to it.
-- Run by tests/nvim/test_server.py from a workspace holding app.py.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

-- "enable": setup() with vim.lsp.enable; "start": setup() with the 0.10
-- vim.lsp.start path; "user": vim.lsp.config/enable by hand, no setup().
local mode = vim.env.DEEPSEEK_START_MODE

local function client()
  return require("deepseek.client").get()
end

H.run({
  {
    "opening a workspace file starts deepseek-ls and completes initialize",
    function()
      local cmd = { vim.env.DEEPSEEK_LS_BIN, "serve", "--stdio" }
      if mode == "user" then
        -- No setup(): the Neovim 0.11+ way, with lsp/deepseek_ls.lua from the plugin.
        vim.lsp.config("deepseek_ls", { cmd = cmd })
        vim.lsp.enable("deepseek_ls")
      else
        require("deepseek").setup({ cmd = cmd, use_lsp_enable = mode == "enable" })
      end
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
    "commands work without setup() and keep the user's vim.lsp.config",
    function()
      vim.cmd("DeepSeekCancel") -- nothing runs yet: the server answers, and says so
      H.wait(10000, function()
        return H.notified("nothing to cancel")
      end, "the server's answer")
      if mode == "user" then
        H.eq(vim.lsp.config.deepseek_ls.cmd[1], vim.env.DEEPSEEK_LS_BIN, "the user's cmd is kept")
      end
      H.ok(require("deepseek").configured, "configured after the first command")
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

-- MCP servers in Neovim: a repository's .mcp.json (written by tests/nvim/test_mcp.py,
-- naming the real mcp-server-time) is not approved: :checkhealth and :DeepSeekMcp say so;
-- :DeepSeekMcp approve asks through vim.ui.select; then the server runs and its tools show.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")

local function shown(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find(name, 1, true) then
      return H.text(b)
    end
  end
end

H.run({
  {
    ":checkhealth deepseek lists the repository's MCP server as not approved",
    function()
      S.start()
      vim.cmd("checkhealth deepseek")
      local text = H.text(0)
      H.matches(text, "MCP server time: not approved", "health names the server")
      vim.cmd("bwipeout!")
    end,
  },
  {
    ":DeepSeekMcp approve asks with what would run; approving starts it",
    function()
      table.insert(S.choosers, "Approve")
      H.run_until_done("DeepSeekMcp approve", 30000)
      local prompt = S.selects[#S.selects]
      H.matches(prompt.prompt, "mcp%-server%-time", "the prompt shows the command")
      H.wait(10000, function()
        return H.notified("approved 1 MCP server(s)")
      end, "the approval to be confirmed")
      H.run_until_done("DeepSeekMcp", 60000)
      local text = H.wait(10000, function()
        return shown("deepseek://mcp")
      end, "the :DeepSeekMcp buffer")
      H.matches(text, "time  %(stdio, from .-%.mcp%.json%)  ready", "the server runs")
      H.matches(text, "mcp_time_get_current_time  %[read%-only%]", "its tools are listed")
    end,
  },
})

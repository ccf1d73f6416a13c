-- CodeCompanion.nvim, a third-party ACP client (copied into .tools/clients by
-- scripts/setup-clients.sh), uses deepseek-ls through `deepseek-ls acp`: a prompt in its chat
-- -> our plan and the staged diff -> its permission prompt, accepted with its own keymap
-- -> the file changed on disk. Run by tests/nvim/test_codecompanion.py.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.opt.rtp:prepend(vim.fs.dirname(arg[0]) .. "/runtime") -- the query the client's copy lacks
vim.opt.rtp:prepend(vim.env.PLENARY_DIR)
vim.opt.rtp:prepend(vim.env.CODECOMPANION_DIR)

local approvals = 0
vim.api.nvim_create_autocmd("User", {
  pattern = "CodeCompanionToolApprovalRequested",
  callback = function()
    approvals = approvals + 1
  end,
})

local function disk(path)
  local f = io.open(path, "r")
  local text = f and f:read("*a") or ""
  if f then
    f:close()
  end
  return text
end

local chat

H.run({
  {
    "CodeCompanion starts deepseek-ls acp and streams the turn into its chat",
    function()
      require("codecompanion").setup({
        adapters = {
          acp = {
            deepseek_ls = function()
              return require("codecompanion.adapters").extend("goose", {
                name = "deepseek_ls",
                formatted_name = "DeepSeek",
                commands = { default = { vim.env.DEEPSEEK_LS_BIN, "acp" } },
                defaults = { mcpServers = {}, timeout = 60000 },
              })
            end,
          },
        },
        interactions = { chat = { adapter = "deepseek_ls" } },
        opts = { log_level = "ERROR" },
      })
      vim.cmd("edit app.py")
      -- As a person would: open the chat, let it connect, type the prompt, submit. Not
      -- `auto_submit`: CodeCompanion then submits before its own scheduled connect and, when
      -- the agent's `initialize` answer is not back yet, starts the agent twice and keeps the
      -- session of one and the prompt of the other (the turn's updates are then dropped).
      chat = require("codecompanion").chat()
      H.ok(chat and chat.bufnr, "a chat buffer")
      H.wait(60000, function()
        return chat.acp_connection and chat.acp_connection:is_connected()
      end, "CodeCompanion to start deepseek-ls acp and open a session")
      local last = vim.api.nvim_buf_line_count(chat.bufnr)
      vim.api.nvim_buf_set_lines(chat.bufnr, last, last, false, {
        "make greet use an f-string and make add convert its arguments",
      })
      chat:submit()
      H.wait(60000, function()
        return approvals > 0
      end, "deepseek-ls to ask permission for its edit; the chat says:\n" .. H.text(chat.bufnr))
      local text = H.text(chat.bufnr)
      H.matches(text, "Proposed edits for `[^`]*app%.py`", "the chat shows the proposed edit")
      H.matches(text, "%+    return f'hello {name}'", "with the diff")
    end,
  },
  {
    "accepting in the chat (g2) lets deepseek-ls write the file",
    function()
      vim.api.nvim_buf_call(chat.bufnr, function()
        vim.cmd("normal g2")
      end)
      H.wait(60000, function()
        return disk("app.py"):find("f'hello {name}'", 1, true)
      end, "app.py to be changed on disk")
      H.matches(disk("app.py"), "return int%(a%) %+ int%(b%)", "both hunks applied")
      H.wait(30000, function()
        return H.text(chat.bufnr):find("Done: 1/1 step", 1, true)
      end, "the turn to finish in the chat")
    end,
  },
})

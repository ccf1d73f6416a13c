-- Workspace trust in Neovim: the workspace (written by tests/nvim/test_nvim_trust.py) ships a
-- .deepseek/config.toml that loosens policy, and the plugin's init_options loosen it too.
-- :checkhealth says the workspace is not trusted and names what is held back; :DeepSeekTrust
-- trusts it (checkhealth then says so), :DeepSeekTrust status shows it, :DeepSeekUntrust undoes it.
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

local function health()
  vim.cmd("checkhealth deepseek")
  local text = H.text(0)
  vim.cmd("bwipeout!")
  return text
end

H.run({
  {
    ":checkhealth deepseek says the workspace is not trusted and what is ignored",
    function()
      S.start({ init_options = { policy = { approve_bash = "auto" } } })
      local text = health()
      H.matches(text, "workspace is not trusted", "health says untrusted")
      H.matches(text, "policy%.approval_mode", "the workspace file's setting is named")
      H.matches(text, "policy%.approve_bash %(editor%)", "the editor setting is named")
      H.matches(text, ":DeepSeekTrust", "health says what to do")
    end,
  },
  {
    ":DeepSeekTrust trusts the workspace; checkhealth and :DeepSeekTrust status say so",
    function()
      H.run_until_done("DeepSeekTrust", 20000)
      H.wait(10000, function()
        return H.notified("its settings apply in full")
      end, "the trust to be confirmed")
      H.matches(health(), "workspace is trusted", "health says trusted")
      H.run_until_done("DeepSeekTrust status", 20000)
      local text = H.wait(10000, function()
        return shown("deepseek://trust")
      end, "the :DeepSeekTrust status buffer")
      H.matches(text, "^trusted: ", "the status buffer says trusted")
    end,
  },
  {
    ":DeepSeekUntrust stops trusting it",
    function()
      H.run_until_done("DeepSeekUntrust", 20000)
      H.wait(10000, function()
        return H.notified("is no longer trusted")
      end, "the untrust to be confirmed")
      H.matches(health(), "workspace is not trusted", "health says untrusted again")
    end,
  },
})

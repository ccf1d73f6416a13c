--- :checkhealth deepseek — Neovim version, server command and version,
--- API key presence (never its value), and whether the client runs.
local M = {}

local health = vim.health

--- The server command with "serve ..." replaced by "--version".
---@param cmd string[]
---@return string[]
function M.version_cmd(cmd)
  local out = {}
  for _, part in ipairs(cmd) do
    if part == "serve" then
      break
    end
    table.insert(out, part)
  end
  table.insert(out, "--version")
  return out
end

local function check_neovim()
  local text = tostring(vim.version()) -- e.g. "0.11.4" or "0.12.0-dev"
  if vim.fn.has("nvim-0.10") ~= 1 then
    health.error("Neovim " .. text .. " is too old", { "deepseek.nvim needs Neovim 0.10 or newer" })
    return
  end
  local how = vim.fn.has("nvim-0.11") == 1 and "vim.lsp.config/vim.lsp.enable" or "vim.lsp.start (Neovim 0.10)"
  health.ok(("Neovim %s (client started with %s)"):format(text, how))
end

local function check_server(cfg)
  local exe = cfg.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("server command not found: %s"):format(exe), {
      "Install the server: pip install deepseek-ls",
      'or point setup({ cmd = { "/path/to/deepseek-ls", "serve", "--stdio" } }) at it',
    })
    return
  end
  health.ok(("server command: %s"):format(table.concat(cfg.cmd, " ")))
  local argv = M.version_cmd(cfg.cmd)
  local ok, res = pcall(function()
    return vim.system(argv, { text = true, env = cfg.cmd_env }):wait(10000)
  end)
  if not ok then
    health.error(("could not run %s: %s"):format(table.concat(argv, " "), tostring(res)))
  elseif res.code ~= 0 then
    local detail = vim.trim((res.stderr or "") .. (res.stdout or ""))
    health.error(("%s exited with %d: %s"):format(table.concat(argv, " "), res.code, detail))
  else
    health.ok("server version: " .. vim.trim(res.stdout or ""))
  end
end

--- The environment variable the server reads its key from (`llm.api_key_env`,
--- asked from `deepseek-ls config show --json` in the current directory).
local function api_key_env(cfg)
  local argv = M.version_cmd(cfg.cmd)
  argv[#argv] = nil -- drop "--version"
  vim.list_extend(argv, { "config", "show", "--json" })
  local ok, res = pcall(function()
    return vim.system(argv, { text = true, env = cfg.cmd_env }):wait(10000)
  end)
  if ok and res.code == 0 then
    local decoded_ok, data = pcall(vim.json.decode, res.stdout or "")
    if decoded_ok and type(data) == "table" and type(data.api_key) == "table" and data.api_key.env then
      return data.api_key.env, true
    end
  end
  return "DEEPSEEK_API_KEY", false
end

local function check_api_key(cfg)
  local name, from_config = api_key_env(cfg)
  if not from_config then
    health.info("could not ask the server's config for llm.api_key_env; assuming DEEPSEEK_API_KEY")
  end
  local from_cmd_env = cfg.cmd_env and cfg.cmd_env[name]
  local value = from_cmd_env or vim.env[name]
  if value and value ~= "" then
    health.ok(("%s is set (%s; value not shown)"):format(name, from_cmd_env and "cmd_env" or "environment"))
  else
    health.warn(("%s is not set in Neovim's environment"):format(name), {
      "export " .. name .. " before starting Neovim, or set it in setup({ cmd_env = {...} })",
      "the variable's name is the server's llm.api_key_env setting (see `deepseek-ls config show`)",
    })
  end
end

local function check_client()
  local client = require("deepseek.client").get()
  if client then
    health.ok(("deepseek-ls is running (client %d, root %s)"):format(client.id, tostring(client.root_dir)))
  else
    health.info("deepseek-ls is not running in this Neovim (it starts when you open a file of a workspace)")
  end
end

--- MCP servers as the running server sees them (started, so a broken one shows its error).
local function check_mcp()
  local client = require("deepseek.client").get()
  if not client then
    health.info("MCP servers: shown once deepseek-ls runs")
    return
  end
  local res = require("deepseek.client").exec_sync(require("deepseek.protocol").cmd.mcp_status, { start = true }, 60000)
  if not res or res.err then
    health.warn("could not ask for the MCP servers: " .. vim.inspect(res and res.err or "timeout"))
    return
  end
  local status = res.result or {}
  local servers = status.servers or {}
  if #servers == 0 then
    health.info("no MCP servers configured")
    return
  end
  for _, s in ipairs(servers) do
    local tools = #(s.offered or {})
    if s.state == "ready" then
      health.ok(("MCP server %s: ready, %d tool%s (from %s)"):format(s.name, tools, tools == 1 and "" or "s", s.source))
    elseif not s.approved then
      health.warn(("MCP server %s: not approved (from %s)"):format(s.name, s.source), {
        "It starts a program the repository chose: review it, then :DeepSeekMcp approve",
      })
    else
      local why = s.error ~= vim.NIL and s.error or (s.hint ~= vim.NIL and s.hint or s.state)
      health.error(("MCP server %s: %s"):format(s.name, tostring(why)))
    end
  end
end

--- Whether the running server trusts this workspace, and what it holds back until then.
local function check_trust()
  local client = require("deepseek.client").get()
  if not client then
    health.info("workspace trust: shown once deepseek-ls runs")
    return
  end
  local params = { command = require("deepseek.protocol").cmd.trust_status, arguments = { require("deepseek.client").empty_object() } }
  local res
  if vim.fn.has("nvim-0.11") == 1 then
    res = client:request_sync("workspace/executeCommand", params, 10000)
  else
    res = client.request_sync("workspace/executeCommand", params, 10000)
  end
  if not res or res.err then
    health.warn("could not ask whether the workspace is trusted: " .. vim.inspect(res and res.err or "timeout"))
    return
  end
  local status = res.result or {}
  if status.trusted then
    health.ok(("workspace is trusted: %s"):format(status.workspace))
    return
  end
  local held = {}
  for _, key in ipairs(status.ignored_workspace_config or {}) do
    table.insert(held, key)
  end
  for _, key in ipairs(status.ignored_editor_settings or {}) do
    table.insert(held, key .. " (editor)")
  end
  local why = status.state == "changed" and "its config changed since you trusted it" or "not trusted"
  local line = ("workspace is %s: %s"):format(why, status.workspace)
  if #held > 0 then
    line = line .. "; ignored: " .. table.concat(held, ", ")
  end
  health.warn(line, { "If you trust this repository: :DeepSeekTrust (yolo mode also needs it)" })
end

function M.check()
  health.start("deepseek.nvim")
  local deepseek = require("deepseek")
  local cfg = require("deepseek.config").current
  if not deepseek.configured then
    health.info('setup() has not been called; using the defaults (require("deepseek").setup({}))')
  end
  check_neovim()
  check_server(cfg)
  check_api_key(cfg)
  check_client()
  check_trust()
  check_mcp()
end

return M

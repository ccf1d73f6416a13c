--- Handlers for what deepseek-ls sends to Neovim, and client-side commands.
---
--- `M.handlers` goes into the client config (lsp/deepseek_ls.lua), so the
--- plugin works the same through setup() and through vim.lsp.enable().
local protocol = require("deepseek.protocol")

local M = {}

--- Ask the user to pick one of a showMessageRequest's actions. Server
--- requests run in a coroutine, so we can wait for vim.ui.select's answer.
local function show_message_request(err, params, ctx, cfg)
  local actions = params.actions or {}
  local co, is_main = coroutine.running()
  if #actions == 0 or not co or is_main then
    return vim.lsp.handlers["window/showMessageRequest"](err, params, ctx, cfg)
  end
  require("deepseek.status").awaiting_approval = params.message
  vim.ui.select(actions, {
    prompt = "DeepSeek: " .. params.message,
    kind = "deepseek_approval",
    format_item = function(action)
      return action.title
    end,
  }, function(choice)
    vim.schedule(function()
      require("deepseek.status").awaiting_approval = nil
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- A clarifying question of the agent (deepseek/question): ask with
--- vim.ui.input (vim.ui.select when it has choices) and send deepseek.answer;
--- <Esc> answers null, which cancels the question.
local function on_question(_, q)
  local function send(answer)
    require("deepseek.client").exec(protocol.cmd.answer, {
      question_id = q.question_id,
      answer = answer == nil and vim.NIL or answer,
    }, function(err)
      if err then
        require("deepseek.ui").error("answer", err)
      end
    end)
  end
  vim.schedule(function()
    local choices = q.choices ~= vim.NIL and q.choices or nil
    if choices and #choices > 0 then
      vim.ui.select(choices, { prompt = "DeepSeek asks: " .. q.question, kind = "deepseek_question" }, send)
    else
      vim.ui.input({ prompt = "DeepSeek asks: " .. q.question .. " " }, send)
    end
  end)
end

--- A session waits for the person or stopped (deepseek/attention): vim.notify, WARN for a wait
--- or a stop, INFO for a finish; `notify = false` in setup{} turns it off. "answered" (a wait
--- ended) says nothing: the prompt that asked is gone already.
local function on_attention(_, a)
  local cfg = require("deepseek.config").current
  if (cfg and cfg.notify == false) or a.kind == "answered" then
    return
  end
  local message = tostring(a.message or "")
  local level = (a.kind == "waiting" or message:find("^stopped")) and vim.log.levels.WARN or vim.log.levels.INFO
  vim.schedule(function()
    vim.notify("DeepSeek " .. message, level, { title = "DeepSeek" })
  end)
end

-- LSP MessageType -> vim.log.levels
local message_levels = {
  [1] = vim.log.levels.ERROR,
  [2] = vim.log.levels.WARN,
  [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG,
}

M.handlers = {
  [protocol.notify.stream] = function(_, params)
    require("deepseek.ui").on_stream(params)
  end,
  [protocol.notify.status] = function(_, params)
    require("deepseek.status").update(params)
  end,
  [protocol.notify.hunks_changed] = function(_, params)
    require("deepseek.diff").refresh_uris(params.uris)
  end,
  [protocol.notify.question] = on_question,
  [protocol.notify.attention] = on_attention,
  ["workspace/codeLens/refresh"] = function(_, _, ctx)
    vim.schedule(function()
      require("deepseek.client").refresh_lenses(ctx.client_id)
    end)
    return vim.NIL
  end,
  ["window/showMessageRequest"] = show_message_request,
  -- Through vim.notify on every Neovim version (0.11 only echoes), so
  -- notification plugins show the server's messages like ours.
  ["window/showMessage"] = function(_, params)
    local ui = require("deepseek.ui")
    ui.remember_shown(params.message)
    vim.notify(params.message, message_levels[params.type] or vim.log.levels.INFO, { title = "DeepSeek" })
    return vim.NIL
  end,
}

--- Commands run on the client when a code lens names them: "Revise…" needs
--- the user's feedback before the server can act. An empty answer lets the
--- server use the comments written in the plan document; <Esc> cancels.
M.commands = {
  [protocol.cmd.revise_plan] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    vim.ui.input({ prompt = "DeepSeek: how should the plan change? " }, function(feedback)
      if feedback == nil then
        return
      end
      local args = vim.tbl_extend("force", arg, { feedback = feedback })
      local ui = require("deepseek.ui")
      ui.notify("revising the plan…")
      require("deepseek.client").exec(protocol.cmd.revise_plan, args, function(err, result)
        if err then
          ui.error("revise plan", err)
          return
        end
        local steps = result and result.plan and result.plan.steps or {}
        ui.notify(("plan revised: %d step%s"):format(#steps, #steps == 1 and "" or "s"))
        require("deepseek.client").refresh_lenses(ctx.client_id)
      end, ctx.bufnr)
    end)
  end,
}

return M

-- :DeepSeekCancel while the model streams: during a plan (before the editor
-- knows the new session) and during a step. The stream stops, the user is told
-- it was cancelled (not an error), and the stopped step offers Run again.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local ui = require("deepseek.ui")
local buf

-- Count the model text that reaches the editor.
local chunks = 0
local on_stream = ui.on_stream
ui.on_stream = function(params)
  if params.channel == "content" then
    chunks = chunks + 1
  end
  return on_stream(params)
end

--- Wait for some streamed text, :DeepSeekCancel, wait for the answer; then the
--- stream must stay (nearly) silent: uncancelled, ~25 chunks arrive in 500 ms.
local function cancel_mid_stream()
  local before = chunks
  H.wait(30000, function()
    return chunks >= before + 3
  end, "streamed text")
  H.run_until_done("DeepSeekCancel", 20000, "deepseek.cancel")
  H.ok(H.notified("cancelled"), "the user is told: " .. vim.inspect(H.messages()))
  local after = chunks
  vim.wait(500)
  H.ok(chunks <= after + 1, ("the stream stopped (%d more chunks)"):format(chunks - after))
end

local function step_lens()
  local lens = S.find_lens(buf, "Step 1")
  return lens and lens.command.command == "deepseek.runStep" and lens.command.title:find("pending", 1, true) and lens
end

H.run({
  {
    ":DeepSeekCancel stops a plan while it streams",
    function()
      buf = S.start()
      local plan_done = H.on_done("deepseek.plan")
      vim.cmd("DeepSeekPlan slow plan please")
      cancel_mid_stream()
      -- The plan command itself ends, unsuccessfully (Neovim drops the RequestCancelled answer).
      H.eq(H.wait(3000, plan_done, "the :DeepSeekPlan command to finish"), { command = "deepseek.plan", ok = false },
        "the plan's User DeepSeekDone")
      H.ok(H.notified("plan cancelled"), "the user is told the plan was cancelled: " .. vim.inspect(H.messages()))
      local status = require("deepseek.status")
      H.wait(10000, function()
        return status.current and status.current.state == "Paused"
      end, "the status to show the plan's session Paused")
      H.ok(status.current.session_id ~= vim.NIL, "the status names the cancelled session")
      vim.wait(300)
      H.eq(H.notified("plan ready"), nil, "no plan was made")
      H.eq(S.find_lens(buf, "Step 1"), nil, "no step lens")
    end,
  },
  {
    ":DeepSeekCancel stops a running step, which offers Run again",
    function()
      S.plan(buf, "make greet use an f-string")
      H.ok(step_lens(), "the step is runnable before")
      local lens = S.find_lens(buf, "Step 1")
      vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
      table.insert(S.choosers, 1, "Step 1")
      H.expect_error("cancel") -- Neovim reports the lens command's error itself
      vim.lsp.codelens.run()
      table.remove(S.choosers, 1)
      cancel_mid_stream()
      H.wait(20000, step_lens, "the step lens to offer Run again (pending)")
    end,
  },
  {
    "the step runs again to the end",
    function()
      S.run_step(buf, 2)
    end,
  },
})

-- Approvals: accepting a patch the safety gate flags (the server is set to
-- flag any change) blocks on window/showMessageRequest. The person answers
-- through vim.ui.select (DEEPSEEK_APPROVE_VIA=select), or leaves the prompt
-- open and uses :DeepSeekApprove (DEEPSEEK_APPROVE_VIA=command), or denies.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local via = vim.env.DEEPSEEK_APPROVE_VIA
local buf

local function approval_prompts()
  return vim.tbl_filter(function(call)
    return call.kind == "deepseek_approval"
  end, S.selects)
end

H.run({
  {
    "plan and run a step whose patch needs approval",
    function()
      buf = S.start({ init_options = { agent_loop = { safety_gate = { max_loc_without_approval = 0 } } } })
      S.plan(buf, "make greet use an f-string and make add convert its arguments")
      S.run_step(buf, 2)
    end,
  },
  {
    "accepting all asks for approval; the answer decides what is applied",
    function()
      local original = H.text(buf)
      if via == "select" then
        table.insert(S.choosers, "Allow once")
      elseif via == "deny" then
        table.insert(S.choosers, "Deny")
      else
        -- Leave the prompt open, as a person who switches to the command would.
        table.insert(S.choosers, function(call)
          return call.kind == "deepseek_approval"
        end)
      end
      vim.cmd("DeepSeekAcceptAll")
      local prompt = H.wait(20000, function()
        return approval_prompts()[1]
      end, "an approval prompt through vim.ui.select")
      H.matches(prompt.prompt, "Apply 2 hunk%(s%) to app%.py", "the prompt says what would be applied")
      H.eq(prompt.items, { "Allow once", "Always allow", "Deny" }, "the choices")
      if via == "command" then
        local status = require("deepseek.status")
        H.ok(status.awaiting_approval, "status knows an approval is waiting")
        vim.cmd("DeepSeekApprove")
        H.wait(20000, function()
          return H.notified("approved: Apply 2 hunk(s)")
        end, ":DeepSeekApprove to answer")
      end
      if via == "deny" then
        H.wait(20000, function()
          return H.notified("approval denied")
        end, "the server to say it was denied")
        H.eq(H.text(buf), original, "nothing applied after Deny")
        H.eq(#require("deepseek.diff").pending(buf), 2, "both hunks still pending")
      else
        H.wait(20000, function()
          local text = H.text(buf)
          return text:find("f'hello {name}'", 1, true) and text:find("int(a) + int(b)", 1, true)
        end, "both hunks applied to the buffer")
        H.wait(20000, function()
          return #require("deepseek.diff").pending(buf) == 0
        end, "no pending hunks")
      end
    end,
  },
})

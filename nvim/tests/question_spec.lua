-- Clarifying questions: the planner (scripted by tests/nvim/test_question.py)
-- asks a free-text question; the plugin asks through vim.ui.input and answers
-- with deepseek.answer (DEEPSEEK_QUESTION_VIA=answer), or <Esc> cancels (=escape).
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")
local via = vim.env.DEEPSEEK_QUESTION_VIA

--- Every vim.ui.input call: { prompt, answer (callback) }; answered by the case.
local inputs = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(inputs, { prompt = opts.prompt, answer = on_confirm })
end

local buf

H.run({
  {
    "the server starts for app.py",
    function()
      buf = S.start()
    end,
  },
  {
    "the planner's question arrives as vim.ui.input and the answer is sent back",
    function()
      vim.cmd("DeepSeekPlan make the greeting nicer")
      local input = H.wait(30000, function()
        return inputs[1]
      end, "vim.ui.input with the question")
      H.matches(input.prompt, "Which greeting style%?", "the prompt is the question")
      local pending = H.wait(10000, function()
        local got
        require("deepseek.client").request(require("deepseek.protocol").req.pending_questions, {}, function(_, r)
          got = r
        end)
        vim.wait(2000, function()
          return got ~= nil
        end)
        return got and #got.questions == 1 and got
      end, "the question listed by deepseek/pendingQuestions")
      H.eq(pending.questions[1].question, "Which greeting style?", "the listed question")
      if via == "escape" then
        H.expect_error("cancel")
        input.answer(nil)
        H.wait(30000, function()
          return H.notified("the question 'Which greeting style?': cancelled")
        end, "the plan to stop with the question cancelled")
      else
        local waits = H.wait(10000, function()
          return H.notified("DeepSeek asks you: Which greeting style?")
        end, "vim.notify that the session waits for an answer")
        H.eq(waits.level, vim.log.levels.WARN, "a wait is a warning")
        input.answer("formal")
        H.wait(60000, function()
          return H.notified("plan ready")
        end, "the plan made with the answer")
        H.wait(10000, function()
          return H.notified("DeepSeek has a plan for you to review")
        end, "vim.notify that the plan waits for review")
        H.wait(20000, function()
          return S.find_lens(buf, "Step 1")
        end, "a Step 1 lens on app.py")
      end
      H.eq(#inputs, 1, "asked once")
      H.ok(not H.notified("deepseek-ls asks"), "no showMessage fallback: the plugin declares it answers questions")
    end,
  },
})

-- The whole editing flow against the real deepseek-ls and the fake DeepSeek
-- server (scripted by tests/nvim/test_flow.py): plan -> step lenses -> run
-- the step -> hunks drawn as extmarks -> accept one, reject one -> buffer
-- text -> save -> verified; then :DeepSeekAsk and :DeepSeekWhy.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local diff = require("deepseek.diff")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")

local buf
local received = {} -- method -> count

-- Every distinct statusline text seen during the run.
local status_texts = {}
vim.api.nvim_create_autocmd("User", {
  pattern = "DeepSeekStatus",
  callback = function()
    local text = require("deepseek").status()
    if text ~= "" and not vim.tbl_contains(status_texts, text) then
      table.insert(status_texts, text)
    end
  end,
})

local function pending()
  return diff.pending(buf)
end

local function extmark_count()
  return #vim.api.nvim_buf_get_extmarks(buf, diff.ns, 0, -1, {})
end

H.run({
  {
    "the server starts for app.py",
    function()
      buf = S.start()
      -- Count server-to-client messages that go through our handlers.
      local c = require("deepseek.client").get(buf)
      for _, method in ipairs({ "workspace/codeLens/refresh", "deepseek/hunksChanged", "deepseek/status" }) do
        local original = H.ok(c.handlers[method], "client handler for " .. method)
        c.handlers[method] = function(...)
          received[method] = (received[method] or 0) + 1
          return original(...)
        end
      end
    end,
  },
  {
    ":1,2DeepSeekPlan sends greet as context and shows the step as a code lens on app.py",
    function()
      S.plan(buf, "make greet use an f-string and make add convert its arguments", "1,2")
      H.ok(H.notified("plan ready: 1 step"), "one step planned: " .. vim.inspect(H.messages()))
      H.wait(10000, function()
        return table.concat(S.displayed_lenses(buf), "\n"):find("Step 1", 1, true)
      end, "the step lens drawn in the buffer")
    end,
  },
  {
    ":DeepSeekShowPlan opens the plan document, with the step's lens on it",
    function()
      vim.cmd("DeepSeekShowPlan")
      local doc = H.wait(20000, function()
        for _, b in ipairs(vim.api.nvim_list_bufs()) do
          if vim.api.nvim_buf_get_name(b):find("%.deepseek/plans/.+%.md$") and vim.fn.bufwinid(b) ~= -1 then
            return b
          end
        end
      end, "the plan document in a window")
      H.matches(H.text(doc), "Edit greet and add in app%.py", "the step in the document")
      H.wait(20000, function()
        return S.find_lens(doc, "Step 1")
      end, "the step lens on the plan document")
      vim.api.nvim_set_current_win(vim.fn.bufwinid(doc))
      vim.api.nvim_set_current_buf(buf) -- back to app.py in this window
      H.eq(vim.api.nvim_get_current_buf(), buf, "back on app.py")
    end,
  },
  {
    "the Revise… lens asks for feedback and replaces the plan",
    function()
      local lens = S.find_lens(buf, "Revise")
      H.ok(lens, "a Revise… lens (lenses: " .. vim.inspect(S.lens_titles(buf)) .. ")")
      local asked
      vim.ui.input = function(opts, on_confirm)
        asked = opts.prompt
        on_confirm("keep the names")
      end
      vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
      table.insert(S.choosers, 1, "Revise")
      vim.lsp.codelens.run()
      table.remove(S.choosers, 1)
      H.matches(asked, "how should the plan change", "vim.ui.input prompt")
      H.wait(30000, function()
        return H.notified("plan revised: 1 step")
      end, "the revised plan")
      H.wait(20000, function()
        return S.find_lens(buf, "keeping the names")
      end, "the revised step's lens (lenses: " .. vim.inspect(S.lens_titles(buf)) .. ")")
    end,
  },
  {
    "running the step's lens stages two hunks drawn as extmarks",
    function()
      S.run_step(buf, 2)
      H.wait(5000, function()
        return extmark_count() > 0
      end, "hunk extmarks")
      local marks = vim.api.nvim_buf_get_extmarks(buf, diff.ns, 0, -1, { details = true })
      local virt = {}
      for _, m in ipairs(marks) do
        for _, vl in ipairs(m[4].virt_lines or {}) do
          table.insert(virt, vl[1][1])
        end
      end
      H.ok(vim.tbl_contains(virt, "+     return f'hello {name}'"), "new greet line as virtual text: " .. vim.inspect(virt))
      H.ok(vim.tbl_contains(virt, "+     return int(a) + int(b)"), "new add line as virtual text: " .. vim.inspect(virt))
      H.wait(20000, function()
        return S.find_lens(buf, "Accept")
      end, "Accept/Reject lenses on the hunks (lenses: " .. vim.inspect(S.lens_titles(buf)) .. ")")
      H.wait(10000, function()
        return received["workspace/codeLens/refresh"] and received["deepseek/hunksChanged"]
      end, "workspace/codeLens/refresh and deepseek/hunksChanged from the server (got " .. vim.inspect(received) .. ")")
    end,
  },
  {
    "accept the first hunk and reject the second; the buffer has only the first",
    function()
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal ]h")
      local first = diff.hunk_at(buf, vim.api.nvim_win_get_cursor(0)[1] - 1)
      H.ok(first, "]h lands on a hunk")
      H.matches(first.new_text, "f'hello {name}'", "first hunk is greet's")
      vim.cmd("DeepSeekAccept")
      H.wait(20000, function()
        return H.text(buf):find("f'hello {name}'", 1, true)
      end, "the accepted hunk in the buffer")
      H.wait(20000, function()
        return #pending() == 1
      end, "one hunk left pending")
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal ]h")
      local second = diff.hunk_at(buf, vim.api.nvim_win_get_cursor(0)[1] - 1)
      H.ok(second, "]h lands on the second hunk")
      H.matches(second.new_text, "int%(a%)", "second hunk is add's")
      vim.cmd("DeepSeekReject")
      H.wait(20000, function()
        return #pending() == 0
      end, "no pending hunks")
      H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), {
        "def greet(name):",
        "    return f'hello {name}'",
        "",
        "",
        "def add(a, b):",
        "    return a + b",
      }, "app.py after accept + reject")
      H.ok(vim.bo[buf].modified, "accepting edits the buffer (the user saves)")
    end,
  },
  {
    "saving verifies the step; the plan completes and the statusline goes quiet",
    function()
      H.ok(H.wait(20000, function()
        return H.notified("save app.py to verify the step")
      end, "the server to ask for a save"))
      vim.cmd("write")
      H.wait(30000, function()
        return H.notified("plan complete")
      end, "the plan to complete")
      local status = require("deepseek.status")
      H.wait(10000, function()
        return status.current and status.current.state == "Completed"
      end, "a deepseek/status notification with state Completed (got " .. vim.inspect(status.current) .. ")")
      H.ok(status.current.session_id, "status carries the session id")
      H.eq(require("deepseek").status(), "", "statusline text when done")
      print("statusline texts seen: " .. vim.inspect(status_texts))
      H.ok(vim.tbl_contains(status_texts, "DeepSeek planning"), "the statusline showed the planning progress")
      -- Paused after the plan, the planner's tokens (and cost, or "cost unknown") shown.
      H.ok(vim.tbl_contains(status_texts, "DeepSeek paused · " .. (function()
        for _, t in ipairs(status_texts) do
          local spend = t:match("^DeepSeek paused · (.- tok · .-) · running step$")
          if spend then
            return spend
          end
        end
        return "?"
      end)() .. " · running step"), "and the step running, with the tokens spent so far")
      H.ok(S.find_lens(buf, "Step 1"), "step lens still shown")
      H.wait(10000, function()
        return S.find_lens(buf, "done")
      end, "the step lens to say done (lenses: " .. vim.inspect(S.lens_titles(buf)) .. ")")
    end,
  },
  {
    ":DeepSeekSessions lists the session and resumes the one picked",
    function()
      table.insert(S.choosers, "make greet use an f-string")
      vim.cmd("DeepSeekSessions")
      local call = H.wait(10000, function()
        return vim.tbl_filter(function(c)
          return c.kind == "deepseek_session"
        end, S.selects)[1]
      end, "the session picker")
      H.eq(#call.items, 1, "one session in this workspace")
      H.matches(call.items[1], "Completed", "its state")
      H.wait(20000, function()
        return H.notified("resumed session")
      end, "the resume")
      H.ok(H.notified("(Completed)"), "resume reports the state: " .. vim.inspect(H.messages()))
    end,
  },
  {
    ":DeepSeekCancel with nothing running says so",
    function()
      vim.cmd("DeepSeekCancel")
      H.wait(10000, function()
        return H.notified("nothing to cancel")
      end, "the cancel answer")
    end,
  },
  {
    ":DeepSeekUndo explains, once, that editor edits are undone in the editor",
    function()
      H.expect_error("nothing to undo")
      local done = H.run_until_done("DeepSeekUndo", 10000)
      H.eq(done, { command = "deepseek.undo", ok = false }, "User DeepSeekDone data")
      local n = H.ok(H.notified("nothing to undo"), "the server's reason reaches the user")
      H.eq(n.level, vim.log.levels.ERROR, "as an error")
      local same = vim.tbl_filter(function(m)
        return m:find("nothing to undo", 1, true) ~= nil
      end, H.messages())
      H.eq(#same, 1, "shown once, not once by the server and again by the plugin")
    end,
  },
  {
    ":DeepSeekAsk streams the answer into the stream window",
    function()
      vim.cmd("DeepSeekAsk what does greet return?")
      local stream = vim.fn.bufnr("deepseek://stream")
      H.ok(stream ~= -1, "the stream buffer exists")
      H.wait(30000, function()
        return H.text(stream):find("greet returns a greeting", 1, true)
      end, "the answer in deepseek://stream")
      H.matches(H.text(stream), "## Ask: what does greet return%?", "a heading for the question")
      H.ok(vim.fn.bufwinid(stream) ~= -1, "the stream buffer is shown")
      vim.api.nvim_win_close(vim.fn.bufwinid(stream), true)
    end,
  },
  {
    ":DeepSeekWhy explains the routing decision",
    function()
      vim.cmd("DeepSeekWhy")
      local why = H.wait(20000, function()
        local b = vim.fn.bufnr("deepseek://why")
        return b ~= -1 and H.text(b):find("threshold", 1, true) and b
      end, "the routing explanation buffer")
      local text = H.text(why)
      H.matches(text, "profile: %w+", "profile")
      H.matches(text, "score: [%d%.]+   threshold: [%d%.]+", "score and threshold")
    end,
  },
})

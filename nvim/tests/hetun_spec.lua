-- Hetun mode in Neovim against the real deepseek-ls and the fake DeepSeek server
-- (scripted by tests/nvim/test_hetun.py): :DeepSeekHetun -> research -> the mission
-- document with its lenses -> Approve mission (a code lens, as a user runs it) ->
-- the change lands in the open app.py buffer (workspace/applyEdit), verified after :write ->
-- the research section in the plan document -> :DeepSeekRewind cancelled at each picker, then code
-- to before the prompt (the change out of the buffer), and redo.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local S = dofile(vim.fs.dirname(arg[0]) .. "/session.lua")

local buf, doc

local function mission_buffer()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find("%.deepseek/missions/.+%.md$") and vim.fn.bufwinid(b) ~= -1 then
      return b
    end
  end
end

H.run({
  {
    "the server starts for app.py",
    function()
      buf = S.start()
    end,
  },
  {
    ":DeepSeekHetun researches and opens the mission document with its lenses",
    function()
      vim.cmd("DeepSeekHetun make greet use an f-string")
      H.wait(90000, function()
        return H.notified("mission ready")
      end, "the mission")
      doc = H.wait(20000, mission_buffer, "the mission document in a window")
      local text = H.text(doc)
      H.matches(text, "# Mission v1", "the card's title")
      H.matches(text, "## Estimate", "the estimate")
      H.matches(text, "`app%.py`: step 1: Edit greet and add in app%.py", "what will be done per file")
      vim.api.nvim_set_current_win(vim.fn.bufwinid(doc))
      vim.lsp.codelens.refresh({ bufnr = doc })
      H.wait(20000, function()
        return S.find_lens(doc, "Approve mission") and S.find_lens(doc, "Modify")
      end, "Approve mission / Reject / Modify… lenses")
    end,
  },
  {
    "the Approve mission lens runs the mission straight through",
    function()
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      table.insert(S.choosers, 1, "Approve mission")
      vim.lsp.codelens.run()
      table.remove(S.choosers, 1)
      -- The change arrives as workspace/applyEdit in the open buffer; the disk waits for :write.
      H.wait(90000, function()
        return H.text(buf):find("f'hello {name}'", 1, true)
      end, "the mission's change in the open buffer")
      H.wait(20000, function()
        return H.notified("save app.py to verify the mission")
      end, "verification waits for the save")
      local f = assert(io.open("app.py"))
      local on_disk = f:read("*a")
      f:close()
      assert(not on_disk:find("f'hello {name}'", 1, true), "the mission wrote app.py under the editor")
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("write")
      end)
      H.wait(90000, function()
        return H.notified("deepseek-ls: mission ")
      end, "the mission goes on (verification) once app.py is saved")
      vim.lsp.codelens.refresh({ bufnr = doc })
      H.wait(20000, function()
        return S.find_lens(doc, "Undo mission")
      end, "the Undo mission lens")
    end,
  },
  {
    "the plan document carries the research tree",
    function()
      vim.cmd("DeepSeekShowPlan")
      local plan = H.wait(20000, function()
        for _, b in ipairs(vim.api.nvim_list_bufs()) do
          if vim.api.nvim_buf_get_name(b):find("%.deepseek/plans/.+%.md$") then
            return b
          end
        end
      end, "the plan document")
      H.wait(10000, function()
        return H.text(plan):find("## Research (Hetun)", 1, true)
      end, "the research section")
      H.matches(H.text(plan), "greet concatenates strings", "a finding in the tree")
    end,
  },
  {
    ":DeepSeekRewind cancelled at either picker does nothing",
    function()
      local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      local client, sent = require("deepseek.client"), {}
      local exec = client.exec
      client.exec = function(command, ...)
        table.insert(sent, command)
        return exec(command, ...)
      end
      for _, cancel_at in ipairs({ "deepseek_checkpoint", "deepseek_rewind_what" }) do
        local seen = #S.selects
        table.insert(S.choosers, 1, function(call)
          if call.kind == cancel_at then
            call.answer(nil)
            return true
          end
          if call.kind == "deepseek_checkpoint" then
            call.answer(1)
            return true
          end
        end)
        vim.cmd("DeepSeekRewind")
        H.wait(10000, function()
          return vim.tbl_filter(function(c)
            return c.kind == cancel_at
          end, { unpack(S.selects, seen + 1) })[1]
        end, "the " .. cancel_at .. " picker")
        table.remove(S.choosers, 1)
      end
      client.exec = exec
      -- A picker's answer is handled as it is given (the stub answers at once): a rewind would be sent by now.
      H.eq(sent, { "deepseek.checkpoints", "deepseek.checkpoints" }, "only the prompts listed, no rewind sent")
      H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), before, "the buffer is unchanged")
      H.ok(not H.notified("rewound"), "nothing said rewound: " .. vim.inspect(H.messages()))
    end,
  },
  {
    ":DeepSeekRewind code to before the mission's prompt takes its change out of app.py; redo puts it back",
    function()
      local what_items
      table.insert(S.choosers, 1, function(call)
        if call.kind == "deepseek_checkpoint" then
          for i, text in ipairs(call.items) do
            if text:find("make greet use an f-string", 1, true) then
              call.answer(i)
              return true
            end
          end
        elseif call.kind == "deepseek_rewind_what" then
          what_items = call.items
          call.answer(1) -- code
          return true
        elseif call.kind == "deepseek_approval" and call.prompt:find("Rewind code", 1, true) then
          for i, text in ipairs(call.items) do
            if text == "Rewind" then
              call.answer(i)
              return true
            end
          end
        end
      end)
      vim.cmd("DeepSeekRewind")
      H.wait(30000, function()
        return H.text(buf):find("return 'hello ' + name", 1, true)
      end, "the buffer back to before the prompt (" .. H.text(buf) .. ")")
      table.remove(S.choosers, 1)
      H.eq(what_items[1]:sub(1, 5), "code:", "asked what to restore: " .. vim.inspect(what_items))
      H.wait(10000, function()
        return H.notified("rewound code: app.py")
      end, "the result told: " .. vim.inspect(H.messages()))
      local done = H.run_until_done("DeepSeekRewind redo", 30000, "deepseek.redoRewind")
      H.eq(done.ok, true, "redo ran")
      H.wait(20000, function()
        return H.text(buf):find("return f'hello {name}'", 1, true)
      end, "the change back in the buffer")
    end,
  },
})

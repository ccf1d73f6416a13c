--- Shared steps of the end-to-end specs: a vim.ui.select that picks like a
--- person, starting the real server, and plan -> run the step -> hunks.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")
local diff = require("deepseek.diff")

local S = {}

--- Every vim.ui.select call: { prompt, kind, items (texts), answer (callback) }.
S.selects = {}
--- Answers, tried in order: a plain string picks the first item containing
--- it; a function(call) may answer through call.answer(index) and returns true.
S.choosers = {}

vim.ui.select = function(items, opts, on_choice)
  local texts = {}
  for i, item in ipairs(items) do
    texts[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  local call = { prompt = opts.prompt, kind = opts.kind, items = texts }
  call.answer = function(i)
    on_choice(i and items[i] or nil, i)
  end
  table.insert(S.selects, call)
  for _, chooser in ipairs(S.choosers) do
    if type(chooser) == "function" then
      if chooser(call) then
        return
      end
    else
      for i, text in ipairs(texts) do
        if text:find(chooser, 1, true) then
          call.answer(i)
          return
        end
      end
    end
  end
  error("vim.ui.select stub: nothing to pick among " .. vim.inspect(texts))
end

function S.lens_titles(bufnr)
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command and lens.command.title then
      table.insert(titles, lens.command.title)
    end
  end
  return titles
end

function S.find_lens(bufnr, plain)
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command and lens.command.title:find(plain, 1, true) then
      return lens
    end
  end
end

--- The lens texts Neovim draws in `bufnr` (virtual text of any namespace).
function S.displayed_lenses(bufnr)
  local texts = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, -1, 0, -1, { details = true })) do
    local chunks = m[4].virt_text or {}
    local text = table.concat(vim.tbl_map(function(c)
      return c[1]
    end, chunks))
    if text ~= "" then
      table.insert(texts, text)
    end
  end
  return texts
end

--- setup() with the venv's server, open app.py, wait for initialize.
---@return integer bufnr
function S.start(opts)
  require("deepseek").setup(vim.tbl_extend("force", { cmd = { vim.env.DEEPSEEK_LS_BIN, "serve", "--stdio" } }, opts or {}))
  vim.cmd("edit app.py")
  local buf = vim.api.nvim_get_current_buf()
  H.wait(20000, function()
    local c = vim.lsp.get_clients({ name = "deepseek_ls", bufnr = buf })[1]
    return c and c.initialized
  end, "deepseek_ls to initialize")
  return buf
end

--- :DeepSeekPlan (with an optional range such as "1,2"), then wait for the
--- step's lens on `buf`.
function S.plan(buf, prompt, range)
  vim.cmd((range or "") .. "DeepSeekPlan " .. prompt)
  H.wait(60000, function()
    return H.notified("plan ready")
  end, "the plan")
  return H.wait(20000, function()
    return S.find_lens(buf, "Step 1")
  end, "a Step 1 lens on app.py")
end

--- Run the "Step 1" lens the way a user does (cursor on it, codelens.run,
--- pick the step among the lenses of that line); wait for `n` pending hunks.
function S.run_step(buf, n)
  local lens = S.find_lens(buf, "Step 1")
  vim.api.nvim_win_set_cursor(0, { lens.range.start.line + 1, 0 })
  table.insert(S.choosers, 1, "Step 1")
  vim.lsp.codelens.run()
  table.remove(S.choosers, 1)
  return H.wait(60000, function()
    return #diff.pending(buf) == n and diff.pending(buf)
  end, ("%d pending hunks"):format(n))
end

return S

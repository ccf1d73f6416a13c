-- Plugin behaviour that needs no server: loading, options, rendering,
-- statusline text, help and :checkhealth. Run by tests/nvim/test_plugin.py.
local H = dofile(vim.fs.dirname(arg[0]) .. "/helpers.lua")

vim.cmd("packadd deepseek.nvim")

local function scratch_file(lines)
  local path = vim.fn.tempname() .. ".py"
  vim.fn.writefile(lines, path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

--- A Hunk as deepseek/hunks sends it: `range` covers old_text (context included).
local function hunk(first, old_text, new_text, status, id)
  local n = #vim.split(old_text, "\n", { plain = true }) - 1
  return {
    patch_id = "p1",
    hunk_id = id or ("h" .. first),
    uri = "file:///x.py",
    range = { start = { line = first, character = 0 }, ["end"] = { line = first + n, character = 0 } },
    old_text = old_text,
    new_text = new_text,
    status = status or "pending",
  }
end

local function decorations(buf, ns)
  local hl, virt = {}, {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local d = m[4]
    if d.line_hl_group then
      table.insert(hl, { m[2], d.line_hl_group })
    end
    for _, vl in ipairs(d.virt_lines or {}) do
      table.insert(virt, { m[2], vl[1][1], d.virt_lines_above or false })
    end
  end
  table.sort(hl, function(x, y)
    return x[1] < y[1]
  end)
  return hl, virt
end

H.run({
  {
    "plugin/ loads once and defines every command",
    function()
      H.eq(vim.g.loaded_deepseek, 1, "load guard")
      local cmds = vim.api.nvim_get_commands({})
      for name, _ in pairs(require("deepseek.commands").specs) do
        H.ok(cmds[name], ":" .. name .. " is defined")
      end
      for _, name in ipairs({ "DeepSeekPlan", "DeepSeekAsk", "DeepSeekAccept", "DeepSeekReject", "DeepSeekAcceptAll",
        "DeepSeekRejectAll", "DeepSeekApprove", "DeepSeekDeny", "DeepSeekSessions", "DeepSeekResume",
        "DeepSeekCancel", "DeepSeekUndo", "DeepSeekWhy", "DeepSeekRewind" }) do
        H.ok(cmds[name], ":" .. name .. " (from the issue) is defined")
      end
      H.eq(cmds.DeepSeekPlan.nargs, "+", ":DeepSeekPlan needs a prompt")
      H.ok(cmds.DeepSeekPlan.range ~= nil and cmds.DeepSeekPlan.range ~= "", ":DeepSeekPlan accepts a range")
      -- sourcing plugin/ again must not redefine or fail
      vim.cmd("runtime plugin/deepseek.lua")
    end,
  },
  {
    "setup() rejects bad options with a message naming the option",
    function()
      local config = require("deepseek.config")
      local cases = {
        { { cmd = "deepseek-ls" }, "cmd" },
        { { cmd = {} }, "cmd" },
        { { autostart = "yes" }, "autostart" },
        { { stream = { window = "tab" } }, "stream.window" },
        { { keymaps = { next_hunk = 3 } }, "keymaps.next_hunk" },
        { { codelens = { events = "BufEnter" } }, "codelens.events" },
        { { colour = "red" }, "colour" },
        { { diff = { enable = true } }, "diff.enable" },
      }
      for _, case in ipairs(cases) do
        local ok, err = pcall(require("deepseek").setup, case[1])
        H.ok(not ok, "setup(" .. vim.inspect(case[1]) .. ") fails")
        H.matches(tostring(err), vim.pesc(case[2]), "error for " .. vim.inspect(case[1]))
      end
      -- a failed setup leaves the previous options in force
      H.eq(config.current.cmd, config.defaults.cmd, "options after failed setup")
      local cfg = config.resolve({ cmd = { "/opt/ds", "serve" }, keymaps = { next_hunk = false } })
      H.eq(cfg.cmd, { "/opt/ds", "serve" }, "cmd list replaced, not merged")
      H.eq(cfg.keymaps.next_hunk, false, "keymap disabled")
      H.eq(cfg.keymaps.prev_hunk, "[h", "other keymap keeps its default")
    end,
  },
  {
    "lsp/deepseek_ls.lua is a vim.lsp.Config carrying our handlers",
    function()
      local file = vim.api.nvim_get_runtime_file("lsp/deepseek_ls.lua", false)[1]
      H.ok(file, "lsp/deepseek_ls.lua on runtimepath")
      local conf = dofile(file)
      H.eq(conf.cmd, { "deepseek-ls", "serve", "--stdio" }, "default cmd")
      for _, method in ipairs({ "deepseek/stream", "deepseek/status", "deepseek/hunksChanged",
        "workspace/codeLens/refresh", "window/showMessageRequest" }) do
        H.ok(type(conf.handlers[method]) == "function", "handler for " .. method)
      end
      H.eq(conf.capabilities.workspace.codeLens.refreshSupport, true, "codeLens refresh advertised")
      if vim.fn.has("nvim-0.11") == 1 then
        vim.lsp.config("deepseek_ls", { cmd = { "/opt/deepseek-ls", "serve", "--stdio" } })
        H.eq(vim.lsp.config.deepseek_ls.cmd[1], "/opt/deepseek-ls", "vim.lsp.config merges over lsp/")
        H.ok(vim.lsp.config.deepseek_ls.handlers["deepseek/stream"], "merged config keeps handlers")
      end
    end,
  },
  {
    "pending hunks mark the lines they remove and show new lines virtually; ]h/[h move",
    function()
      local diff = require("deepseek.diff")
      local buf = scratch_file({ "a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6" })
      diff.render(buf, {
        -- context "a = 1", then b replaced by two lines
        hunk(0, "a = 1\nb = 2\n", "a = 1\nb = 20\nb2 = 21\n", "pending", "h1"),
        -- pure insertion after "d = 4" (context d and e)
        hunk(3, "d = 4\ne = 5\n", "d = 4\nd2 = 4.5\ne = 5\n", "pending", "h2"),
        hunk(5, "f = 6\n", "", "rejected", "h3"),
      })
      local hl, virt = decorations(buf, diff.ns)
      H.eq(hl, { { 1, "DeepSeekRemoved" } }, "only b is marked removed (context and rejected hunks are not)")
      H.eq(virt, {
        { 2, "+ b = 20", true },
        { 2, "+ b2 = 21", true },
        { 4, "+ d2 = 4.5", true },
      }, "new lines shown above the line that follows the change")
      H.eq(diff.hunk_at(buf, 0).hunk_id, "h1", "cursor on h1's context line")
      H.eq(diff.hunk_at(buf, 4).hunk_id, "h2", "cursor in h2")
      H.eq(diff.hunk_at(buf, 5), nil, "no pending hunk on line 6 (h3 is rejected)")
      vim.api.nvim_win_set_cursor(0, { 1, 0 })
      vim.cmd("normal ]h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 1, "]h needs the client attached (no mapping yet)")
      require("deepseek").on_attach({ id = 0 }, buf)
      diff.render(buf, diff.hunks[buf]) -- on_attach re-fetches; draw our hunks again
      vim.cmd("normal ]h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 2, "]h to h1's changed line")
      vim.cmd("normal ]h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 5, "]h to h2's insertion point")
      vim.cmd("normal [h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 2, "[h back")
      vim.cmd("normal [h")
      H.eq(vim.api.nvim_win_get_cursor(0)[1], 2, "[h stays at the first hunk")
      H.ok(H.notified("no previous hunk"), "and says so")
      H.expect_error("fetching hunks") -- no server in this spec
    end,
  },
  {
    "a stale hunk is drawn where the user's edits moved it, not where it was staged",
    function()
      local diff = require("deepseek.diff")
      local buf = scratch_file({ "a = 1", "b = 2", "c = 3" })
      diff.render(buf, { hunk(1, "b = 2\n", "b = 20\n", "pending", "hs") })
      vim.api.nvim_buf_set_lines(buf, 0, 0, false, { "# one", "# two" }) -- hunk now at line 3
      vim.api.nvim_buf_set_text(buf, 3, 5, 3, 5, { "  # edited" }) -- and its old text is gone
      local stale = hunk(1, "b = 2\n", "b = 20\n", "pending", "hs")
      stale.range["end"] = stale.range.start -- as the server sends a hunk it cannot find
      stale.stale = true
      diff.render(buf, { stale })
      H.eq(diff.pending(buf)[1].range.start.line, 3, "moved with the text")
      H.eq(diff.hunk_at(buf, 3).hunk_id, "hs", "found under the cursor on its line")
      local hl = decorations(buf, diff.ns)
      H.eq(hl, { { 3, "DeepSeekRemoved" } }, "drawn on the edited line")
    end,
  },
  {
    "an accepted hunk highlights its added lines and shows removed ones above, until written",
    function()
      local diff = require("deepseek.diff")
      local buf = scratch_file({ "a = 1", "b = 20", "b2 = 21", "c = 3" })
      diff.show_accepted(buf, hunk(0, "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nb2 = 21\nc = 3\n", "accepted"))
      local hl, virt = decorations(buf, diff.ns_accepted)
      H.eq(hl, { { 1, "DeepSeekAdded" }, { 2, "DeepSeekAdded" } }, "added lines highlighted")
      H.eq(virt, { { 1, "- b = 2", true } }, "removed line shown above the added ones")
      diff.clear_accepted(buf)
      H.eq(#vim.api.nvim_buf_get_extmarks(buf, diff.ns_accepted, 0, -1, {}), 0, "cleared")
      diff.render(buf, {})
      H.eq(#vim.api.nvim_buf_get_extmarks(buf, diff.ns, 0, -1, {}), 0, "no pending hunks, nothing drawn")
    end,
  },
  {
    "status() describes state, max-think and progress for the statusline",
    function()
      local deepseek = require("deepseek")
      local status = require("deepseek.status")
      local fired = 0
      vim.api.nvim_create_autocmd("User", { pattern = "DeepSeekStatus", callback = function() fired = fired + 1 end })
      status.reset()
      H.eq(deepseek.status(), "", "idle is empty")
      status.update({ session_id = "s", state = "Planning", max_think_active = true })
      H.eq(deepseek.status(), "DeepSeek Planning · max-think", "planning with max-think")
      status.on_progress("t1", { kind = "begin", title = "Indexing", percentage = 40 })
      H.eq(deepseek.status(), "DeepSeek Planning · max-think · Indexing 40%%", "with progress")
      status.on_progress("t1", { kind = "end" })
      status.on_progress("t2", { kind = "begin", title = "DeepSeek: verifying" })
      H.eq(deepseek.status(), "DeepSeek Planning · max-think · verifying", "no doubled prefix")
      status.on_progress("t2", { kind = "end" })
      status.update({ session_id = "s", state = "AwaitingUserInput", state_label = "waiting for your answer", busy = true })
      H.eq(deepseek.status(), "DeepSeek waiting for your answer", "the server's label")
      status.update({ session_id = "s", state = "Completed", max_think_active = false })
      H.eq(deepseek.status(), "", "completed is quiet")
      H.ok(fired >= 4, "User DeepSeekStatus fired on each change")
    end,
  },
  {
    "a routing explanation lists score, threshold and each signal",
    function()
      local lines = require("deepseek.commands").explanation_lines({
        text = "max-think: prompt is long", score = 0.9, threshold = 0.6, profile = "max_think",
        model = "deepseek-reasoner", contributions = { prompt_complexity = 0.5, failure_streak = 0.4 },
        reason_codes = { "LONG_PROMPT" },
      })
      local text = table.concat(lines, "\n")
      H.matches(text, "max%-think: prompt is long", "text")
      H.matches(text, "score: 0.9   threshold: 0.6", "score line")
      H.matches(text, "failure_streak%s+0.4", "contribution")
      H.matches(text, "reasons: LONG_PROMPT", "reason codes")
    end,
  },
  {
    "streamed text joins chunks across lines, in a split when configured; reasoning is opt-in",
    function()
      require("deepseek").setup({ stream = { window = "split" }, autostart = false })
      local ui = require("deepseek.ui")
      ui.begin_stream("Ask: q")
      ui.on_stream({ session_id = "s", channel = "content", text = "hello\nwor" })
      ui.on_stream({ session_id = "s", channel = "reasoning", text = "(thinking)" })
      ui.on_stream({ session_id = "s", channel = "content", text = "ld" })
      local buf = vim.fn.bufnr("deepseek://stream")
      H.eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { "## Ask: q", "", "hello", "world" }, "stream buffer")
      local win = vim.fn.bufwinid(buf)
      H.ok(win ~= -1, "shown")
      H.eq(vim.api.nvim_win_get_config(win).relative, "", "in a split, not a float")
      H.ok(ui.streamed, "marked as streamed")
      vim.api.nvim_win_close(win, true)
      require("deepseek").setup({ autostart = false })
    end,
  },
  {
    ":help deepseek opens the plugin's help",
    function()
      local doc = vim.api.nvim_get_runtime_file("doc/deepseek.txt", false)[1]
      H.ok(doc, "doc/deepseek.txt on runtimepath")
      vim.cmd("helptags " .. vim.fn.fnameescape(vim.fs.dirname(doc)))
      for _, tag in ipairs({ "deepseek", "deepseek-options", "deepseek-commands", ":DeepSeekPlan", ":DeepSeekWhy", ":DeepSeekShowPlan",
        "deepseek-statusline", "deepseek-health", "deepseek-autocmds" }) do
        vim.cmd("help " .. tag)
        H.eq(vim.bo.buftype, "help", ":help " .. tag)
        H.matches(vim.api.nvim_buf_get_name(0), "deepseek%.txt$", ":help " .. tag .. " opens our doc")
        vim.cmd("helpclose")
      end
    end,
  },
  {
    ":checkhealth deepseek reports version, key presence and no errors",
    function()
      require("deepseek").setup({ cmd = { vim.env.DEEPSEEK_LS_BIN, "serve", "--stdio" }, autostart = false })
      vim.cmd("checkhealth deepseek")
      local text = H.text(0)
      H.matches(text, "deepseek%.nvim", "section title")
      H.matches(text, "Neovim %d+%.%d+", "Neovim version")
      H.matches(text, "server version: deepseek%-ls %d", "server version")
      H.matches(text, "DEEPSEEK_API_KEY is set", "key presence")
      H.ok(not text:find(vim.env.DEEPSEEK_API_KEY, 1, true), "the key's value is never shown")
      H.ok(not text:find("ERROR"), "no ERROR in :checkhealth deepseek:\n" .. text)
      vim.cmd("bwipeout!")
    end,
  },
  {
    ":checkhealth deepseek checks the variable the server's config names for the key",
    function()
      -- The user's config (a workspace's may not change the key variable until it is trusted).
      local dir = vim.env.XDG_CONFIG_HOME .. "/deepseek-ls"
      vim.fn.mkdir(dir, "p")
      vim.fn.writefile({ "[llm]", 'api_key_env = "MY_DS_KEY"' }, dir .. "/config.toml")
      vim.env.MY_DS_KEY = "sk-from-my-var"
      vim.cmd("checkhealth deepseek")
      local text = H.text(0)
      vim.cmd("bwipeout!")
      vim.fn.delete(dir .. "/config.toml")
      H.matches(text, "MY_DS_KEY is set", "the configured variable")
      H.ok(not text:find("sk-from-my-var", 1, true), "its value is never shown")
    end,
  },
  {
    "Ask / Plan send the file's diagnostics: other tools' only, most severe first, bounded",
    function()
      local buf = scratch_file({ "import os", "x = 'é' - 1", "y = 2" })
      local ns = vim.api.nvim_create_namespace("diag-context-spec")
      local items = {
        { lnum = 1, col = 8, end_lnum = 1, end_col = 11, severity = vim.diagnostic.severity.ERROR,
          message = "Operator \"-\" not supported", source = "Pyright", code = "reportOperatorIssue" },
        { lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = "pending", source = "deepseek" },
        { lnum = 2, col = 0, severity = vim.diagnostic.severity.WARNING, message = string.rep("w", 900), source = "ruff" },
      }
      for i = 1, 30 do
        table.insert(items, { lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = "hint " .. i })
      end
      vim.diagnostic.set(ns, buf, items)
      local client = require("deepseek.client")
      local sent = client.diagnostics(buf)
      H.eq(#sent, client.MAX_DIAGNOSTICS, "bounded in count")
      H.eq(sent[1].message, 'Operator "-" not supported', "the error first")
      H.eq(sent[1].severity, 1, "LSP severity")
      H.eq(sent[1].code, "reportOperatorIssue", "its code")
      -- 'é' is 2 bytes, 1 UTF-16 unit: byte column 8 is character 7
      H.eq(sent[1].range, { start = { line = 1, character = 7 }, ["end"] = { line = 1, character = 10 } }, "range in UTF-16")
      H.eq(sent[2].source, "ruff", "then the warning")
      H.eq(vim.fn.strchars(sent[2].message), client.MAX_MESSAGE, "a long message is cut")
      for _, d in ipairs(sent) do
        H.ok(d.source ~= "deepseek", "our own pending-hunk diagnostic is not sent back")
      end
      vim.diagnostic.reset(ns, buf)
      H.eq(client.diagnostics(buf), {}, "none: an empty list")
      vim.cmd("bwipeout!")
    end,
  },
  {
    ":checkhealth deepseek reports a missing server as an error",
    function()
      require("deepseek").setup({ cmd = { "/nonexistent/deepseek-ls", "serve" }, autostart = false })
      vim.cmd("checkhealth deepseek")
      H.matches(H.text(0), "server command not found: /nonexistent/deepseek%-ls", "missing server")
      vim.cmd("bwipeout!")
    end,
  },
})

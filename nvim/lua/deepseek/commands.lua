--- The :DeepSeek* user commands: a table of specs, registered by
--- plugin/deepseek.lua. Each one turns into one deepseek-ls request.
local client = require("deepseek.client")
local protocol = require("deepseek.protocol")
local ui = require("deepseek.ui")

local M = {}

local cmd = protocol.cmd

local refresh_lenses = client.refresh_lenses

local function refresh_buffer(bufnr)
  refresh_lenses()
  require("deepseek.diff").refresh(bufnr)
end

--- Run `command`; on success call `on_result(result)`, on error tell the user.
--- Either way (a cancelled command too) `User DeepSeekDone` fires afterwards with
--- data { command, ok }.
local function run(what, command, args, on_result, bufnr)
  client.exec(command, args, function(err, result)
    if client.cancelled(err) then
      ui.notify(what .. " cancelled")
    elseif err then
      ui.error(what, err)
    elseif on_result then
      on_result(result ~= vim.NIL and result or nil)
    end
    vim.api.nvim_exec_autocmds("User", {
      pattern = "DeepSeekDone",
      modeline = false,
      data = { command = command, ok = err == nil },
    })
  end, bufnr)
end

--- `{prompt, uri, range?, diagnostics?}` from a command invocation (a range sends the selection;
--- the file's diagnostics go along, bounded: client.diagnostics).
local function prompt_args(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local args = { prompt = opts.args }
  if vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    args.uri = vim.uri_from_bufnr(bufnr)
    if opts.range and opts.range > 0 then
      args.range = client.line_range(bufnr, opts.line1, opts.line2)
    end
    local diagnostics = client.diagnostics(bufnr)
    if #diagnostics > 0 then
      args.diagnostics = diagnostics
    end
  end
  return args, bufnr
end

local function current_session()
  local st = require("deepseek.status").current
  return st and st.session_id ~= vim.NIL and st.session_id or nil
end

function M.plan(opts)
  local args, bufnr = prompt_args(opts)
  ui.notify("planning…")
  run("plan", cmd.plan, args, function(result)
    local plan = result and result.plan or {}
    local steps = plan.steps or {}
    ui.notify(("plan ready: %d step%s — run a step from its code lens"):format(#steps, #steps == 1 and "" or "s"))
    refresh_lenses()
  end, bufnr)
end

--- :DeepSeekHetun {prompt}: Hetun mode. The server researches with many fast sub-queries and
--- answers with a mission card; its document opens with Approve mission / Reject / Modify… lenses.
function M.hetun(opts)
  local args, bufnr = prompt_args(opts)
  args.mode = "hetun"
  ui.notify("hetun: researching…")
  run("hetun", cmd.plan, args, function(result)
    local fname = result and result.mission_uri and vim.uri_to_fname(result.mission_uri)
    if fname and vim.fn.bufwinid(vim.fn.bufnr(fname)) == -1 then
      vim.cmd("split " .. vim.fn.fnameescape(fname))
    end
    ui.notify("mission ready: Approve mission, Reject or Modify… from the mission document's lenses")
    refresh_lenses()
  end, bufnr)
end

function M.ask(opts)
  local args, bufnr = prompt_args(opts)
  ui.begin_stream("Ask: " .. opts.args)
  run("ask", cmd.ask, args, function(result)
    if result and not ui.streamed and result.content then
      ui.append("stream", result.content)
      ui.show(ui.scratch("stream"), "DeepSeek stream")
    end
  end, bufnr)
end

--- `:DeepSeekReview [--staged | --base REF] [path...]`: review a change (read-only); the findings
--- arrive as diagnostics (source "deepseek-review"); `vim.lsp.buf.code_action()` on one offers
--- "Apply fix" (a pending hunk: :DeepSeekAccept / :DeepSeekReject) and "Dismiss".
function M.review(opts)
  local args, paths = {}, {}
  local words = opts.fargs or {}
  local i = 1
  while i <= #words do
    local w = words[i]
    if w == "--staged" then
      args.staged = true
    elseif w == "--base" then
      i = i + 1
      args.base = words[i]
      if not args.base then
        ui.error("review", "--base needs a branch, tag or commit")
        return
      end
    else
      table.insert(paths, w)
    end
    i = i + 1
  end
  if #paths > 0 then
    args.paths = paths
  end
  ui.notify("reviewing…")
  run("review", cmd.review, args, function(result)
    local findings = result and result.findings or {}
    if #findings > 0 then
      vim.diagnostic.setqflist({ open = false, title = "DeepSeek review" })
    end
  end)
end

--- The custom commands' names from the server (deepseek.listCommands), for completion: asked
--- synchronously (completion cannot wait on a callback), bounded to 2 s; {} when it cannot answer.
function M.custom_command_names()
  local reply = client.exec_sync(cmd.list_commands, {}, 2000, vim.api.nvim_get_current_buf())
  local names = {}
  for _, command in ipairs(reply and reply.result and reply.result.commands or {}) do
    table.insert(names, command.name)
  end
  return names
end

--- `:DeepSeekCommand name [arguments]`: run a custom command (.deepseek/commands/, .claude/commands/,
--- the user config's commands/: docs/extensions.md); a range adds the selection. Alone: pick one.
function M.custom_command(opts)
  local name = opts.fargs[1]
  if not name then
    run("commands", cmd.list_commands, {}, function(result)
      local commands = result and result.commands or {}
      if #commands == 0 then
        ui.notify("no custom commands here" .. (result and result.notice and (" (" .. result.notice .. ")") or ""))
        return
      end
      vim.ui.select(commands, {
        prompt = "DeepSeek: run which custom command?",
        format_item = function(c)
          return ("/%s %s  %s"):format(c.name, c.argument_hint, c.description)
        end,
      }, function(choice)
        if choice then
          vim.api.nvim_feedkeys(":DeepSeekCommand " .. choice.name .. " ", "n", false)
        end
      end)
    end)
    return
  end
  local args, bufnr = prompt_args(opts)
  args.prompt = nil
  args.name = name
  args.arguments = vim.trim(opts.args:sub(#name + 1))
  ui.begin_stream("/" .. name .. " " .. args.arguments)
  run("command", cmd.run_command, args, function(result)
    for _, note in ipairs(result and result.notes or {}) do
      ui.notify(note)
    end
    local answer = result and result.answer
    if answer and answer ~= vim.NIL and not ui.streamed and answer.content then
      ui.append("stream", answer.content)
      ui.show(ui.scratch("stream"), "DeepSeek stream")
    end
    if result and result.state then
      ui.notify(("/%s: %s"):format(name, result.state))
    end
    refresh_lenses()
  end, bufnr)
end

--- `:[range]DeepSeekEdit [instruction]`: run the instruction on the selected lines (without a
--- range: the cursor's line) of this file, as VS Code's "Edit Selection with DeepSeek…"; no
--- instruction: asked with vim.ui.input. The server (deepseek.edit) plans, asks before running the
--- plan, and ends in pending hunks (:DeepSeekAccept / :DeepSeekReject); it says when nothing ran.
function M.edit(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    ui.notify("edit: open a file of the workspace first", vim.log.levels.WARN)
    return
  end
  local first, last = opts.line1, opts.line2
  if not (opts.range and opts.range > 0) then
    first = vim.api.nvim_win_get_cursor(0)[1]
    last = first
  end
  local function send(instruction)
    instruction = vim.trim(instruction or "")
    if instruction == "" then
      return -- dismissed or empty: nothing asked of the server
    end
    local args = { uri = vim.uri_from_bufnr(bufnr), range = client.line_range(bufnr, first, last), instruction = instruction }
    ui.notify("planning the edit…")
    run("edit", cmd.edit, args, function(result)
      if result and result.ran then
        refresh_buffer(bufnr)
        ui.notify("the change is ready: :DeepSeekAccept or :DeepSeekReject on its hunks")
      end
    end, bufnr)
  end
  if vim.trim(opts.args or "") ~= "" then
    send(opts.args)
  else
    vim.ui.input({ prompt = "DeepSeek: what should change in the selection? " }, send)
  end
end

--- Fetch fresh hunks, then act on the pending one under the cursor.
local function with_hunk_at_cursor(what, act)
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local diff = require("deepseek.diff")
  diff.refresh(bufnr, function(hunks)
    if not hunks then
      return
    end
    local hunk = diff.hunk_at(bufnr, line)
    if not hunk then
      ui.notify(("no pending hunk under the cursor to %s (]h jumps to the next one)"):format(what), vim.log.levels.WARN)
      return
    end
    act(hunk, bufnr)
  end)
end

function M.accept()
  with_hunk_at_cursor("accept", function(hunk, bufnr)
    run("accept hunk", cmd.accept_hunk, { patch_id = hunk.patch_id, hunk_id = hunk.hunk_id }, function(result)
      if result and result.applied == false then
        if not ui.already_shown(result.message) then
          ui.notify("hunk not applied: " .. (result.message or "the buffer changed"), vim.log.levels.WARN)
        end
      else
        require("deepseek.diff").show_accepted(bufnr, hunk)
      end
      refresh_buffer(bufnr)
    end, bufnr)
  end)
end

function M.reject()
  with_hunk_at_cursor("reject", function(hunk, bufnr)
    run("reject hunk", cmd.reject_hunk, { patch_id = hunk.patch_id, hunk_id = hunk.hunk_id }, function()
      refresh_buffer(bufnr)
    end, bufnr)
  end)
end

local function all(what, command, key)
  return function(opts)
    local bufnr = vim.api.nvim_get_current_buf()
    local args = opts.args ~= "" and { patch_id = opts.args } or {}
    run(what, command, args, function(result)
      local ids = result and result[key] or {}
      ui.notify(("%s %d hunk%s"):format(key, #ids, #ids == 1 and "" or "s"))
      refresh_buffer(bufnr)
    end, bufnr)
  end
end

M.accept_all = all("accept all", cmd.accept_all, "applied")
M.reject_all = all("reject all", cmd.reject_all, "rejected")

--- Pick one pending approval (asking only when there are several).
local function with_approval(what, act)
  client.request(protocol.req.pending_approvals, {}, function(err, result)
    if err then
      ui.error(what, err)
      return
    end
    local approvals = result and result.approvals or {}
    if #approvals == 0 then
      ui.notify("nothing is waiting for approval")
    elseif #approvals == 1 then
      act(approvals[1])
    else
      vim.ui.select(approvals, {
        prompt = ("DeepSeek: %s which request?"):format(what),
        kind = "deepseek_approval",
        format_item = function(a)
          return a.detail and a.detail ~= "" and (a.title .. " — " .. a.detail) or a.title
        end,
      }, function(choice)
        if choice then
          act(choice)
        end
      end)
    end
  end)
end

function M.approve(opts)
  with_approval("approve", function(approval)
    run("approve", cmd.approve, { request_id = approval.request_id, always = opts.bang or nil }, function()
      ui.notify("approved: " .. approval.title)
    end)
  end)
end

function M.deny()
  with_approval("deny", function(approval)
    run("deny", cmd.deny, { request_id = approval.request_id }, function()
      ui.notify("denied: " .. approval.title)
    end)
  end)
end

local function resume(session_id)
  run("resume", cmd.resume, { session_id = session_id }, function(result)
    ui.notify(("resumed session %s (%s)"):format(session_id, result and result.state or "?"))
    refresh_lenses()
  end)
end

function M.sessions()
  run("sessions", cmd.sessions, {}, function(result)
    local sessions = result and result.sessions or {}
    if #sessions == 0 then
      ui.notify("no sessions in this workspace yet")
      return
    end
    vim.ui.select(sessions, {
      prompt = "DeepSeek: resume which session?",
      kind = "deepseek_session",
      format_item = function(s)
        return ("%s  %-14s %s"):format(s.created or "", s.state or "", s.prompt or "")
      end,
    }, function(choice)
      if choice then
        resume(choice.session_id)
      end
    end)
  end)
end

function M.resume(opts)
  if opts.args ~= "" then
    resume(opts.args)
  else
    M.sessions()
  end
end

--- Without an argument: whatever runs (an ask or a plan may not have told us
--- its session yet); `:DeepSeekCancel <session_id>` stops that session only.
--- The cancelled command ends too ("plan cancelled", `DeepSeekDone` with ok=false:
--- deepseek.client turns the RequestCancelled answer Neovim drops into its end).
function M.cancel(opts)
  local args = opts and opts.args ~= "" and { session_id = opts.args } or {}
  run("cancel", cmd.cancel, args, function(result)
    ui.notify(result and result.cancelled and "cancelled" or "nothing to cancel")
  end)
end

--- `:DeepSeekCompact [focus]`: summarize the older turns of the active session's conversation before its
--- next model call, keeping what `focus` names; says whether it will, and how full the context is.
function M.compact(opts)
  local focus = opts and opts.args or ""
  run("compact", cmd.compact, { focus = focus }, function(result)
    local meter = result and type(result.context) == "table" and result.context.text or nil
    ui.notify((result and result.message or "compact") .. (meter and (" (" .. meter .. ")") or ""))
  end)
end

function M.undo()
  run("undo", cmd.undo, {}, function(result)
    local restored = result and result.restored or {}
    local msg = ("undo restored %d file%s"):format(#restored, #restored == 1 and "" or "s")
    if result and result.merged and #result.merged > 0 then
      msg = msg .. "; your edits since were kept in " .. table.concat(result.merged, ", ")
    end
    if result and result.unsaved and #result.unsaved > 0 then
      msg = msg .. "; unsaved in the buffers: " .. table.concat(result.unsaved, ", ") .. " (:w to write)"
    end
    ui.notify(msg)
    vim.cmd("checktime")
    refresh_lenses()
  end)
end

local REWIND_WHAT = {
  { what = "code", text = "code: the files as they were before it" },
  { what = "conversation", text = "conversation: drop it and what followed" },
  { what = "both", text = "both" },
}

--- `:DeepSeekRewind [code|conversation|both]`: pick a prompt, then (without an argument) what to
--- restore, and go back to before it (the server shows what it takes back and asks); cancelling a
--- picker does nothing. `:DeepSeekRewind redo` undoes the latest rewind.
function M.rewind(opts)
  local given = opts and opts.args ~= "" and opts.args or nil
  local what = given or "both"
  if what == "redo" then
    run("redo rewind", cmd.redo_rewind, {}, function(result)
      local files = result and result.files or {}
      ui.notify("rewind redone: " .. (#files > 0 and table.concat(files, ", ") or "no file changed"))
      vim.cmd("checktime")
      refresh_lenses()
    end)
    return
  end
  run("checkpoints", cmd.checkpoints, {}, function(result)
    local listed = {}
    for _, c in ipairs(result and result.checkpoints or {}) do
      if c.rewound == vim.NIL or c.rewound == nil then
        table.insert(listed, 1, c) -- newest first
      end
    end
    if #listed == 0 then
      ui.notify("no prompt to rewind to in this workspace")
      return
    end
    vim.ui.select(listed, {
      prompt = given and ("DeepSeek: rewind %s to before which prompt?"):format(given)
        or "DeepSeek: rewind to before which prompt?",
      kind = "deepseek_checkpoint",
      format_item = function(c)
        local files = c.files and #c.files > 0 and ("  [" .. table.concat(c.files, ", ") .. "]") or ""
        return ("%s  %s%s"):format(c.created_at or "", c.prompt or "", files)
      end,
    }, function(choice)
      if not choice then
        return
      end
      local function rewind_to(chosen)
        run("rewind", cmd.rewind, { session_id = choice.session_id, what = chosen }, function(done)
          if not (done and done.rewound) then
            ui.notify("not rewound: nothing was changed")
            return
          end
          local files = done.files or {}
          ui.notify(("rewound %s: %s (:DeepSeekRewind redo puts it back)"):format(
            chosen, #files > 0 and table.concat(files, ", ") or "no file changed"))
          vim.cmd("checktime")
          refresh_lenses()
        end)
      end
      if given then
        return rewind_to(what)
      end
      vim.ui.select(REWIND_WHAT, {
        prompt = "DeepSeek: restore what?",
        kind = "deepseek_rewind_what",
        format_item = function(item)
          return item.text
        end,
      }, function(picked)
        if picked then
          rewind_to(picked.what)
        end
      end)
    end)
  end)
end

--- Lines explaining a RoutingExplanation (docs/protocol.md).
---@param r table
---@return string[]
function M.explanation_lines(r)
  local lines = vim.split(r.text or "", "\n", { plain = true })
  table.insert(lines, "")
  table.insert(lines, ("profile: %s   model: %s"):format(tostring(r.profile), tostring(r.model)))
  if r.score ~= nil then
    table.insert(lines, ("score: %s   threshold: %s"):format(tostring(r.score), tostring(r.threshold)))
  end
  local contributions = r.contributions
  if type(contributions) == "table" and next(contributions) then
    table.insert(lines, "contributions:")
    local names = vim.tbl_keys(contributions)
    table.sort(names)
    for _, name in ipairs(names) do
      table.insert(lines, ("  %-24s %s"):format(name, tostring(contributions[name])))
    end
  end
  if type(r.reason_codes) == "table" and #r.reason_codes > 0 then
    table.insert(lines, "reasons: " .. table.concat(r.reason_codes, ", "))
  end
  -- What the session (and this decision's step) cost so far: tokens by kind, money.
  local cost = type(r.cost) == "table" and r.cost or {}
  if type(cost.session) == "table" and (cost.session.calls or 0) > 0 then
    table.insert(lines, "")
    table.insert(lines, ("cost (session, %d calls): %s"):format(cost.session.calls, cost.session.text))
  end
  if type(cost.step) == "table" and (cost.step.calls or 0) > 0 then
    table.insert(lines, ("cost (this step, %d calls): %s"):format(cost.step.calls, cost.step.text))
  end
  return lines
end

function M.why(opts)
  local args = { session_id = opts.args ~= "" and opts.args or current_session() }
  run("routing explanation", cmd.explain_routing, args, function(result)
    if not result then
      ui.notify("no routing decision to explain yet")
      return
    end
    ui.show_text("why", M.explanation_lines(result))
  end)
end

--- Lines describing the MCP servers (the result of deepseek.mcpStatus, docs/protocol.md).
---@param status table
---@return string[]
function M.mcp_lines(status)
  local lines = {}
  local servers = status and status.servers or {}
  if #servers == 0 then
    return { "no MCP servers configured ([mcp.servers.NAME] in the config, or .mcp.json)" }
  end
  for _, s in ipairs(servers) do
    local state = s.hint ~= vim.NIL and s.hint or s.state
    table.insert(lines, ("%s  (%s, from %s)  %s"):format(s.name, s.type, s.source, tostring(state)))
    if s.error and s.error ~= vim.NIL then
      table.insert(lines, "    error: " .. tostring(s.error))
    end
    for _, t in ipairs(s.offered or {}) do
      table.insert(lines, ("    %s  [%s]"):format(t.name, t.read_only and "read-only" or "needs approval"))
    end
  end
  if status.pending and #status.pending > 0 then
    table.insert(lines, "")
    table.insert(lines, "not approved (they start programs): :DeepSeekMcp approve")
  end
  return lines
end

--- :DeepSeekMcp — the MCP servers and their tools; `:DeepSeekMcp approve` approves the
--- repository's servers (the server asks with what each would run).
function M.mcp(opts)
  if opts.args == "approve" then
    run("approve MCP servers", cmd.mcp_approve, {}, function(result)
      ui.notify(result and result.message or "done")
    end)
    return
  end
  run("MCP servers", cmd.mcp_status, { start = true }, function(result)
    ui.show_text("mcp", M.mcp_lines(result or {}))
  end)
end

--- Lines describing workspace trust (the result of deepseek.trustStatus, docs/protocol.md).
---@param status table
---@return string[]
function M.trust_lines(status)
  local lines = {}
  if status.trusted then
    table.insert(lines, ("trusted: %s"):format(status.workspace))
  else
    local why = status.state == "changed" and "its config changed since you trusted it" or "not trusted"
    table.insert(lines, ("%s: %s"):format(status.workspace, why))
  end
  local files = status.ignored_workspace_config or {}
  local editor = status.ignored_editor_settings or {}
  if #files > 0 then
    table.insert(lines, "ignored in .deepseek/config.toml: " .. table.concat(files, ", "))
  end
  if #editor > 0 then
    table.insert(lines, "ignored editor settings: " .. table.concat(editor, ", "))
  end
  if not status.trusted then
    table.insert(lines, "settings that loosen policy and yolo mode wait for :DeepSeekTrust")
  end
  return lines
end

--- :DeepSeekTrust / :DeepSeekUntrust — trust (or stop trusting) this workspace: its
--- .deepseek/config.toml and the editor's settings then apply in full, and yolo may run.
function M.trust()
  run("trust the workspace", cmd.trust_workspace, {}, function(result)
    ui.notify(("trusted %s; its settings apply in full"):format(result and result.workspace or "the workspace"))
  end)
end

function M.untrust()
  run("stop trusting the workspace", cmd.untrust_workspace, {}, function(result)
    local was = result and result.was_trusted
    ui.notify(("%s %s"):format(result and result.workspace or "the workspace",
      was and "is no longer trusted" or "was not trusted"))
  end)
end

--- :DeepSeekTeammate [on|off] — teammate mode: a plan's independent steps run at once,
--- each in its own git worktree (docs/agent.md#teammate-mode). No argument: flip.
function M.teammate(opts)
  local args = {}
  if opts and opts.args == "on" then
    args.enabled = true
  elseif opts and opts.args == "off" then
    args.enabled = false
  elseif opts and opts.args ~= nil and opts.args ~= "" then
    ui.notify("usage: :DeepSeekTeammate [on|off]", vim.log.levels.WARN)
    return
  end
  run("teammate mode", cmd.toggle_teammate_mode, args, function(result)
    ui.notify(("teammate mode %s"):format(result and result.teammate_mode and "on" or "off"))
  end)
end

--- :DeepSeekTrust status — what is held back while the workspace is not trusted.
function M.trust_command(opts)
  if opts.args == "status" then
    run("trust status", cmd.trust_status, {}, function(result)
      ui.show_text("trust", M.trust_lines(result or {}))
    end)
    return
  end
  M.trust()
end

function M.show_plan(opts)
  local session_id = opts.args ~= "" and opts.args or current_session()
  if not session_id then
    ui.notify("no session yet: run :DeepSeekPlan first", vim.log.levels.WARN)
    return
  end
  run("show plan", cmd.show_plan, { session_id = session_id }, function(result)
    -- The server also asks to show it (window/showDocument); open it if that did not.
    local fname = result and result.uri and vim.uri_to_fname(result.uri)
    if fname and vim.fn.bufwinid(vim.fn.bufnr(fname)) == -1 then
      vim.cmd("split " .. vim.fn.fnameescape(fname))
    end
  end)
end

--- name -> { fn, opts } for nvim_create_user_command.
M.specs = {
  DeepSeekPlan = { M.plan, { nargs = "+", range = true, desc = "DeepSeek: plan a change (a range adds the selection)" } },
  DeepSeekHetun = { M.hetun, { nargs = "+", range = true, desc = "DeepSeek: Hetun mode — research, then one mission to approve" } },
  DeepSeekAsk = { M.ask, { nargs = "+", range = true, desc = "DeepSeek: ask a question (a range adds the selection)" } },
  DeepSeekEdit = { M.edit, { nargs = "*", range = true, desc = "DeepSeek: change the selected lines as told [instruction]" } },
  DeepSeekReview = { M.review, { nargs = "*", complete = function()
    return { "--staged", "--base" }
  end, desc = "DeepSeek: review a change (read-only) [--staged | --base REF] [path...]" } },
  DeepSeekCommand = { M.custom_command, { nargs = "*", range = true, complete = function(lead, line)
    if line:match("^%S+%s+%S+%s") then
      return {} -- the command's own arguments
    end
    return vim.tbl_filter(function(n)
      return vim.startswith(n, lead)
    end, M.custom_command_names())
  end, desc = "DeepSeek: run a custom command [name arguments] (.claude/commands, .deepseek/commands)" } },
  DeepSeekAccept = { M.accept, { desc = "DeepSeek: accept the hunk under the cursor" } },
  DeepSeekReject = { M.reject, { desc = "DeepSeek: reject the hunk under the cursor" } },
  DeepSeekAcceptAll = { M.accept_all, { nargs = "?", desc = "DeepSeek: accept every pending hunk [patch_id]" } },
  DeepSeekRejectAll = { M.reject_all, { nargs = "?", desc = "DeepSeek: reject every pending hunk [patch_id]" } },
  DeepSeekApprove = { M.approve, { bang = true, desc = "DeepSeek: approve the pending request (! = always)" } },
  DeepSeekDeny = { M.deny, { desc = "DeepSeek: deny the pending request" } },
  DeepSeekSessions = { M.sessions, { desc = "DeepSeek: list sessions and resume one" } },
  DeepSeekResume = { M.resume, { nargs = "?", desc = "DeepSeek: resume a session [session_id]" } },
  DeepSeekCancel = { M.cancel, { nargs = "?", desc = "DeepSeek: cancel what is running [session_id]" } },
  DeepSeekUndo = { M.undo, { desc = "DeepSeek: undo the last applied change" } },
  DeepSeekCompact = { M.compact, { nargs = "?", desc = "DeepSeek: compact the running conversation [focus]" } },
  DeepSeekRewind = { M.rewind, { nargs = "?", complete = function()
    return { "code", "conversation", "both", "redo" }
  end, desc = "DeepSeek: back to before a prompt [code|conversation|both] ('redo': undo a rewind)" } },
  DeepSeekShowPlan = { M.show_plan, { nargs = "?", desc = "DeepSeek: open the plan document [session_id]" } },
  DeepSeekWhy = { M.why, { nargs = "?", desc = "DeepSeek: explain the routing (why max-think?) [session_id]" } },
  DeepSeekTrust = { M.trust_command, { nargs = "?", complete = function()
    return { "status" }
  end, desc = "DeepSeek: trust this workspace (its config and yolo); 'status': what is held back" } },
  DeepSeekUntrust = { M.untrust, { desc = "DeepSeek: stop trusting this workspace" } },
  DeepSeekTeammate = { M.teammate, { nargs = "?", complete = function()
    return { "on", "off" }
  end, desc = "DeepSeek: teammate mode on/off (independent steps at once in git worktrees)" } },
  DeepSeekMcp = { M.mcp, { nargs = "?", complete = function()
    return { "approve" }
  end, desc = "DeepSeek: MCP servers and their tools ('approve': approve the repository's)" } },
}

--- Define every :DeepSeek* command; safe to call again.
function M.register()
  for name, spec in pairs(M.specs) do
    local fn = spec[1]
    vim.api.nvim_create_user_command(name, function(opts)
      require("deepseek").ensure_setup()
      fn(opts)
    end, spec[2])
  end
end

return M

--- Session state and progress for the statusline.
---
--- Fed by `deepseek/status` notifications and by `$/progress` (through the
--- LspProgress autocmd). Every change fires `User DeepSeekStatus` so a
--- statusline plugin can redraw.
local M = {}

---@class deepseek.Status
---@field session_id string|nil
---@field state string
---@field state_label string|nil  how the server says the state ("awaiting approval")
---@field busy boolean|nil  a run is live (the server's list, deepseek_ls/agent/state.py)
---@field working boolean|nil  busy and not waiting for the person
---@field profile string|nil
---@field max_think_active boolean
---@field last_decision table|nil
---@field cost table|nil  { session = Spend, steps = { [step_id] = Spend }, last_call = CallCost|nil }

---@type deepseek.Status|nil
M.current = nil

--- The message of the approval prompt open right now (window/showMessageRequest), else nil.
---@type string|nil
M.awaiting_approval = nil

--- token -> { title, message, percentage } of work in progress.
---@type table<string|integer, table>
M.progress = {}

local function changed()
  vim.api.nvim_exec_autocmds("User", { pattern = "DeepSeekStatus", modeline = false })
end

---@param status deepseek.Status
function M.update(status)
  M.current = status
  changed()
end

--- Record a `$/progress` value of our client.
---@param token string|integer
---@param value { kind: "begin"|"report"|"end", title?: string, message?: string, percentage?: integer }
function M.on_progress(token, value)
  if value.kind == "end" then
    M.progress[token] = nil
  else
    local entry = M.progress[token] or {}
    entry.title = value.title or entry.title
    entry.message = value.message or entry.message
    entry.percentage = value.percentage or entry.percentage
    M.progress[token] = entry
  end
  changed()
end

local idle_states = { Idle = true, Completed = true }

--- The session's cost as one line ("3.1k in (1.1k cached, 2.0k missed), 77 out · $0.0048"), or nil.
---@return string|nil
function M.cost_text()
  local spend = M.current and type(M.current.cost) == "table" and M.current.cost.session
  if type(spend) == "table" and (spend.calls or 0) > 0 then
    return spend.text
  end
end

--- One short line for the statusline, "" when there is nothing to say.
---@return string
function M.text()
  local parts = {}
  local st = M.current
  if st and st.state and not idle_states[st.state] then
    -- The server's label ("awaiting approval"); a state without one is shown as it is.
    table.insert(parts, type(st.state_label) == "string" and st.state_label or st.state)
  end
  if st and st.max_think_active then
    table.insert(parts, "max-think")
  end
  local lanes = st and type(st.lanes) == "table" and st.lanes
  if lanes and ((lanes.running or 0) > 0 or (lanes.queued or 0) > 0) then
    table.insert(parts, ("lanes %d running, %d queued"):format(lanes.running or 0, lanes.queued or 0))
  end
  local spend = st and type(st.cost) == "table" and st.cost.session
  if #parts > 0 and type(spend) == "table" and (spend.calls or 0) > 0 and spend.short then
    -- Tokens and money of the session ("cost unknown" without prices), while it is not idle:
    -- a finished session leaves the line quiet (cost_text() and :DeepSeekWhy still say it).
    table.insert(parts, spend.short)
  end
  local meter = st and type(st.context) == "table" and st.context.text
  if #parts > 0 and type(meter) == "string" and meter ~= "" then
    -- The context meter ("ctx 12k/1M (1%)"): the latest prompt out of the model's window.
    table.insert(parts, meter)
  end
  for _, p in pairs(M.progress) do
    -- Titles such as "DeepSeek: planning" would repeat our prefix.
    local piece = (p.title or ""):gsub("^DeepSeek:?%s*", "")
    if p.message and p.message ~= "" then
      piece = piece .. ": " .. p.message
    end
    if p.percentage then
      piece = ("%s %d%%%%"):format(piece, p.percentage)
    end
    table.insert(parts, piece)
    break -- one progress item keeps the line short
  end
  if #parts == 0 then
    return ""
  end
  return "DeepSeek " .. table.concat(parts, " · ")
end

function M.reset()
  M.current = nil
  M.progress = {}
  changed()
end

return M

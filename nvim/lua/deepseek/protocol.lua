--- LSP protocol names of deepseek-ls, defined once for Lua.
--- Mirrors deepseek_ls/lsp/names.py; documented in docs/protocol.md.
--- tests/nvim/test_protocol_names.py keeps the two in step.
local M = {}

--- workspace/executeCommand ids. Each takes ONE JSON object argument.
M.cmd = {
  ask = "deepseek.ask",
  plan = "deepseek.plan",
  run_step = "deepseek.runStep",
  skip_step = "deepseek.skipStep",
  revise_plan = "deepseek.revisePlan",
  show_plan = "deepseek.showPlan",
  accept_hunk = "deepseek.acceptHunk",
  reject_hunk = "deepseek.rejectHunk",
  accept_file = "deepseek.acceptFile",
  reject_file = "deepseek.rejectFile",
  accept_all = "deepseek.acceptAll",
  reject_all = "deepseek.rejectAll",
  approve = "deepseek.approve",
  deny = "deepseek.deny",
  explain_routing = "deepseek.explainRouting",
  sessions = "deepseek.sessions",
  resume = "deepseek.resume",
  cancel = "deepseek.cancel",
  undo = "deepseek.undo",
  answer = "deepseek.answer",
  mcp_status = "deepseek.mcpStatus",
  mcp_approve = "deepseek.mcpApprove",
  trust_workspace = "deepseek.trustWorkspace",
  untrust_workspace = "deepseek.untrustWorkspace",
  approve_mission = "deepseek.approveMission",
  reject_mission = "deepseek.rejectMission",
  modify_mission = "deepseek.modifyMission",
  undo_mission = "deepseek.undoMission",
  trust_status = "deepseek.trustStatus",
  toggle_teammate_mode = "deepseek.toggleTeammateMode",
  review = "deepseek.review",
  apply_review_fix = "deepseek.applyReviewFix",
  dismiss_finding = "deepseek.dismissFinding",
  list_commands = "deepseek.listCommands",
  run_command = "deepseek.runCommand",
  compact = "deepseek.compact",
  checkpoints = "deepseek.checkpoints",
  rewind = "deepseek.rewind",
  redo_rewind = "deepseek.redoRewind",
  edit = "deepseek.edit",
  fix_diagnostic = "deepseek.fixDiagnostic",
  explain_diagnostic = "deepseek.explainDiagnostic",
}

--- Custom requests (client -> server).
M.req = {
  hunks = "deepseek/hunks",
  pending_approvals = "deepseek/pendingApprovals",
  plan = "deepseek/plan",
  status = "deepseek/status",
  pending_questions = "deepseek/pendingQuestions",
  transcript = "deepseek/transcript",
  pending_hunks = "deepseek/pendingHunks",
  inline_completion_status = "deepseek/inlineCompletionStatus",
}

--- Custom notifications (server -> client).
M.notify = {
  stream = "deepseek/stream",
  status = "deepseek/status",
  hunks_changed = "deepseek/hunksChanged",
  question = "deepseek/question",
  attention = "deepseek/attention",
}

--- Keys set to true in capabilities.experimental: we answer deepseek/question
--- ourselves (vim.ui.input), so the server skips its showMessage fallback.
M.experimental = {
  questions = "deepseekQuestions",
  attention = "deepseekAttention",
}

--- Name of the LSP client (and of `lsp/deepseek_ls.lua`).
M.client_name = "deepseek_ls"

return M

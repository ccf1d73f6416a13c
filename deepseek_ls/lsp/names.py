"""LSP protocol names of deepseek-ls, defined once (mirrored in
`vscode-client/src/protocol.ts` and `nvim/lua/deepseek/protocol.lua`;
documented in `docs/protocol.md`)."""

# workspace/executeCommand ids. Each takes ONE JSON object argument.
CMD_ASK = "deepseek.ask"
CMD_PLAN = "deepseek.plan"
CMD_RUN_STEP = "deepseek.runStep"
CMD_SKIP_STEP = "deepseek.skipStep"
CMD_REVISE_PLAN = "deepseek.revisePlan"
CMD_SHOW_PLAN = "deepseek.showPlan"
CMD_ACCEPT_HUNK = "deepseek.acceptHunk"
CMD_REJECT_HUNK = "deepseek.rejectHunk"
CMD_ACCEPT_FILE = "deepseek.acceptFile"
CMD_REJECT_FILE = "deepseek.rejectFile"
CMD_ACCEPT_ALL = "deepseek.acceptAll"
CMD_REJECT_ALL = "deepseek.rejectAll"
CMD_APPROVE = "deepseek.approve"
CMD_DENY = "deepseek.deny"
CMD_EXPLAIN_ROUTING = "deepseek.explainRouting"
CMD_SESSIONS = "deepseek.sessions"
CMD_RESUME = "deepseek.resume"
CMD_CANCEL = "deepseek.cancel"
CMD_UNDO = "deepseek.undo"
CMD_ANSWER = "deepseek.answer"
CMD_MCP_STATUS = "deepseek.mcpStatus"
CMD_MCP_APPROVE = "deepseek.mcpApprove"
CMD_TRUST_WORKSPACE = "deepseek.trustWorkspace"
CMD_UNTRUST_WORKSPACE = "deepseek.untrustWorkspace"
CMD_APPROVE_MISSION = "deepseek.approveMission"
CMD_REJECT_MISSION = "deepseek.rejectMission"
CMD_MODIFY_MISSION = "deepseek.modifyMission"
CMD_UNDO_MISSION = "deepseek.undoMission"
CMD_TRUST_STATUS = "deepseek.trustStatus"
CMD_TOGGLE_TEAMMATE_MODE = "deepseek.toggleTeammateMode"
CMD_REVIEW = "deepseek.review"
CMD_APPLY_REVIEW_FIX = "deepseek.applyReviewFix"
CMD_DISMISS_FINDING = "deepseek.dismissFinding"
CMD_LIST_COMMANDS = "deepseek.listCommands"
CMD_RUN_COMMAND = "deepseek.runCommand"
CMD_COMPACT = "deepseek.compact"
CMD_CHECKPOINTS = "deepseek.checkpoints"
CMD_REWIND = "deepseek.rewind"
CMD_REDO_REWIND = "deepseek.redoRewind"
CMD_EDIT = "deepseek.edit"
CMD_FIX_DIAGNOSTIC = "deepseek.fixDiagnostic"
CMD_EXPLAIN_DIAGNOSTIC = "deepseek.explainDiagnostic"

ALL_COMMANDS = [v for k, v in dict(globals()).items() if k.startswith("CMD_")]

# Custom requests (client -> server).
REQ_HUNKS = "deepseek/hunks"
REQ_PENDING_APPROVALS = "deepseek/pendingApprovals"
REQ_PLAN = "deepseek/plan"
REQ_STATUS = "deepseek/status"
REQ_PENDING_QUESTIONS = "deepseek/pendingQuestions"
REQ_TRANSCRIPT = "deepseek/transcript"
REQ_PENDING_HUNKS = "deepseek/pendingHunks"
REQ_INLINE_COMPLETION_STATUS = "deepseek/inlineCompletionStatus"

# Custom notifications (server -> client).
NOTIFY_STREAM = "deepseek/stream"
NOTIFY_STATUS = "deepseek/status"
NOTIFY_HUNKS_CHANGED = "deepseek/hunksChanged"
NOTIFY_QUESTION = "deepseek/question"
# A session waits for the person or finished (lsp/attention.py): {kind, session_id, title, message, pending}.
NOTIFY_ATTENTION = "deepseek/attention"

# The `source` of the diagnostics a review publishes (lsp/review.py).
REVIEW_DIAGNOSTIC_SOURCE = "deepseek-review"
# The `source` of the diagnostic on each pending hunk (lsp/hunk_actions.py).
HUNK_DIAGNOSTIC_SOURCE = "deepseek"

# Keys a client sets in `capabilities.experimental` (value `true`).
# Handles `deepseek/question`: the server then skips its showMessage fallback.
EXPERIMENTAL_QUESTIONS = "deepseekQuestions"
# Shows `deepseek/attention`: the server skips its showMessage of a finished request.
EXPERIMENTAL_ATTENTION = "deepseekAttention"

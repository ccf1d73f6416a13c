/**
 * `DeepSeek: Approve` / `DeepSeek: Deny`: answer a pending approval
 * (`deepseek/pendingApprovals`) with `deepseek.approve` / `deepseek.deny`.
 * Blocking approvals also arrive as `window/showMessageRequest`, which VS Code
 * shows by itself; these commands are for the ones the user left open.
 */
import { Commands, Requests, type ApprovalRequest, type ServerApi } from "./protocol";

export interface PickItem<T> { label: string; description?: string; detail?: string; value: T }

export interface ApprovalUI {
  pick<T>(items: PickItem<T>[], placeholder: string): Promise<PickItem<T> | undefined>;
  info(message: string): void;
}

const KIND_LABELS: Record<string, string> = {
  "patch.apply": "Apply patch",
  "bash.run": "Run command",
};

/** A quick-pick entry for one approval request. */
export function approvalItem(req: ApprovalRequest): PickItem<ApprovalRequest> {
  const kind = KIND_LABELS[req.kind] ?? req.kind;
  const what = req.command ? `$ ${req.command}` : req.files.length ? req.files.join(", ") : "";
  return {
    label: `${kind}: ${req.title}`,
    description: what,
    detail: req.detail,
    value: req,
  };
}

async function choose(api: ServerApi, ui: ApprovalUI, verb: string): Promise<ApprovalRequest | undefined> {
  const { approvals } = await api.request<{ approvals: ApprovalRequest[] }>(Requests.pendingApprovals, {});
  if (!approvals.length) {
    ui.info("DeepSeek: nothing is waiting for approval.");
    return undefined;
  }
  if (approvals.length === 1) return approvals[0];
  const picked = await ui.pick(approvals.map(approvalItem), `Which request do you ${verb}?`);
  return picked?.value;
}

/** Approve one pending request (`always` remembers the answer for this kind). */
export async function approve(api: ServerApi, ui: ApprovalUI, always = false): Promise<unknown> {
  const req = await choose(api, ui, "approve");
  if (!req) return undefined;
  return api.command(Commands.approve, { request_id: req.request_id, always });
}

export async function deny(api: ServerApi, ui: ApprovalUI): Promise<unknown> {
  const req = await choose(api, ui, "deny");
  if (!req) return undefined;
  return api.command(Commands.deny, { request_id: req.request_id });
}

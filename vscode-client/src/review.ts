/**
 * Reviewing the change (`deepseek.review`, read-only: docs/review.md), one
 * path for the palette's **DeepSeek: Review Changes…** and the agent panel's
 * **Review** buttons: which change (the working tree, the staged changes or
 * the branch against a base), the request, then the findings in the Problems
 * panel. The editor parts come in as `ReviewUI`, so this is pure and
 * unit-tested in node.
 */
import type { PickItem } from "./approvals";
import { Commands, type ServerApi } from "./protocol";

/** `deepseek.review`'s arguments (docs/protocol.md); `{}` is the working tree against HEAD. */
export interface ReviewArgs {
  staged?: boolean;
  base?: string;
}

/** The part of `deepseek.review`'s answer (`ReviewResult`) the editor says back. */
export interface ReviewResult {
  findings: unknown[];
  files?: string[];
  counts?: { error: number; warning: number; note: number };
  dropped?: { count: number };
  failed?: { files: string[]; error: string }[];
  /** Set when there was nothing to review ("nothing to review: … has no text changes"). */
  note?: string | null;
}

export interface ReviewUI {
  pick<T>(items: PickItem<T>[], placeholder: string): Promise<PickItem<T> | undefined>;
  /** A line of text, `value` filled in; undefined when the person dismissed it. */
  input(prompt: string, value: string): Promise<string | undefined>;
  /** Run `job` with "reviewing…" on screen. */
  progress<T>(title: string, job: () => Promise<T>): Promise<T>;
  /** Bring the findings into view (VS Code's Problems panel). */
  showFindings(): void;
}

/** The working tree; asking for a base ref instead is `null`. */
export const REVIEW_SCOPES: PickItem<ReviewArgs | null>[] = [
  { label: "Working tree", description: "staged and unstaged changes against HEAD, new files too", value: {} },
  { label: "Staged", description: "what is staged (the index against HEAD)", value: { staged: true } },
  { label: "Branch against a base…", description: "HEAD against its merge base with a branch", value: null },
];

/** Which change to review, asked the palette's way; undefined when the person dismissed a question. */
export async function pickReviewScope(ui: ReviewUI): Promise<ReviewArgs | undefined> {
  const choice = await ui.pick(REVIEW_SCOPES, "DeepSeek: review which change? (read-only: nothing is written)");
  if (!choice) return undefined;
  if (choice.value) return choice.value;
  const base = await ui.input("Base branch, tag or commit", "main");
  return base ? { base } : undefined;
}

/**
 * Review `scope` (asked with `pickReviewScope` when not given). Undefined: the
 * person dismissed the question, nothing ran. A failed review throws (the
 * server has said why: `window/showMessage`).
 */
export async function reviewChanges(api: ServerApi, ui: ReviewUI, scope?: ReviewArgs): Promise<ReviewResult | undefined> {
  const args = scope ?? (await pickReviewScope(ui));
  if (!args) return undefined;
  const result = await ui.progress("DeepSeek: reviewing…", () => api.command<ReviewResult>(Commands.review, args));
  if (result.findings.length) ui.showFindings();
  return result;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** What a review found, in one line (the server's own summary says the same). */
export function reviewSummary(result: ReviewResult): string {
  if (result.note) return result.note;
  const n = result.findings.length;
  const c = result.counts;
  let text = plural(n, "finding");
  if (c && n) text += ` (${c.error} error, ${c.warning} warning, ${c.note} note)`;
  if (result.files) text += ` in ${plural(result.files.length, "file")}`;
  if (n) text += ": see the Problems panel";
  if (result.dropped?.count) text += `; ${result.dropped.count} dropped (outside the diff)`;
  for (const f of result.failed ?? []) text += `; not reviewed: ${f.files.join(", ")}: ${f.error}`;
  return text;
}

/**
 * Pure logic over staged hunks (`deepseek/hunks`): which hunk the cursor is
 * on, how to render a hunk inline, and the text a file would have with every
 * pending hunk accepted (for the native diff editor).
 */
import { diffArrays } from "diff";
import { offsetAt } from "./positions";
import type { Hunk, LspPosition } from "./protocol";

export function pending(hunks: Hunk[]): Hunk[] {
  return hunks.filter((h) => h.status === "pending");
}

/** The 0-based lines the hunk's range covers in the current buffer (may be empty). */
export function replacedLines(h: Hunk): number[] {
  const { start, end } = h.range;
  const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
  if (start.line === end.line && start.character === end.character) return [];
  const out: number[] = [];
  for (let l = start.line; l <= last; l++) out.push(l);
  return out;
}

/** Lines of `text` without the empty string a trailing newline leaves. */
export function textLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The pending hunk at `line`: the one whose replaced lines contain it, else
 * the nearest by its first line (ties go to the later hunk, the one the
 * cursor sits above). `undefined` when there is no pending hunk.
 */
export function hunkAtLine(hunks: Hunk[], line: number): Hunk | undefined {
  let best: Hunk | undefined;
  let bestDistance = Infinity;
  for (const h of pending(hunks)) {
    const covered = replacedLines(h);
    if (covered.includes(line)) return h;
    const first = h.range.start.line;
    const lastLine = covered.length ? covered[covered.length - 1] : first;
    const distance = line < first ? first - line : line - lastLine;
    if (distance < bestDistance || (distance === bestDistance && best && first > best.range.start.line)) {
      best = h;
      bestDistance = distance;
    }
  }
  return best;
}

export interface RemovedMark { line: number; hunkId: string }
export interface AddedMark {
  /** The line the ghost text is attached to. */
  line: number;
  /** `after`: at the end of `line`; `before`: at its start (insertion at the top of the file). */
  position: "after" | "before";
  text: string;
  /** Every added line of this run, for the hover. */
  added: string[];
  hunkId: string;
}

export interface DecorationPlan { removed: RemovedMark[]; added: AddedMark[] }

const GHOST_MAX = 80;

function ghostText(lines: string[]): string {
  const first = lines[0].trim();
  const shown = first.length > GHOST_MAX ? `${first.slice(0, GHOST_MAX - 1)}…` : first;
  const more = lines.length > 1 ? `  (+${lines.length - 1} more line${lines.length > 2 ? "s" : ""})` : "";
  return `  + ${shown}${more}`;
}

/**
 * How the pending hunks look in the buffer before they are accepted. A hunk's
 * old and new text are compared line by line (context lines stay unmarked):
 * removed lines are marked, and each run of added lines is shown as ghost text
 * after the line it follows (before line 0 for an insertion at the top), with
 * the whole run in the hover.
 */
export function decorationPlan(hunks: Hunk[]): DecorationPlan {
  const plan: DecorationPlan = { removed: [], added: [] };
  for (const h of pending(hunks)) {
    const first = h.range.start.line;
    let oldIndex = 0; // lines of old_text consumed so far
    for (const change of diffArrays(textLines(h.old_text), textLines(h.new_text))) {
      if (change.removed) {
        for (let i = 0; i < change.count; i++) plan.removed.push({ line: first + oldIndex + i, hunkId: h.hunk_id });
        oldIndex += change.count;
      } else if (change.added) {
        const anchor = first + oldIndex - 1;
        const position = anchor < 0 ? "before" : "after";
        plan.added.push({ line: Math.max(anchor, 0), position, text: ghostText(change.value), added: change.value, hunkId: h.hunk_id });
      } else {
        oldIndex += change.count;
      }
    }
  }
  return plan;
}

/** `text` with every pending hunk's `new_text` put over its range. */
export function applyHunks(text: string, hunks: Hunk[]): string {
  const ordered = pending(hunks)
    .map((h) => ({ h, start: offsetAt(text, h.range.start), end: offsetAt(text, h.range.end) }))
    .sort((a, b) => b.start - a.start);
  let out = text;
  for (const { h, start, end } of ordered) out = out.slice(0, start) + h.new_text + out.slice(end);
  return out;
}

/** What `deepseek.undo` answered, said in one line: which files went back, which kept the
 * person's edits made since (3-way), and which were changed in open buffers and still need saving. */
export function undoMessage(result: { restored: string[]; merged?: string[]; unsaved?: string[] }): string {
  if (!result.restored.length) return "DeepSeek: nothing to undo.";
  const parts = [`DeepSeek: restored ${result.restored.join(", ")}`];
  if (result.merged?.length) parts.push(`your edits since were kept in ${result.merged.join(", ")}`);
  if (result.unsaved?.length) parts.push(`unsaved in the editor: ${result.unsaved.join(", ")} (save to write)`);
  return parts.join("; ") + ".";
}

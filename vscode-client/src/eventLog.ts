/**
 * Where a session's `events.jsonl` lives: `<root>/.deepseek/sessions/<id>/`,
 * found by a shallow search under `.deepseek/` so a changed layout still works.
 */
import * as fs from "fs";
import * as path from "path";

const MAX_DEPTH = 3;

export function findEventLog(root: string, sessionId: string): string | undefined {
  const state = path.join(root, ".deepseek");
  const direct = path.join(state, "sessions", sessionId, "events.jsonl");
  if (fs.existsSync(direct)) return direct;
  const walk = (dir: string, depth: number): string | undefined => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const sub = path.join(dir, e.name);
      if (e.name === sessionId && fs.existsSync(path.join(sub, "events.jsonl"))) return path.join(sub, "events.jsonl");
      if (depth < MAX_DEPTH) {
        const found = walk(sub, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(state, 1);
}

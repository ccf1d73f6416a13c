/**
 * The server's vocabulary of session states, read from deepseek_ls/agent/state.py
 * (and the states from deepseek_ls/store/events.py), so the unit tests build
 * `Status` payloads the way the server sends them and check the client against it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Status } from "../src/protocol";

// Compiled to out/unit/test/, so the repository root is four levels up.
const ROOT = path.resolve(__dirname, "../../../..");
const STATE_PY = fs.readFileSync(path.join(ROOT, "deepseek_ls/agent/state.py"), "utf8");
const EVENTS_PY = fs.readFileSync(path.join(ROOT, "deepseek_ls/store/events.py"), "utf8");

function tuple(name: string): string[] {
  const m = STATE_PY.match(new RegExp(`^${name}: tuple\\[str, \\.\\.\\.\\] = \\(([^)]*)\\)`, "m"));
  if (!m) throw new Error(`${name} not found in deepseek_ls/agent/state.py`);
  return [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
}

const labelsBody = STATE_PY.match(/^STATE_LABELS: dict\[str, str\] = \{\n([\s\S]*?)^\}/m);
if (!labelsBody) throw new Error("STATE_LABELS not found in deepseek_ls/agent/state.py");
const stateLiteral = EVENTS_PY.match(/^SessionState = Literal\[\n([\s\S]*?)^\]/m);
if (!stateLiteral) throw new Error("SessionState not found in deepseek_ls/store/events.py");

export const STATES: string[] = [...stateLiteral[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
export const BUSY_STATES: string[] = tuple("BUSY_STATES");
export const WAITING_STATES: string[] = tuple("WAITING_STATES");
export const STATE_LABELS: Record<string, string> = Object.fromEntries(
  [...labelsBody[1].matchAll(/^\s+"([^"]+)": "([^"]+)",$/gm)].map((x) => [x[1], x[2]]),
);

/** A `Status` of `state` with the fields `describe_state` adds (state_label, busy, working). */
export function serverStatus(state: string, rest: Partial<Status> = {}): Status {
  const busy = BUSY_STATES.includes(state);
  return {
    state, state_label: STATE_LABELS[state] ?? state, busy, working: busy && !WAITING_STATES.includes(state),
    max_think_active: false, ...rest,
  };
}

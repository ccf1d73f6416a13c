/**
 * The status bar item: session state and model profile, highlighted while
 * max-think is active; its tooltip says what the session cost (tokens by kind,
 * money, per step); clicking it explains the last routing decision.
 * `describeStatus` is pure; `StatusBar` drives any item with the
 * `vscode.StatusBarItem` shape (injected, so this file never imports vscode).
 */
import { stateLabel, type RoutingExplanation, type SessionCost, type Status } from "./protocol";

export type ServerState = "starting" | "running" | "stopped" | "failed";

export interface StatusView {
  text: string;
  tooltip: string;
  highlighted: boolean;
  /** Read by screen readers (and by the end-to-end test): the text without icons. */
  label: string;
}

/** Profile names as people write them (`max_think` in config, "max-think" on screen). */
export function profileLabel(profile: string): string {
  return profile.replace(/_/g, "-");
}

/** One line explaining a routing decision, for tooltips. */
export function routingSummary(d: RoutingExplanation): string {
  return `${profileLabel(d.profile)} (${d.model}): score ${d.score.toFixed(2)} vs threshold ${d.threshold.toFixed(2)}` +
    (d.reason_codes.length ? `; ${d.reason_codes.join(", ")}` : "");
}

/** Tooltip lines for what the session cost: the session, each step, the last call ("unknown" without prices). */
export function costLines(cost: SessionCost | null | undefined): string[] {
  if (!cost || !cost.session || cost.session.calls === 0) return [];
  const lines = [`Cost (session, ${cost.session.calls} calls): ${cost.session.text}`];
  const steps = Object.entries(cost.steps ?? {});
  steps.forEach(([step, spend], i) => lines.push(`  step ${i + 1} (${step.slice(0, 8)}): ${spend.text}`));
  return lines;
}

/** "lanes 2 running, 1 queued" while teammate lanes run or wait, else "". */
export function lanesLabel(status: Status): string {
  const lanes = status.lanes;
  if (!lanes || (lanes.running === 0 && lanes.queued === 0)) return "";
  return `lanes ${lanes.running} running, ${lanes.queued} queued`;
}

/** What the item shows for a server state and the last `Status` it sent. */
export function describeStatus(server: ServerState, status: Status | undefined, forcedProfile = ""): StatusView {
  const view = describe(server, status);
  const forced = forcedProfile ? ` (router forced: ${forcedProfile})` : "";
  const tooltip = forcedProfile
    ? `${view.tooltip}\nThe deepseek.router.mode setting forces the ${forcedProfile} profile.`
    : view.tooltip;
  const label = view.text.replace(/\$\([^)]*\)\s*/g, "") + forced + (server === "running" ? " (server running)" : ` (server ${server})`);
  return { ...view, tooltip, label };
}

function describe(server: ServerState, status: Status | undefined): Omit<StatusView, "label"> {
  if (server === "starting") return { text: "$(sync~spin) DeepSeek", tooltip: "DeepSeek: starting the language server…", highlighted: false };
  if (server === "failed") return { text: "$(error) DeepSeek", tooltip: "DeepSeek: the language server is not running. Click for details; `DeepSeek: Restart Server` retries.", highlighted: false };
  if (server === "stopped") return { text: "$(circle-slash) DeepSeek", tooltip: "DeepSeek: the language server is stopped.", highlighted: false };
  if (!status || !status.session_id) {
    return { text: "$(sparkle) DeepSeek", tooltip: "DeepSeek: no active session. Run `DeepSeek: Plan…` or `DeepSeek: Ask…`.", highlighted: false };
  }
  const icon = status.working ? "$(sync~spin)" : status.max_think_active ? "$(flame)" : "$(sparkle)";
  const profile = status.max_think_active ? "max-think" : profileLabel(status.profile ?? "");
  const lanes = lanesLabel(status);
  const text = `${icon} DeepSeek: ${stateLabel(status)}${profile ? ` · ${profile}` : ""}${lanes ? ` · ${lanes}` : ""}`;
  const lines = [`DeepSeek session ${status.session_id}: ${stateLabel(status)}`];
  if (status.teammate_mode) lines.push(`Teammate mode on${lanes ? `: ${lanes}` : ""}`);
  const why = status.state === "Failed" ? status.last_error : status.state === "Paused" ? status.state_reason : null;
  if (why) lines.push(why);
  if (status.last_decision) lines.push(`Last routing: ${routingSummary(status.last_decision)}`);
  lines.push(...costLines(status.cost));
  if (status.context?.text) lines.push(`Context: ${status.context.text}`);
  lines.push("Click to explain the last routing decision.");
  return { text, tooltip: lines.join("\n"), highlighted: status.max_think_active };
}

/** The parts of `vscode.StatusBarItem` we set. */
export interface StatusItemLike {
  text: string;
  tooltip: unknown;
  command: unknown;
  backgroundColor: unknown;
  accessibilityInformation?: { label: string };
  show(): void;
}

export class StatusBar {
  private server: ServerState = "starting";
  private forcedProfile = "";
  private last: Status | undefined;

  constructor(
    private readonly item: StatusItemLike,
    private readonly highlightColor: unknown,
    command: string,
  ) {
    item.command = command;
    this.render();
    item.show();
  }

  get status(): Status | undefined {
    return this.last;
  }

  /** The profile the settings force ("" for auto), shown in the tooltip. */
  setForcedProfile(profile: string): void {
    this.forcedProfile = profile;
    this.render();
  }

  setServerState(state: ServerState): void {
    this.server = state;
    this.render();
  }

  setStatus(status: Status): void {
    this.last = status;
    this.render();
  }

  private render(): void {
    const view = describeStatus(this.server, this.last, this.forcedProfile);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.highlighted ? this.highlightColor : undefined;
    this.item.accessibilityInformation = { label: view.label };
  }
}

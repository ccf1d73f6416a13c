/**
 * The agent panel's webview: renders the `PanelState` the extension sends and
 * turns clicks and keys into messages for it. No agent logic and no server
 * access here; the extension checks every message (`parseFromWebview`).
 */
import type { FromWebview, PanelState, ToWebview } from "../src/panel/messages";
import { applyMessage, type ViewState } from "./state";
import {
  renderChanges, renderContext, renderConversation, renderHeader, renderLive, renderOptions, renderPlan, renderReview, renderSessions,
} from "./render";
import "./panel.css";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): { draft?: string; open?: string[] } | undefined;
  setState(state: { draft?: string; open?: string[] }): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const saved = vscode.getState() ?? {};
const openThinking = new Set<string>(saved.open ?? []);
let view: ViewState = { state: null };

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const prompt = $<HTMLTextAreaElement>("prompt");
prompt.value = saved.draft ?? "";

function remember(): void {
  vscode.setState({ draft: prompt.value, open: [...openThinking] });
}

// Only sections whose HTML changed are replaced: focus and scroll elsewhere stay.
const rendered = new Map<string, string>();
function put(id: string, html: string): void {
  if (rendered.get(id) === html) return;
  rendered.set(id, html);
  $(id).innerHTML = html;
}

let frame = 0;
function schedule(): void {
  if (!frame) frame = requestAnimationFrame(() => {
    frame = 0;
    render();
  });
}

function stickToBottom(el: HTMLElement, update: () => void): void {
  const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  update();
  if (atBottom) el.scrollTop = el.scrollHeight;
}

function render(): void {
  const s: PanelState | null = view.state;
  if (!s) return;
  put("header", renderHeader(s));
  const convo = $("conversation-body");
  stickToBottom(convo, () => {
    put("turns", renderConversation(s, openThinking));
    put("live", renderLive(s.live, openThinking));
  });
  put("plan", renderPlan(s));
  put("changes", renderChanges(s));
  put("review", renderReview(s));
  put("sessions", renderSessions(s));
  put("context", renderContext(s));
  $("changes-count").textContent = s.changes.length ? `(${s.changes.reduce((n, f) => n + f.hunks.length, 0)})` : "";
  put("mode", renderOptions(s.modes, s.mode));
  put("profile", renderOptions(s.profiles, s.profile));
  for (const b of document.querySelectorAll<HTMLButtonElement>(".submit button")) b.disabled = s.server !== "running";
  $("error").textContent = s.error ?? "";
}

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const msg = event.data;
  if (msg?.type === "focusPrompt") {
    prompt.focus();
    return;
  }
  if (msg?.type === "setPrompt") {
    prompt.value = msg.text;
    remember();
    prompt.focus();
    return;
  }
  view = applyMessage(view, msg);
  schedule();
});

function submit(action: "ask" | "plan" | "run"): void {
  const text = prompt.value.trim();
  if (!text) {
    prompt.focus();
    return;
  }
  vscode.postMessage({ type: "submit", action, prompt: text, useSelection: $<HTMLInputElement>("use-selection").checked });
  prompt.value = "";
  remember();
}

document.addEventListener("click", (event) => {
  const target = (event.target as HTMLElement).closest<HTMLElement>("[data-action]");
  if (!target) return;
  event.preventDefault();
  const d = target.dataset;
  const action = d.action as string;
  switch (action) {
    case "ask":
    case "plan":
    case "run":
      return submit(action);
    case "runStep":
    case "skipStep":
      return vscode.postMessage({ type: action, session_id: d.session as string, step_id: d.step as string });
    case "reviseStep":
      return vscode.postMessage({ type: "reviseStep", session_id: d.session as string, step_id: d.step ?? null, feedback: "" });
    case "acceptHunk":
    case "rejectHunk":
      target.closest(".hunk")?.classList.add("deciding");
      return vscode.postMessage({ type: action, patch_id: d.patch as string, hunk_id: d.hunk as string });
    case "acceptFile":
    case "rejectFile":
      return vscode.postMessage({ type: action, uri: d.uri as string });
    case "openFile":
      return vscode.postMessage({ type: "openFile", uri: d.uri as string, line: Number(d.line ?? 0) });
    case "openSession":
    case "resumeSession":
    case "showEventLog":
    case "rewindTo":
      return vscode.postMessage({ type: action, session_id: d.session as string });
    case "review":
      return vscode.postMessage({ type: "review", pick: d.pick === "true" });
    case "removeContext":
      return vscode.postMessage({ type: "removeContext", path: d.path as string });
    case "acceptAll":
    case "rejectAll":
    case "openChanges":
    case "cancel":
    case "addContext":
      return vscode.postMessage({ type: action });
  }
});

document.addEventListener("toggle", (event) => {
  const el = event.target as HTMLElement;
  if (!(el instanceof HTMLDetailsElement) || !el.classList.contains("thinking") || !el.dataset.turn) return;
  if (el.open) openThinking.add(el.dataset.turn);
  else openThinking.delete(el.dataset.turn);
  remember();
}, true);

prompt.addEventListener("input", remember);
prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    submit(event.shiftKey ? "plan" : event.altKey ? "run" : "ask");
  } else if (event.key === "@" && !prompt.value.trim()) {
    // "@" at the start of an empty prompt picks a file, as in chat boxes elsewhere.
    event.preventDefault();
    vscode.postMessage({ type: "addContext" });
  }
});
$<HTMLSelectElement>("mode").addEventListener("change", (e) => vscode.postMessage({ type: "setMode", mode: (e.target as HTMLSelectElement).value }));
$<HTMLSelectElement>("profile").addEventListener("change", (e) => vscode.postMessage({ type: "setProfile", profile: (e.target as HTMLSelectElement).value }));

vscode.postMessage({ type: "ready" });

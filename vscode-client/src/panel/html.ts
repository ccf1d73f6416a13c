/**
 * The webview's HTML shell with a strict Content-Security-Policy: nothing
 * loads but our own script (by nonce) and stylesheet, no inline script or
 * handler runs, no image, frame or connection leaves the webview. Pure.
 */
import { randomBytes } from "crypto";

export function newNonce(): string {
  return randomBytes(18).toString("base64").replace(/[^A-Za-z0-9]/g, "");
}

export interface ShellUris {
  /** `webview.cspSource`: the origin VS Code serves our resources from. */
  cspSource: string;
  script: string;
  style: string;
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    "img-src 'none'",
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export function panelHtml(uris: ShellUris, nonce: string): string {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${esc(contentSecurityPolicy(uris.cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${esc(uris.style)}">
<title>DeepSeek</title>
</head>
<body>
<div id="app">
  <header id="header" role="status" aria-live="polite"></header>
  <div id="scroll">
    <details class="section" id="section-conversation" open><summary>Conversation</summary>
      <div id="conversation-body" role="log" aria-label="Conversation"><div id="turns"></div><div id="live"></div></div>
    </details>
    <details class="section" id="section-plan" open><summary>Plan</summary><div id="plan" role="region" aria-label="Plan"></div></details>
    <details class="section" id="section-changes" open><summary>Changes <span id="changes-count"></span></summary><div id="changes" role="region" aria-label="Changes under review"></div></details>
    <details class="section" id="section-review" open><summary>Review</summary><div id="review" role="region" aria-label="Review" aria-live="polite"></div></details>
    <details class="section" id="section-sessions"><summary>Sessions</summary><div id="sessions" role="region" aria-label="Sessions"></div></details>
  </div>
  <footer id="input">
    <label class="sr-only" for="prompt">Prompt</label>
    <textarea id="prompt" placeholder="Ask, plan or run… (Ctrl+Enter: Ask, Ctrl+Shift+Enter: Plan, Ctrl+Alt+Enter: Run, @: add a file)"></textarea>
    <div class="row"><span id="context"></span><button type="button" data-action="addContext" title="Add a file as context (@)" aria-label="Add a file as context">@ File</button>
      <label><input type="checkbox" id="use-selection" checked> Selection</label></div>
    <div class="row">
      <label>Mode <select id="mode" aria-label="Mode"></select></label>
      <label>Profile <select id="profile" aria-label="Profile"></select></label>
    </div>
    <div class="row submit">
      <button type="button" data-action="ask" title="Ask a question (Ctrl+Enter)">Ask</button>
      <button type="button" data-action="plan" title="Make a plan (Ctrl+Shift+Enter)">Plan</button>
      <button type="button" data-action="run" title="Plan, then run the first step (Ctrl+Alt+Enter)">Run</button>
    </div>
    <div id="error" role="alert"></div>
  </footer>
</div>
<script nonce="${nonce}" src="${esc(uris.script)}"></script>
</body>
</html>`;
}

// Drives code-server in headless Chromium with playwright-core, as a person would:
// palette commands, code lenses, the editor. Invoked by test_vscode_e2e.py with
// one argument, a JSON file: {url, chromium, artifacts, scenario: "smoke"|"flow",
// file?, prompt?, timeoutMs?}. Prints "STEP <name> <ms>" per step and a final
// "RESULT <json>" line; on failure saves failure.png and exits 1.
import { createRequire } from "node:module";
import * as fs from "node:fs";
import * as path from "node:path";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const require = createRequire(path.resolve(config.nodeModulesFrom, "package.json"));
const { chromium } = require("playwright-core");
const T = config.timeoutMs ?? 60000;
// Selectors below start at ".part.editor": the output panel is a Monaco editor too.
const result = { steps: [], screenshots: [] };
const started = Date.now();

function step(name) {
  const ms = Date.now() - started;
  result.steps.push({ name, ms });
  console.log(`STEP ${name} ${ms}`);
}

async function shot(page, name) {
  const file = path.join(config.artifacts, `${name}.png`);
  await page.screenshot({ path: file });
  result.screenshots.push(file);
}

/** Run a command from the palette by its title ("DeepSeek: Plan…"). */
async function palette(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: T });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: T });
  await input.press("Enter");
}

/** Answer an input box opened by a command. */
async function answerInputBox(page, text) {
  const input = page.locator(".quick-input-widget input");
  await page.waitForFunction(
    () => {
      const el = document.querySelector(".quick-input-widget input");
      return el && el.offsetParent !== null && !el.value.startsWith(">");
    },
    null,
    { timeout: T },
  );
  await input.fill(text);
  await input.press("Enter");
}

function lens(page, re) {
  return page.locator(".part.editor .monaco-editor .codelens-decoration a", { hasText: re });
}

async function lensTitles(page) {
  return page.$$eval(".part.editor .monaco-editor .codelens-decoration a", (els) => els.map((e) => e.textContent.trim()));
}

/** Inline-diff decorations, per editor line: struck-through (removed) lines and lines carrying ghost text. */
async function decorations(page) {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll(".part.editor .monaco-editor .view-lines .view-line")];
    const struck = lines.filter((l) => [...l.querySelectorAll("span")].some((s) => getComputedStyle(s).textDecorationLine.includes("line-through")));
    const ghostOf = (l) =>
      [...l.querySelectorAll("span")]
        .flatMap((s) => [getComputedStyle(s, "::after").content, getComputedStyle(s, "::before").content])
        .find((c) => c && c !== "none" && c.includes(" + "));
    const ghosts = lines.map(ghostOf).filter(Boolean);
    return { struck: struck.length, ghosts: ghosts.length, struckText: struck.map((l) => l.textContent.replace(/\u00a0/g, " ").trim()), ghostText: ghosts };
  });
}

async function statusLabel(page) {
  return page.locator('.statusbar-item[id$="deepseek.status"]').first().getAttribute("aria-label");
}

async function smoke(page) {
  await page.waitForFunction(
    () => {
      const el = document.querySelector('.statusbar-item[id$="deepseek.status"]');
      return el && (el.getAttribute("aria-label") || "").includes("(server running)");
    },
    null,
    { timeout: T },
  );
  result.status = await statusLabel(page);
  step("server-running");
  // A round trip through the server: deepseek.sessions answers, the extension shows it.
  await palette(page, "DeepSeek: Show Sessions");
  const toast = page.locator(".notifications-toasts .notification-list-item", { hasText: /DeepSeek/ }).first();
  const picker = page.locator(".quick-input-widget .monaco-list-row").first();
  await Promise.race([toast.waitFor({ state: "visible", timeout: T }), picker.waitFor({ state: "visible", timeout: T })]);
  result.sessionsReply = (await toast.isVisible()) ? (await toast.textContent()).trim() : "picker";
  step("command-round-trip");
  await shot(page, "smoke");
  await page.keyboard.press("Escape");
}

async function openFile(page, rel) {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: T });
  await input.fill(rel);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: path.basename(rel) }).first().waitFor({ timeout: T });
  await input.press("Enter");
  await page.locator(".part.editor .monaco-editor .view-lines").first().waitFor({ state: "visible", timeout: T });
  await page.locator(".editor-group-container .tab.active", { hasText: path.basename(rel) }).waitFor({ timeout: T });
}

async function flow(page) {
  await openFile(page, config.file);
  step("file-open");
  await palette(page, "DeepSeek: Plan…");
  await answerInputBox(page, config.prompt);
  const stepLens = lens(page, /Step 1/).first();
  await stepLens.waitFor({ state: "visible", timeout: T });
  result.planLenses = await lensTitles(page);
  step("plan-lenses");
  if (config.expectStatus) await expectStatus(page, config.expectStatus);
  await shot(page, "plan-lenses");
  if (config.thenSettings) await changeSettingsAndPlanAgain(page);
  if (config.stopAfterPlan) return;

  await stepLens.click();
  await lens(page, /^Accept$/).nth(1).waitFor({ state: "visible", timeout: T });
  result.hunkLenses = await lensTitles(page);
  await page.waitForFunction(
    () => [...document.querySelectorAll(".part.editor .monaco-editor .view-lines span span")].some((s) => getComputedStyle(s).textDecorationLine.includes("line-through")),
    null,
    { timeout: T },
  );
  result.decorations = await decorations(page);
  step("hunk-lenses-and-inline-diff");
  await shot(page, "hunks");

  // The native diff editor for the whole file's patch: the editor title button
  // (shown while the file has pending hunks) runs DeepSeek: Show Patch Diff.
  result.titleActions = await page.$$eval(".part.editor .editor-actions .action-label", (els) => els.map((e) => e.getAttribute("aria-label") || e.className));
  await page.locator('.part.editor .editor-actions a[aria-label="Show Patch Diff"]').first().click({ timeout: T });
  const modified = page.locator(".monaco-diff-editor .editor.modified .view-lines").first();
  await modified.waitFor({ state: "visible", timeout: T });
  await page.waitForFunction(() => {
    const el = document.querySelector(".monaco-diff-editor .editor.modified .view-lines");
    return el && el.textContent.replace(/\u00a0/g, " ").includes("int(a) - int(b)");
  }, null, { timeout: T });
  result.patchDiff = (await modified.textContent()).replace(/\u00a0/g, " ");
  step("patch-diff");
  await shot(page, "patch-diff");
  await page.locator(".tab.active .tab-actions .codicon-close").first().click();
  await page.locator(".monaco-diff-editor").first().waitFor({ state: "detached", timeout: T });

  // Accept the first hunk with its code lens (lenses render again once the editor is back).
  await lens(page, /^Accept$/).nth(1).waitFor({ state: "visible", timeout: T });
  const accepts = await lens(page, /^Accept$/).count();
  result.acceptLensesBefore = accepts;
  await lens(page, /^Accept$/).first().click();
  await page.waitForFunction((n) => [...document.querySelectorAll(".part.editor .monaco-editor .codelens-decoration a")].filter((a) => a.textContent.trim() === "Accept").length < n, accepts, { timeout: T });
  result.lensesAfterAccept = await lensTitles(page);
  step("first-hunk-accepted");
  await shot(page, "accepted-one");

  // Reject the other with the keybinding, the cursor on its line.
  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+G");
  await answerInputBox(page, `:${config.rejectLine}`);
  await page.keyboard.press("Control+Alt+N");
  await page.waitForFunction(() => ![...document.querySelectorAll(".part.editor .monaco-editor .codelens-decoration a")].some((a) => /^(Accept|Reject)$/.test(a.textContent.trim())), null, { timeout: T });
  result.decorationsAfter = await decorations(page);
  step("second-hunk-rejected-by-keybinding");

  await page.keyboard.press("Control+S");
  await page.waitForFunction(() => !document.querySelector(".editor-group-container .tab.active.dirty"), null, { timeout: T });
  step("saved");
  // Verification runs on save; the step lens then says how it went.
  await lens(page, /Step 1: .*(done|failed)/).first().waitFor({ state: "visible", timeout: T });
  result.stepLensAfterSave = (await lensTitles(page)).find((t) => t.includes("Step 1"));
  step("step-verified");

  if (config.expectCost) {
    // The status bar item's tooltip says what the session cost (tokens by kind, money, per step).
    const item = page.locator('.statusbar-item[id$="deepseek.status"]').first();
    const hover = page.locator(".monaco-hover, .workbench-hover", { hasText: "Cost (session" }).first();
    for (let i = 0; i < 20 && !(await hover.isVisible()); i++) {
      await page.mouse.move(0, 0);
      await item.hover();
      try {
        await hover.waitFor({ state: "visible", timeout: 3000 });
      } catch {
        // the tooltip is replaced on every status push; hover again
      }
    }
    result.statusTooltip = (await hover.innerText()).trim();
    await page.mouse.move(0, 0);
    step("cost-tooltip");
  }

  // The status bar item explains the last routing decision when clicked.
  await page.locator('.statusbar-item[id$="deepseek.status"]').first().click();
  const routing = page.locator(".notifications-toasts .notification-list-item", { hasText: "DeepSeek routing:" }).first();
  await routing.waitFor({ state: "visible", timeout: T });
  result.routing = (await routing.textContent()).trim();
  result.status = await statusLabel(page);
  step("routing-explained");
  await shot(page, "final");

  if (config.question) await ask(page);

  // The session is listed by Show Sessions, and its event log opens.
  await palette(page, "DeepSeek: Show Sessions");
  const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: config.prompt }).first();
  await row.waitFor({ state: "visible", timeout: T });
  result.sessionRow = (await row.textContent()).trim();
  await page.keyboard.press("Escape");
  await palette(page, "DeepSeek: Show Event Log");
  await page.locator(".tab.active", { hasText: "events.jsonl" }).waitFor({ timeout: T });
  await page.waitForFunction(
    () => (document.querySelector(".part.editor .monaco-editor .view-lines")?.textContent || "").includes("@v1"),
    null,
    { timeout: T },
  );
  result.eventLogShown = true;
  step("sessions-and-event-log");
  await shot(page, "event-log");

  // Undo Last Apply: hunks accepted in the editor leave no checkpoint, and the
  // person is told so once (by the server; the extension does not repeat it).
  await palette(page, "DeepSeek: Undo Last Apply");
  const undo = page.locator(".notifications-toasts .notification-list-item", { hasText: /nothing to undo/ });
  await undo.first().waitFor({ state: "visible", timeout: T });
  result.undoMessage = (await undo.first().textContent()).trim();
  await page.waitForTimeout(1000); // a duplicate toast would arrive right after the server's
  result.undoToasts = await undo.count();
  step("undo-explained");
}

/** Wait until the output panel (the "DeepSeek Stream" channel) shows `want` (streamed text). */
async function panelShows(page, want) {
  await page.waitForFunction(
    (w) => [...document.querySelectorAll(".part.panel .view-lines")].some((v) => v.textContent.replace(/\u00a0/g, " ").includes(w)),
    want,
    { timeout: T },
  );
}

/** Run "DeepSeek: Cancel" from the palette; returns the toast it shows. */
async function cancelFromPalette(page) {
  await palette(page, "DeepSeek: Cancel");
  const toast = page.locator(".notifications-toasts .notification-list-item", { hasText: /DeepSeek: (cancelled|nothing was running)/ }).last();
  await toast.waitFor({ state: "visible", timeout: T });
  const text = (await toast.textContent()).trim();
  // The clear button shows only while the toast is hovered: clicked without the hover, it waited out
  // playwright's 30 s default and failed (twice per cancel test). Clearing is tidying, not a check.
  await toast.hover();
  await toast.locator(".codicon-notifications-clear").click({ timeout: 5000 })
    .catch((e) => { result.toastNotCleared = String(e).slice(0, 200); });
  return text;
}

/**
 * Cancel from the palette while the model streams: first a plan (its session
 * is new to the editor), then a running step, whose lens must offer Run again.
 */
async function cancelFlow(page) {
  await openFile(page, config.file);
  step("file-open");
  // A plan's stream no longer opens the raw channel by itself: open it as a person would.
  await palette(page, "DeepSeek: Show Stream Output");
  await palette(page, "DeepSeek: Plan…");
  await answerInputBox(page, config.slowPrompt);
  await panelShows(page, config.streamText);
  step("plan-streaming");
  result.planCancelToast = await cancelFromPalette(page);
  await expectStatus(page, "paused");
  result.statusAfterPlanCancel = result.status;
  result.lensesAfterPlanCancel = await lensTitles(page);
  step("plan-cancelled");
  await shot(page, "plan-cancelled");

  await palette(page, "DeepSeek: Plan…");
  await answerInputBox(page, config.prompt);
  const stepLens = lens(page, /Step 1/).first();
  await stepLens.waitFor({ state: "visible", timeout: T });
  result.stepLensBefore = (await lensTitles(page)).find((t) => t.includes("Step 1"));
  await stepLens.click();
  await lens(page, /Step 1: .*running/).first().waitFor({ state: "visible", timeout: T });
  step("step-running");
  result.stepCancelToast = await cancelFromPalette(page);
  await lens(page, /Step 1: .*pending/).first().waitFor({ state: "visible", timeout: T });
  result.stepLensAfterCancel = (await lensTitles(page)).find((t) => t.includes("Step 1"));
  step("step-runnable-again");
  await shot(page, "step-cancelled");
  result.toastsAtEnd = await page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent.trim()));
}

/** The status bar item says `want` (e.g. the profile); records its colours. */
async function expectStatus(page, want) {
  await page.waitForFunction(
    (w) => (document.querySelector('.statusbar-item[id$="deepseek.status"]')?.getAttribute("aria-label") || "").includes(w),
    want,
    { timeout: T },
  );
  result.status = await statusLabel(page);
  result.statusBackground = await page.locator('.statusbar-item[id$="deepseek.status"]').first().evaluate((el) => getComputedStyle(el).backgroundColor);
  result.statusBarBackground = await page.locator(".part.statusbar").first().evaluate((el) => getComputedStyle(el).backgroundColor);
  step("status-shows-profile");
}

/**
 * Edit the user's settings.json in the editor as a person would (Preferences:
 * Open User Settings (JSON), replace, save); the extension sends
 * workspace/didChangeConfiguration and the next plan uses the new value.
 */
async function changeSettingsAndPlanAgain(page) {
  const current = JSON.parse(fs.readFileSync(config.settingsFile, "utf8"));
  await palette(page, "Preferences: Open User Settings (JSON)");
  await page.locator(".tab.active", { hasText: "settings.json" }).waitFor({ timeout: T });
  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(JSON.stringify({ ...current, ...config.thenSettings }));
  await page.keyboard.press("Control+Shift+End"); // drop whatever auto-closing added after the cursor
  await page.keyboard.press("Delete");
  await page.keyboard.press("Control+S");
  // The extension updates the status bar once it has sent workspace/didChangeConfiguration.
  await expectStatus(page, config.thenForced);
  result.settingsSaved = JSON.parse(fs.readFileSync(config.settingsFile, "utf8"));
  step("settings-changed");
  await page.locator(".tab.active .tab-actions .codicon-close").first().click();
  await page.locator(".tab.active", { hasText: path.basename(config.file) }).waitFor({ timeout: T });
  await palette(page, "DeepSeek: Plan…");
  await answerInputBox(page, config.prompt);
  await expectStatus(page, config.thenStatus);
  result.statusAfterChange = result.status;
}

/** Ask: the answer streams into the "DeepSeek Stream" output channel. */
async function ask(page) {
  await palette(page, "DeepSeek: Ask…");
  await answerInputBox(page, config.question);
  await page.waitForFunction(
    (want) => [...document.querySelectorAll(".part.panel .view-lines")].some((v) => v.textContent.replace(/\u00a0/g, " ").includes(want)),
    config.expectAnswer,
    { timeout: T },
  );
  result.answerShown = true;
  step("ask-streamed");
  await shot(page, "ask");
}

// -- the agent panel (a webview view: code-server nests it in two iframes) ---------------------

function panelFrame(page) {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

let panelDoc = null;

/** The frame holding the panel's document (found again after a reload). */
async function findPanelFrame(page) {
  const deadline = Date.now() + T;
  while (Date.now() < deadline) {
    if (panelDoc && !panelDoc.isDetached()) return panelDoc;
    for (const frame of page.frames()) {
      if (await frame.evaluate(() => !!document.getElementById("prompt") && !!document.getElementById("changes")).catch(() => false)) {
        panelDoc = frame;
        return frame;
      }
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`the panel's webview did not appear within ${T} ms`);
}

/** Wait until `fn(arg)`, run in the panel's webview, is truthy; returns its value. */
async function inPanel(page, fn, arg) {
  const frame = await findPanelFrame(page);
  const handle = await frame.waitForFunction(fn, arg, { timeout: T, polling: 50 });
  return handle.jsonValue();
}

async function panelShot(page, name) {
  await shot(page, name);
}

/** The view's badge (pending changes) on the DeepSeek activity-bar icon. */
async function badge(page) {
  return page.evaluate(() => {
    const item = [...document.querySelectorAll(".activitybar .action-item")].find((el) => /DeepSeek/.test(el.querySelector(".action-label")?.getAttribute("aria-label") || ""));
    return item?.querySelector(".badge-content")?.textContent?.trim() || "";
  });
}

/** Wait until the badge says `want` ("" for none); returns it. */
async function badgeShows(page, want) {
  // Bounded by the scenario timeout T like every other wait here: a fixed 100 x 100 ms could
  // run out before a loaded runner's server staged the hunks the badge counts.
  const deadline = Date.now() + T;
  while ((await badge(page)) !== want && Date.now() < deadline) await page.waitForTimeout(100);
  return badge(page);
}

async function openPanel(page) {
  await palette(page, "DeepSeek: Open Agent Panel");
  // The prompt is in the page's HTML before the panel's script runs; the header is filled only once
  // the script has run and the first state arrived. A prompt filled before that was reset by the
  // script (its saved draft) and the click found no listener: the ask was never sent.
  await inPanel(page, () => document.getElementById("prompt") !== null && document.getElementById("header")?.textContent.trim() !== "");
}

async function submitFromPanel(page, text, button) {
  const frame = panelFrame(page);
  await frame.locator("#prompt").fill(text);
  await frame.locator(`.submit button[data-action="${button}"]`).click();
}

async function panelFlow(page) {
  await openFile(page, config.file);
  step("file-open");
  await openPanel(page);
  step("panel-open");
  const frame = panelFrame(page);

  // Ask: the answer streams in as rendered markdown, thinking folded away.
  await submitFromPanel(page, config.question, "ask");
  result.streamed = await inPanel(page, (want) => {
    const live = document.querySelector(".turn.live");
    const text = live?.querySelector(":scope > .md")?.textContent || "";
    return live && text.includes(want) ? { html: live.innerHTML.slice(0, 3000), text } : null;
  }, config.streamedPart);
  step("answer-streaming");
  await panelShot(page, "panel-streaming");
  result.answer = await inPanel(page, (want) => {
    const turn = [...document.querySelectorAll(".turn.assistant:not(.live)")].find((t) => t.textContent.includes(want));
    if (!turn) return null;
    return {
      text: turn.querySelector(":scope > .md")?.textContent || "",
      headings: [...turn.querySelectorAll(".md h1, .md h2, .md h3")].map((h) => h.textContent),
      highlighted: [...turn.querySelectorAll(".md pre code span[class^='hljs-']")].map((s) => s.className),
      codeColour: (() => { const k = turn.querySelector(".md pre code .hljs-keyword"); return k ? getComputedStyle(k).color : null; })(),
      thinkingOpen: turn.querySelector("details.thinking")?.open ?? null,
      thinking: turn.querySelector("details.thinking")?.textContent || "",
      meta: turn.querySelector(".meta")?.textContent || "",
      activeContent: turn.querySelectorAll("script, img, iframe, svg, [onerror], [onload], a[href^='javascript']").length,
      live: document.querySelectorAll(".turn.live").length,
    };
  }, config.expectAnswer);
  result.pwned = await inPanel(page, () => ({ value: window.pwned ?? null }));
  // The answer is on screen in the panel: the "DeepSeek Stream" output channel must not open over it.
  result.streamChannelShown = await page.evaluate(() => {
    const part = document.querySelector(".part.panel");
    const onScreen = !!part && part.offsetParent !== null && part.getBoundingClientRect().height > 0;
    // "[answer]" is the channel's own marker (StreamFormatter), not text of the answer.
    return onScreen && [...part.querySelectorAll(".view-lines")].some((v) => v.textContent.includes("[answer]"));
  });
  step("answer-rendered");
  await frame.locator(".turn.assistant:not(.live) details.thinking summary").last().click();
  await panelShot(page, "panel-answer");

  // Plan: the checklist follows the server's step states.
  await submitFromPanel(page, config.prompt, "plan");
  result.planChecklist = await inPanel(page, () => {
    const steps = [...document.querySelectorAll("#plan li.step")];
    return steps.length ? steps.map((s) => s.querySelector(".title").textContent + " " + s.querySelector(".step-state").textContent) : null;
  });
  step("plan-checklist");
  await panelShot(page, "panel-plan");

  // Run the step from the panel: its hunks appear under Changes, the badge counts them.
  await frame.locator('#plan button[data-action="runStep"]').first().click();
  result.changes = await inPanel(page, () => {
    const hunks = [...document.querySelectorAll("#changes li.hunk")];
    return hunks.length >= 2 ? { files: [...document.querySelectorAll("#changes .file-head code")].map((c) => c.textContent), hunks: hunks.map((h) => h.querySelector("pre.diff").textContent) } : null;
  });
  result.stepWhileReviewing = await inPanel(page, () => document.querySelector("#plan .step-state")?.textContent);
  await page.waitForFunction(() => !!document.querySelector(".activitybar .badge-content"), null, { timeout: T }).catch(() => {});
  result.badgeBefore = await badge(page);
  step("hunks-in-panel");
  await panelShot(page, "panel-changes");

  // Open all changes: VS Code's multi-diff editor.
  await frame.locator('#changes button[data-action="openChanges"]').click();
  await page.locator(".tab", { hasText: "pending changes" }).first().waitFor({ timeout: T });
  result.multiDiffTab = (await page.locator(".tab", { hasText: "pending changes" }).first().textContent()).trim();
  await page.locator(".monaco-editor .view-lines", { hasText: "int(a) - int(b)" }).first().waitFor({ timeout: T });
  step("multi-diff-open");
  await shot(page, "panel-multi-diff");
  await page.locator(".tab.active .tab-actions .codicon-close").first().click();

  // Accept the first hunk and reject the other from the panel.
  await frame.locator('#changes button[data-action="acceptHunk"]').first().click();
  result.afterAccept = await inPanel(page, () => {
    const n = document.querySelectorAll("#changes li.hunk").length;
    return n === 1 ? { hunks: n, count: document.getElementById("changes-count").textContent } : null;
  });
  result.badgeAfterAccept = await badgeShows(page, "1");
  step("hunk-accepted-in-panel");
  await frame.locator('#changes button[data-action="rejectHunk"]').first().click();
  result.afterReject = await inPanel(page, () => (document.querySelectorAll("#changes li.hunk").length === 0 ? document.getElementById("changes").textContent.trim() : null));
  result.badgeAfterReject = await badgeShows(page, "");
  step("hunk-rejected-in-panel");
  await panelShot(page, "panel-decided");

  // Save the file: the step is verified and the checklist says so.
  await page.locator(".tab", { hasText: path.basename(config.file) }).first().click();
  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+S");
  await page.waitForFunction(() => !document.querySelector(".editor-group-container .tab.active.dirty"), null, { timeout: T });
  result.stepAfterSave = await inPanel(page, () => {
    const s = document.querySelector("#plan .step-state")?.textContent || "";
    return /done|failed/.test(s) ? s : null;
  });
  step("step-done-in-panel");
  await panelShot(page, "panel");

  // Sessions: both sessions, newest first, with their state.
  await frame.locator("#section-sessions > summary").click();
  result.sessions = await inPanel(page, () => {
    const rows = [...document.querySelectorAll("#sessions li.session")];
    return rows.length >= 2 ? rows.map((r) => r.querySelector(".session-prompt").textContent + " | " + r.querySelector(".state").textContent) : null;
  });
  step("sessions-listed");

  // A reload rebuilds the panel from the server: conversation, plan and its states.
  await page.reload();
  panelDoc = null;
  await page.locator(".monaco-workbench").waitFor({ timeout: T });
  await page.waitForFunction(
    () => (document.querySelector('.statusbar-item[id$="deepseek.status"]')?.getAttribute("aria-label") || "").includes("(server running)"),
    null,
    { timeout: T },
  );
  await openPanel(page);
  result.afterReload = await inPanel(page, () => {
    const steps = [...document.querySelectorAll("#plan li.step .step-state")].map((s) => s.textContent);
    const turns = [...document.querySelectorAll("#turns .turn")].map((t) => t.querySelector(".who").textContent);
    return steps.length && turns.length ? { steps, turns } : null;
  });
  step("panel-restored-after-reload");
  await panelShot(page, "panel-reloaded");

  // Themes: the panel takes its colours from the theme (light to dark here).
  const colours = () => ({ theme: document.body.className, background: getComputedStyle(document.body).backgroundColor, button: getComputedStyle(document.querySelector(".submit button")).backgroundColor });
  result.themeBefore = await inPanel(page, colours);
  await palette(page, "Preferences: Toggle between Light/Dark Themes");
  result.themeAfter = await inPanel(page, (before) => (document.body.className !== before
    ? { theme: document.body.className, background: getComputedStyle(document.body).backgroundColor, button: getComputedStyle(document.querySelector(".submit button")).backgroundColor }
    : null), result.themeBefore.theme);
  step("panel-follows-theme");
  await panelShot(page, "panel-dark");
}

/**
 * Startup figures: per run a fresh window (its own extension host and server);
 * ms from navigation to the workbench (the baseline), to the extension's
 * status bar item (activated) and to it saying the DeepSeek server runs.
 */
async function startup(browser) {
  result.runs = [];
  for (let i = 0; i < (config.runs ?? 5); i++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const t0 = Date.now();
    await page.goto(config.url, { timeout: T });
    await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: T });
    const workbench = Date.now() - t0;
    await page.locator('.statusbar-item[id$="deepseek.status"]').first().waitFor({ timeout: T });
    const activated = Date.now() - t0;
    await page.waitForFunction(
      () => (document.querySelector('.statusbar-item[id$="deepseek.status"]')?.getAttribute("aria-label") || "").includes("(server running)"),
      null,
      { timeout: T, polling: 20 },
    );
    result.runs.push({ workbench, activated, serverRunning: Date.now() - t0 });
    console.log(`RUN ${i} ${JSON.stringify(result.runs[i])}`);
    await page.close();
  }
}

/** A server that cannot start: the person is told what happened and how to fix it. */
async function broken(page) {
  const toast = page.locator(".notifications-toasts .notification-list-item", { hasText: "DeepSeek:" }).first();
  await toast.waitFor({ state: "visible", timeout: T });
  result.error_message = (await toast.textContent()).trim();
  await page.waitForFunction(
    () => (document.querySelector('.statusbar-item[id$="deepseek.status"]')?.getAttribute("aria-label") || "").includes("(server failed)"),
    null,
    { timeout: T },
  );
  result.status = await statusLabel(page);
  step("start-failure-shown");
  await shot(page, "start-failure");
}

/** Rows of the "DeepSeek Research" tree view (expanded first). */
async function researchRows(page) {
  const header = page.locator(".pane-header", { hasText: "DeepSeek Research" }).first();
  await header.waitFor({ state: "visible", timeout: T });
  if ((await header.getAttribute("aria-expanded")) !== "true") await header.click();
  const rows = page.locator('.split-view-view:has(.pane-header:has-text("DeepSeek Research")) .monaco-list-row');
  return rows;
}

async function hetun(page) {
  await openFile(page, config.file);
  step("file-open");
  await palette(page, "DeepSeek: Hetun…");
  await answerInputBox(page, config.prompt);
  const approve = lens(page, /Approve mission/).first();
  await approve.waitFor({ state: "visible", timeout: T });
  result.missionLenses = await lensTitles(page);
  result.missionTab = (await page.locator(".editor-group-container .tab.active").first().textContent()).trim();
  step("mission-lenses");
  const rows = await researchRows(page);
  await rows.filter({ hasText: "Mission v1" }).first().waitFor({ state: "visible", timeout: T });
  result.treeBefore = (await rows.allTextContents()).map((t) => t.trim());
  step("research-tree");
  await shot(page, "mission");
  await approve.click();
  await lens(page, /Undo mission/).first().waitFor({ state: "visible", timeout: T });
  result.lensesAfterApprove = await lensTitles(page);
  step("mission-approved");
  // The change arrived as workspace/applyEdit in app.py's buffer (dirty, the disk untouched): save it.
  await page.locator(".tab", { hasText: path.basename(config.file) }).first().click();
  await page.locator(".editor-group-container .tab.active.dirty", { hasText: path.basename(config.file) }).waitFor({ timeout: T });
  result.diskBeforeSave = fs.readFileSync(path.join(config.workspace, config.file), "utf8");
  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+S");
  await page.waitForFunction(() => !document.querySelector(".editor-group-container .tab.active.dirty"), null, { timeout: T });
  step("mission-saved");
  await rows.filter({ hasText: "approved" }).first().waitFor({ state: "visible", timeout: T });
  result.treeAfter = (await rows.allTextContents()).map((t) => t.trim());
  step("tree-shows-approved");
  await shot(page, "approved");
}

/** Teammate lanes: toggle from the palette, plan, run step 1: both independent steps come back staged. */
async function lanes(page) {
  await openFile(page, config.file);
  step("file-open");
  await palette(page, "DeepSeek: Toggle Teammate Mode");
  await page.locator(".notifications-toasts .notification-list-item", { hasText: /teammate mode on/ }).first()
    .waitFor({ state: "visible", timeout: T });
  step("teammate-on");
  await palette(page, "DeepSeek: Plan…");
  await answerInputBox(page, config.prompt);
  const stepLens = lens(page, /Step 1/).first();
  await stepLens.waitFor({ state: "visible", timeout: T });
  step("plan-lenses");
  await stepLens.click();
  await lens(page, /lane 1: merged/).first().waitFor({ state: "visible", timeout: T });
  await lens(page, /^Accept$/).first().waitFor({ state: "visible", timeout: T });
  result.laneLenses = await lensTitles(page);
  result.statusTooltip = await page.locator('.statusbar-item[id$="deepseek.status"]').first().getAttribute("aria-label");
  step("lanes-merged");
  await shot(page, "lanes");
}

// -- issue 32 in the editor: code actions, Edit selection, Fix, attention, Rewind to here -------------

/** The active editor's text, line by line in screen order (the files here fit on screen). */
async function editorText(page) {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll(".part.editor .editor-group-container.active .monaco-editor .view-lines .view-line")];
    return lines
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: l.textContent.replace(/\u00a0/g, " ") }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text)
      .join("\n");
  });
}

/** Wait until the active editor's text includes `want` (and, if given, not `unwanted`); returns it. */
async function editorShows(page, want, unwanted) {
  await page.waitForFunction(
    ([w, u]) => {
      const text = [...document.querySelectorAll(".part.editor .editor-group-container.active .monaco-editor .view-lines .view-line")]
        .map((l) => l.textContent.replace(/\u00a0/g, " ")).join("\n");
      return text.includes(w) && !(u && text.includes(u));
    },
    [want, unwanted ?? null],
    { timeout: T },
  );
  return editorText(page);
}

/** Put the cursor at `at`: a line, or "line:column" (both 1-based), as Go to Line does. */
async function gotoLine(page, at) {
  await page.locator(".part.editor .editor-group-container.active .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+G");
  await answerInputBox(page, `:${at}`);
}

/** The rows of VS Code's code action menu (the lightbulb's and Quick Fix's). */
function actionRows(page) {
  return page.locator(".action-widget .monaco-list-row.action");
}

/**
 * On `at` (a line or "line:column"), open VS Code's Quick Fix menu (Ctrl+.), record what it offers
 * and choose `title` with the keyboard (a pointer block covers the menu's rows while it is open).
 * A menu asked before VS Code has the diagnostics' actions at the cursor says "No code actions
 * available": it is asked again (bounded by T); `result.quickFixTries` counts the asks.
 */
async function codeAction(page, at, title) {
  const rows = actionRows(page);
  const none = page.locator(".part.editor .monaco-editor-overlaymessage", { hasText: "No code actions" }).first();
  const deadline = Date.now() + T;
  result.quickFixTries = result.quickFixTries ?? {};
  for (let tries = 1; ; tries++) {
    result.quickFixTries[title] = tries;
    await gotoLine(page, at); // moving the cursor also takes an earlier "No code actions" message away
    await none.waitFor({ state: "hidden", timeout: T });
    await page.keyboard.press("Control+.");
    const row = rows.filter({ hasText: title }).first();
    await Promise.race([row.waitFor({ state: "visible", timeout: T }), none.waitFor({ state: "visible", timeout: T })]);
    if (await row.isVisible()) break;
    if (Date.now() > deadline) throw new Error(`Quick Fix offered no "${title}" on ${at} within ${T} ms`);
    await page.keyboard.press("Escape");
    await page.waitForTimeout(250);
  }
  const offered = await rows.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label") || e.textContent.trim()));
  for (let i = 0; i <= offered.length * 2; i++) {
    const focused = await page.locator(".action-widget .monaco-list-row.action.focused").first().getAttribute("aria-label").catch(() => null);
    if (focused === title) break;
    if (i === offered.length * 2) throw new Error(`could not move to "${title}" in the Quick Fix menu: ${JSON.stringify(offered)}`);
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await page.locator(".action-widget").first().waitFor({ state: "hidden", timeout: T });
  return offered;
}

/** The Problems panel's rows (opened on first use), as text. */
async function problems(page) {
  if (!(await page.locator(".markers-panel").first().isVisible())) {
    await palette(page, "View: Focus Problems");
    await page.locator(".markers-panel").first().waitFor({ state: "visible", timeout: T });
  }
  return (await page.locator(".markers-panel .monaco-list-row").allTextContents()).map((t) => t.trim());
}

/** Wait until `fn(rows of the Problems panel)` holds; returns the rows. */
async function problemsUntil(page, fn, what) {
  const deadline = Date.now() + T;
  let rows = await problems(page);
  while (!fn(rows)) {
    if (Date.now() > deadline) throw new Error(`Problems panel: ${what}; it shows ${JSON.stringify(rows)}`);
    await page.waitForTimeout(100);
    rows = await problems(page);
  }
  return rows;
}

function toast(page, text) {
  return page.locator(".notifications-toasts .notification-list-item", { hasText: text }).first();
}

/**
 * Choose `button` (if given) on the notification saying `text`, as a toast or, once VS Code has hidden the toast
 * (15 s in a focused window, even while the message waits for its answer), in the notification
 * center, where the person finds it then (and where a notification goes while the center is open).
 * Returns its message and its buttons.
 */
async function answerNotification(page, text, button) {
  const center = page.locator(".notifications-center").first();
  // With a button: the notification that has it (an attention notice may quote the same words).
  const withButton = (items) => (button ? items.filter({ has: page.locator(".monaco-button", { hasText: button }) }) : items);
  const inToasts = withButton(page.locator(".notifications-toasts .notification-list-item", { hasText: text })).first();
  const inCenter = withButton(center.locator(".notification-list-item", { hasText: text })).first();
  const deadline = Date.now() + T;
  let item = null;
  while (!item) {
    if (await inToasts.isVisible()) item = inToasts;
    else if (await inCenter.isVisible()) item = inCenter;
    else if (!(await center.isVisible())) {
      await palette(page, "Notifications: Show Notifications");
      await center.waitFor({ state: "visible", timeout: T });
      await page.keyboard.press("Home"); // the newest first: the list may open scrolled to a focused older one
    }
    else if (Date.now() > deadline) throw new Error(`no notification saying "${text}" within ${T} ms`);
    else await page.waitForTimeout(100);
  }
  const said = (await item.locator(".notification-list-item-message").textContent()).trim();
  const buttons = (await item.locator(".monaco-button").allTextContents()).map((t) => t.trim());
  if (button) await item.locator(".monaco-button", { hasText: button }).first().click();
  if (await center.isVisible()) {
    await palette(page, "Notifications: Hide Notifications");
    await center.waitFor({ state: "hidden", timeout: T });
  }
  return { said, buttons };
}

async function saveActive(page) {
  await page.locator(".part.editor .editor-group-container.active .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+S");
  await page.waitForFunction(() => !document.querySelector(".editor-group-container .tab.active.dirty"), null, { timeout: T });
}

/** Clear the notifications (none waits for an answer here), so the center lists only what comes next. */
async function clearNotifications(page) {
  await palette(page, "Notifications: Clear All Notifications");
  await page.locator(".notifications-toasts .notification-list-item").first().waitFor({ state: "hidden", timeout: T });
}

/** The panel resolved once, then out of view (the Explorer in the side bar instead). */
async function panelOutOfView(page) {
  await openPanel(page);
  await palette(page, "View: Show Explorer");
  await page.locator(".part.sidebar .pane-header", { hasText: /Explorer|Folders|ws/i }).first().waitFor({ state: "visible", timeout: T });
}

async function editorActions(page) {
  const ws = config.workspace;
  await panelOutOfView(page);
  step("panel-out-of-view");
  await openFile(page, config.file);
  step("file-open");

  // 2. Edit Selection with DeepSeek…: dismissed once (nothing sent, nothing changed), then answered.
  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+A");
  await palette(page, "DeepSeek: Edit Selection with DeepSeek…");
  await page.waitForFunction(() => {
    const el = document.querySelector(".quick-input-widget input");
    return el && el.offsetParent !== null && !el.value.startsWith(">");
  }, null, { timeout: T });
  result.editPrompt = (await page.locator(".quick-input-widget .quick-input-message, .quick-input-widget input").first().evaluate(
    (el) => el.getAttribute("placeholder") || el.textContent || "")).trim();
  await page.keyboard.press("Escape");
  await page.locator(".quick-input-widget").first().waitFor({ state: "hidden", timeout: T });
  result.afterEditDismissed = { text: await editorText(page), lenses: await lensTitles(page) };
  step("edit-input-dismissed");

  await page.locator(".part.editor .monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+A");
  await palette(page, "DeepSeek: Edit Selection with DeepSeek…");
  await answerInputBox(page, config.instruction);
  // 4. The plan's approval waits while the panel is out of view: a notification with Open panel
  // (deepseek/attention) and the panel's badge counting it, beside VS Code's own approval message.
  const attention = await answerNotification(page, `waits for your approval: Run DeepSeek's plan for: ${config.instruction}`);
  result.editAttention = attention.said;
  result.editAttentionButtons = attention.buttons;
  result.badgeWhileWaiting = await badgeShows(page, "1");
  step("attention-while-approval-waits");
  await shot(page, "edit-approval");
  result.editApproval = (await answerNotification(page, "Run DeepSeek's plan for", "Allow once")).said;
  step("edit-approved");

  // 1. The step's two hunks: diagnostics in Problems, settled from the code action menu.
  result.hunkProblems = await problemsUntil(page, (rows) => rows.filter((r) => r.includes("DeepSeek proposes")).length === 2,
    "two pending-change diagnostics");
  result.badgeWithHunks = await badgeShows(page, "2");
  step("hunk-diagnostics");
  await shot(page, "hunk-problems");
  result.acceptOffered = await codeAction(page, config.acceptLine, config.acceptTitle);
  result.afterAccept = await editorShows(page, config.acceptedText);
  result.problemsAfterAccept = await problemsUntil(page, (rows) => rows.filter((r) => r.includes("DeepSeek proposes")).length === 1,
    "one pending-change diagnostic after the accept");
  step("hunk-accepted-by-code-action");
  result.rejectOffered = await codeAction(page, config.rejectLine, config.rejectTitle);
  result.problemsAfterReject = await problemsUntil(page, (rows) => !rows.some((r) => r.includes("DeepSeek proposes")),
    "no pending-change diagnostic once both hunks are settled");
  // The lenses follow (a refresh after the diagnostics): no Accept / Reject left.
  await page.waitForFunction(() => ![...document.querySelectorAll(".part.editor .monaco-editor .codelens-decoration a")].some((a) => /^(Accept|Reject)/.test(a.textContent.trim())), null, { timeout: T });
  result.lensesAfterSettled = await lensTitles(page);
  result.afterReject = await editorText(page);
  step("hunk-rejected-by-code-action");
  await saveActive(page);
  step("app-saved");
  await shot(page, "hunks-settled");

  // 3. DeepSeek: Fix <message> on another extension's diagnostic (VS Code's JSON support).
  await clearNotifications(page);
  await openFile(page, config.jsonFile);
  result.jsonProblems = await problemsUntil(page, (rows) => rows.some((r) => r.includes(config.jsonMessage)),
    `the JSON extension's "${config.jsonMessage}"`);
  step("json-diagnostic");
  result.fixOffered = await codeAction(page, config.jsonLine, `DeepSeek: Fix ${config.jsonMessage}`);
  result.fixAttention = (await answerNotification(page, "waits for your approval: Run DeepSeek's plan for: fix")).said;
  result.badgeWhileFixWaits = await badgeShows(page, "1");
  result.fixApproval = (await answerNotification(page, "Run DeepSeek's plan for", "Allow once")).said;
  step("fix-approved");
  result.fixProblems = await problemsUntil(page, (rows) => rows.some((r) => r.includes("DeepSeek proposes")),
    "the fix's pending-change diagnostic");
  result.fixAcceptOffered = await codeAction(page, config.jsonLine, config.fixAcceptTitle);
  result.afterFix = await editorShows(page, config.fixedText, config.brokenText);
  result.problemsAfterFix = await problemsUntil(page,
    (rows) => !rows.some((r) => r.includes("DeepSeek proposes") || r.includes(config.jsonMessage)),
    "neither the JSON error nor a pending change once the fix is accepted");
  await saveActive(page);
  result.jsonDiskAfterFix = fs.readFileSync(path.join(ws, config.jsonFile), "utf8");
  step("fix-accepted-and-saved");
  await shot(page, "fixed");

  // 5. Rewind to here on the Fix's prompt in the agent panel: the pick dismissed (nothing sent);
  // Code refused, naming the file (its hunk was accepted in the editor: no checkpoint, docs/agent.md);
  // Conversation: the server's question cancelled (nothing), then confirmed (rewound, with Redo).
  await clearNotifications(page);
  await openPanel(page);
  const frame = panelFrame(page);
  result.rewindPrompt = await inPanel(page, () => {
    const turn = [...document.querySelectorAll("#turns .turn.user")].find((t) => t.querySelector('button[data-action="rewindTo"]'));
    return turn ? turn.querySelector(".md").textContent.trim() : null;
  });
  step("rewind-offered");
  await panelShot(page, "panel-rewind");
  const rewindButton = frame.locator('#turns .turn.user button[data-action="rewindTo"]').first();
  const choice = (label) => page.locator(".quick-input-widget .monaco-list-row", { hasText: new RegExp(`^${label}`) }).first();
  const rewindTo = async (label) => {
    await rewindButton.click();
    await choice(label ?? "Code").waitFor({ state: "visible", timeout: T });
    result.rewindChoices = (await page.locator(".quick-input-widget .monaco-list-row").allTextContents()).map((t) => t.trim());
    if (label) await choice(label).click();
  };
  await rewindTo(null);
  await page.keyboard.press("Escape");
  await page.locator(".quick-input-widget").first().waitFor({ state: "hidden", timeout: T });
  step("rewind-pick-dismissed");

  await rewindTo("Code(?! and)");
  result.codeRewindRefused = (await answerNotification(page, "rewind refused")).said;
  result.jsonDiskAfterRefusal = fs.readFileSync(path.join(ws, config.jsonFile), "utf8");
  step("code-rewind-refused");

  await rewindTo("Conversation");
  result.rewindQuestion = (await answerNotification(page, "Rewind conversation to before this prompt", "Cancel")).said;
  result.rewindDeclined = (await answerNotification(page, "not rewound")).said;
  step("rewind-question-cancelled");

  await rewindTo("Conversation");
  await answerNotification(page, "Rewind conversation to before this prompt", "Rewind");
  const rewound = await answerNotification(page, "DeepSeek: rewound conversation");
  result.rewound = rewound.said;
  result.rewoundButtons = rewound.buttons;
  result.jsonDiskAfterRewind = fs.readFileSync(path.join(ws, config.jsonFile), "utf8");
  step("conversation-rewound");
  await shot(page, "rewound");
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
});
let code = 0;
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.on("console", (m) => {
  if (m.type() === "error" && /deepseek/i.test(m.text())) console.log(`CONSOLE ${m.text().slice(0, 300)}`);
});
try {
  await page.goto(config.url, { timeout: T });
  await page.locator(".monaco-workbench").waitFor({ timeout: T });
  step("workbench");
  if (config.scenario === "startup") {
    await startup(browser);
  } else if (config.scenario === "broken") {
    await broken(page);
  } else if (config.scenario === "hetun") {
    await smoke(page);
    await hetun(page);
  } else if (config.scenario === "lanes") {
    await smoke(page);
    await lanes(page);
  } else if (config.scenario === "panel") {
    await smoke(page);
    await panelFlow(page);
  } else if (config.scenario === "editorActions") {
    await smoke(page);
    await editorActions(page);
  } else if (config.scenario === "cancel") {
    await smoke(page);
    await cancelFlow(page);
  } else {
    await smoke(page);
    if (config.scenario === "flow") await flow(page);
  }
} catch (error) {
  code = 1;
  result.error = String(error && error.stack ? error.stack : error);
  result.lensesAtFailure = await lensTitles(page).catch(() => []);
  result.toasts = await page.$$eval(".notifications-toasts .notification-list-item", (els) => els.map((e) => e.textContent.trim())).catch(() => []);
  await shot(page, "failure").catch(() => {});
  // Toasts hide after a while; the notification center keeps them all.
  result.notificationCenter = await (async () => {
    await page.keyboard.press("Escape");
    await palette(page, "Notifications: Show Notifications");
    await page.locator(".notifications-center").first().waitFor({ state: "visible", timeout: 5000 });
    return page.$$eval(".notifications-center .notification-list-item", (els) => els.map((e) => e.textContent.trim()));
  })().catch((e) => [`(could not read: ${String(e).slice(0, 200)})`]);
} finally {
  console.log(`RESULT ${JSON.stringify(result)}`);
  await browser.close();
}
process.exit(code);

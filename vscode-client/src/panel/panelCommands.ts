/**
 * Palette commands of the agent panel: every panel action is reachable from
 * the keyboard (the hunk at the cursor has Accept/Reject Hunk in commands.ts).
 */
import * as vscode from "vscode";
import { CommandCancelled, CommandFailed, type ServerManager } from "../server";
import type { AgentPanel } from "./agentPanel";

export function registerPanelCommands(panel: AgentPanel, server: ServerManager): vscode.Disposable[] {
  const reg = (id: string, title: string, body: () => Promise<unknown>) =>
    vscode.commands.registerCommand(`deepseek-ls.${id}`, async () => {
      try {
        return await body();
      } catch (error) {
        if (error instanceof CommandFailed || error instanceof CommandCancelled) server.log(`DeepSeek: ${title}: ${error.message}`);
        else void vscode.window.showErrorMessage(`DeepSeek: ${title} failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      }
    });
  return [
    reg("openPanel", "Open Agent Panel", () => panel.focusPrompt()),
    reg("runNextStep", "Run Next Step", () => panel.nextStep(false)),
    reg("skipNextStep", "Skip Next Step", () => panel.nextStep(true)),
    reg("revisePlan", "Revise Plan", () => panel.revisePlan()),
    reg("openAllChanges", "Open All Changes", () => panel.openAllChanges()),
    reg("acceptFile", "Accept File", () => panel.pickAndDecideFile(true)),
    reg("rejectFile", "Reject File", () => panel.pickAndDecideFile(false)),
    reg("setMode", "Set Mode", () => panel.pick("mode")),
    reg("setProfile", "Set Profile", () => panel.pick("profile")),
    reg("addContextFile", "Add File to Context", () => panel.addContextFile()),
  ];
}

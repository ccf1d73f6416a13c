/**
 * Workspace trust as the server reports it (`deepseek.trustStatus`, docs/protocol.md):
 * until the person trusts the workspace, settings that loosen policy — in the repository's
 * `.deepseek/config.toml` and in the editor's settings, which a repository's
 * `.vscode/settings.json` can set — are ignored, and yolo mode refuses to run.
 * Pure (no vscode import), so it is unit-tested.
 */

export interface TrustStatus {
  workspace: string;
  trusted: boolean;
  state: "trusted" | "never" | "changed";
  ignored_workspace_config: string[];
  ignored_editor_settings: string[];
}

/** The notification shown when something is held back because the workspace is not trusted, else undefined. */
export function trustHint(s: TrustStatus): string | undefined {
  if (s.trusted) return undefined;
  const held = [...s.ignored_workspace_config, ...s.ignored_editor_settings.map((k) => `${k} (editor setting)`)];
  if (!held.length) return undefined;
  const why = s.state === "changed" ? "its .deepseek/config.toml changed since you trusted it" : "it is not trusted";
  return `DeepSeek: ignoring settings that loosen policy (${held.join(", ")}) because ${why}. Trust it only if you wrote them.`;
}

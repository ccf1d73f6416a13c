/**
 * MCP servers in VS Code: the rows of `deepseek.mcpStatus` as quick-pick items
 * (pure, unit-tested), shown by "DeepSeek: MCP Servers".
 */

export interface McpTool {
  name: string;
  read_only: boolean;
}

export interface McpServerRow {
  name: string;
  type: string;
  source: string;
  approved: boolean;
  enabled: boolean;
  state: string;
  hint: string | null;
  error: string | null;
  offered?: McpTool[];
}

export interface McpStatus {
  servers: McpServerRow[];
  pending: { name: string; runs: string; source: string }[];
  warnings: string[];
}

export interface McpPickItem {
  label: string;
  description: string;
  detail?: string;
  approve?: boolean;
}

const ICON: Record<string, string> = { ready: "$(pass)", failed: "$(error)", crashed: "$(warning)" };

/** One item per server (state, source, tools), and an "Approve…" item when some wait for approval. */
export function mcpItems(status: McpStatus): McpPickItem[] {
  const items: McpPickItem[] = status.servers.map((s) => {
    const tools = s.offered ?? [];
    const state = s.hint ?? s.state;
    const icon = !s.approved ? "$(shield)" : ICON[s.state] ?? "$(circle-outline)";
    const toolText = tools.map((t) => `${t.name}${t.read_only ? "" : " (asks)"}`).join(", ");
    return {
      label: `${icon} ${s.name}`,
      description: `${state} · ${s.type} · ${s.source}`,
      detail: s.error ? `error: ${s.error}` : toolText || undefined,
    };
  });
  if (status.pending.length) {
    items.push({
      label: "$(shield) Approve the repository's MCP servers…",
      description: status.pending.map((p) => `${p.name}: ${p.runs}`).join("; "),
      approve: true,
    });
  }
  return items;
}

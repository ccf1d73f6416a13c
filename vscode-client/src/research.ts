/**
 * The Hetun research tree and mission as a native tree view ("DeepSeek Research" in the
 * Explorer): a view of `deepseek/plan`'s `hetun` field, refreshed on every `deepseek/status`.
 * The mission itself is decided in its document (Approve mission / Reject / Modify… lenses).
 */
import * as vscode from "vscode";
import { Requests, type ServerApi } from "./protocol";

export interface ResearchNode {
  node_id: string;
  parent_id: string | null;
  kind: string;
  target: string;
  status: string;
  error?: string | null;
  tokens?: number;
  findings?: { text: string; relevance: number; novel?: boolean; verdict?: string; why?: string }[];
}

interface Hetun {
  research?: { nodes?: ResearchNode[]; subqueries?: number; tokens?: number; message?: string; stop_reason?: string };
  mission?: { version: number; goal: string; files: { path: string; actions: string[] }[] };
  decision?: string | null;
}

type Item = { label: string; description?: string; tooltip?: string; children: Item[] };

/** The tree's items from a session's `hetun` view (pure: unit-testable without VS Code). */
export function researchItems(hetun: Hetun | undefined): Item[] {
  if (!hetun) return [];
  const items: Item[] = [];
  const m = hetun.mission;
  if (m) {
    items.push({
      label: `Mission v${m.version}: ${m.goal}`,
      description: { approve: "approved", reject: "rejected", modify: "modified" }[hetun.decision ?? ""] ?? "waiting for approval",
      children: m.files.map((f) => ({ label: f.path, description: f.actions.join("; "), children: [] })),
    });
  }
  const r = hetun.research;
  if (r) {
    const nodes = r.nodes ?? [];
    const byParent = new Map<string | null, ResearchNode[]>();
    for (const n of nodes) byParent.set(n.parent_id, [...(byParent.get(n.parent_id) ?? []), n]);
    const build = (parent: string | null): Item[] =>
      (byParent.get(parent) ?? []).flatMap((n) => {
        if (n.kind === "coordinator") return build(n.node_id);
        const findings: Item[] = (n.findings ?? [])
          .filter((f) => f.novel !== false)
          .map((f) => ({ label: f.verdict && n.kind === "crosscheck" ? `${f.verdict}: ${f.why ?? ""}` : f.text, description: n.kind === "crosscheck" ? "" : f.relevance.toFixed(1), children: [] }));
        return [{ label: `${n.kind} ${n.target}`, description: n.status === "ok" ? `${n.tokens ?? 0} tokens` : `${n.status}: ${n.error ?? ""}`, children: [...findings, ...build(n.node_id)] }];
      });
    items.push({
      label: `Research: ${r.subqueries ?? nodes.length} sub-queries, ${r.tokens ?? 0} tokens`,
      description: r.message || r.stop_reason || "",
      tooltip: r.message,
      children: build(null),
    });
  }
  return items;
}

export class ResearchTree implements vscode.TreeDataProvider<Item>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Item | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private items: Item[] = [];

  constructor(private readonly api: ServerApi, private readonly log: (line: string) => void) {}

  async refresh(sessionId?: string | null): Promise<void> {
    try {
      const shown = await this.api.request<{ hetun?: Hetun } | null>(Requests.plan, sessionId ? { session_id: sessionId } : {});
      this.items = researchItems(shown?.hetun);
    } catch (error) {
      this.log(`DeepSeek: the research tree could not be read: ${String(error)}`);
      return;
    }
    this.changed.fire(undefined);
  }

  getTreeItem(item: Item): vscode.TreeItem {
    const t = new vscode.TreeItem(item.label, item.children.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    t.description = item.description;
    t.tooltip = item.tooltip ?? item.label;
    return t;
  }

  getChildren(item?: Item): Item[] {
    return item ? item.children : this.items;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

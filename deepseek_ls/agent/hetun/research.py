"""The Hetun research phase: recursive novelty sampling over slices of the code.

1. **Seeds**: the request, the repo map and index hits go to a coordinator
   (fast) that picks slices (files, line ranges, symbols) and may write a
   helper block (`runner.py`); without its choice the files the request names
   and the index hits are the slices.
2. **Fan-out**: one fast sub-query per slice, `hetun.parallelism` at a time.
3. **Novelty**: a finding is *new* when it does not repeat an earlier one
   (word overlap); only new findings' follow-ups become the next wave, up to
   `hetun.max_depth` waves deep.
4. **Cross-check**: the most relevant new findings are re-checked on the
   max-think profile against the code they came from (breadth fast, depth slow).
5. **Synthesis**: the nodes form a tree (request → slices → follow-ups,
   cross-checks under what they checked), rendered as a narrative for the planner.

The session's own caps (`budget.max_cost` / `budget.max_tokens`) hold for a helper
block's model calls too: a call that would pass them is refused to the block and the
session pauses with the reason once the block is over.

Budgets (sub-queries, tokens, money, wall time) are checked before every wave
and every wave is cut to what the budget leaves, so the result does not depend
on which parallel answer came first: nodes are recorded in slice order
(`HetunSubQuery@v1`), and replay serves each sub-query's answer by its request.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from deepseek_ls.agent.hetun import prompts
from deepseek_ls.agent.hetun.runner import HelperUnavailable, run_block
from deepseek_ls.config_models import HetunConfig
from deepseek_ls.llm.budget import Tokens, call_cost, price_book_for
from deepseek_ls.policy.errors import PolicyViolation

ROLE_SUB = "hetun.sub"
ROLE_CROSSCHECK = "hetun.crosscheck"
ROLE_COORDINATOR = "hetun.coordinator"
ROLE_HELPER = "hetun.helper"
NOVELTY_OVERLAP = 0.6
_WORD = re.compile(r"[a-z0-9_]+")
_PATHLIKE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8})(?![\w/])")


class BudgetHit(Exception):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass
class Slice:
    target: str
    parent_id: str | None
    depth: int
    kind: str = "slice"


@dataclass
class Node:
    node_id: str
    parent_id: str | None
    kind: str
    target: str
    depth: int = 0
    profile: str | None = None
    status: str = "ok"
    findings: list[dict[str, Any]] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)
    tokens: int = 0
    cost: float | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def event(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "parent_id": self.parent_id, "kind": self.kind, "target": self.target,
                "depth": self.depth, "profile": self.profile, "status": self.status, "findings": self.findings,
                "followups": self.followups, "tokens": self.tokens, "cost": self.cost, "error": self.error,
                **self.extra}


@dataclass
class ResearchResult:
    nodes: list[dict[str, Any]]
    synthesis: str
    stop_reason: str
    budget_hit: str | None
    message: str
    subqueries: int
    tokens: int
    cost: float | None
    seen_chars: dict[str, int]


class ResearchBudget:
    """What the research phase may still spend; `check()` raises `BudgetHit` naming the budget."""

    def __init__(self, cfg: HetunConfig) -> None:
        self.cfg = cfg
        self.subqueries = 0
        self.tokens = 0
        self.cost: float | None = None

    def add(self, tokens: int, cost: float | None) -> None:
        self.subqueries += 1
        self.tokens += tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def check(self) -> None:
        cfg = self.cfg
        if self.subqueries >= cfg.max_subqueries:
            raise BudgetHit("max_subqueries", f"{self.subqueries} of {cfg.max_subqueries} sub-queries used "
                                              "(hetun.max_subqueries)")
        if self.tokens >= cfg.max_tokens:
            raise BudgetHit("max_tokens", f"{self.tokens} of {cfg.max_tokens} tokens used (hetun.max_tokens)")
        if cfg.max_cost is not None and self.cost is not None and self.cost >= cfg.max_cost:
            raise BudgetHit("max_cost", f"{self.cost:.4f} of {cfg.max_cost:g} spent (hetun.max_cost)")

    def room(self) -> int:
        """How many sub-queries the next wave may make: the count budget, and the token and money
        budgets at the average spend per sub-query so far."""
        cfg = self.cfg
        room = cfg.max_subqueries - self.subqueries
        if self.subqueries:
            per_query = max(self.tokens / self.subqueries, 1.0)
            room = min(room, max(int((cfg.max_tokens - self.tokens) // per_query), 1))
            if cfg.max_cost is not None and self.cost:
                per_cost = self.cost / self.subqueries
                room = min(room, max(int((cfg.max_cost - self.cost) // per_cost), 1) if per_cost else room)
        return max(room, 0)


class Researcher:
    def __init__(self, rt: Any, cfg: HetunConfig) -> None:
        self.rt = rt
        self.cfg = cfg
        self.budget = ResearchBudget(cfg)
        self.prices = price_book_for(rt.config)
        self.nodes: list[Node] = []
        self.texts: dict[str, str] = {}  # node_id -> the code it saw (cross-checks re-read it)
        self.seen_chars: dict[str, int] = {}  # path -> characters read (mission estimates)
        self.sem = asyncio.Semaphore(cfg.parallelism)
        self.started = rt.world.clock()
        self.request = ""

    # -- model calls -------------------------------------------------------------

    async def ask(self, role: str, profile: str, system: str, user: str) -> tuple[str, int, float | None]:
        async with self.sem:
            completion = await self.rt.llm.complete(
                [{"role": "system", "content": system}, {"role": "user", "content": user}], role=role, profile=profile,
            )
        usage = completion.usage.model_dump(mode="json") if completion.usage is not None else {}
        tokens = Tokens.from_usage(usage)
        cost = call_cost(tokens, self.prices(completion.model or self.rt.config.llm.profiles[profile].model))
        if profile == "max_think":
            self.rt.router.record_usage(profile, tokens.total, (completion.total_ms or 0.0) / 1000.0)
        return completion.content or "", tokens.total, cost

    def _node(self, kind: str, target: str, parent_id: str | None, depth: int, profile: str | None) -> Node:
        node = Node(f"n{len(self.nodes) + 1}", parent_id, kind, target, depth, profile)
        self.nodes.append(node)
        return node

    def _emit(self, node: Node) -> None:
        self.rt.session.emit("HetunSubQuery@v1", node.event())
        said = f"{len(node.findings)} finding(s)" if node.status == "ok" else f"{node.status}: {node.error}"
        self.rt.ui.stream("status", f"hetun: {node.kind} {node.target}: {said}\n", session_id=self.rt.session_id)

    async def check_budgets(self) -> None:
        self.budget.check()
        self.rt.check_cost_budget()
        if await self.rt.world.clock_over(self.started, self.cfg.max_seconds):
            raise BudgetHit("max_seconds", f"the research ran for more than {self.cfg.max_seconds:g}s (hetun.max_seconds)")

    # -- the phase ----------------------------------------------------------------

    async def run(self, request: str) -> ResearchResult:
        self.request = request
        rt = self.rt
        token = f"deepseek-{rt.session_id}-hetun"
        rt.ui.progress(token, "hetun: researching")
        rt.session.emit("HetunResearchStarted@v1", {"budgets": self.cfg.model_dump(mode="json", exclude={"helper"}),
                                                    "seeds": []})
        stop_reason, hit, message = "done", None, ""
        try:
            repo_map = await rt.world.repo_map(request)
            hits, _ = await rt.world.index_hits(request)
            frontier = await self._seed(request, repo_map, hits)
            await self._fan_out(frontier)
            await self._cross_check()
        except BudgetHit as exc:
            stop_reason, hit = "budget", exc.name
            message = f"Hetun research stopped: {exc}. The mission is based on what was found so far."
            rt.ui.stream("status", message + "\n", session_id=rt.session_id)
        finally:
            rt.ui.progress(token, f"hetun: {self.budget.subqueries} sub-quer(ies)", done=True)
        synthesis = synthesise(request, [n.event() for n in self.nodes])
        result = ResearchResult(
            nodes=[n.event() for n in self.nodes], synthesis=synthesis, stop_reason=stop_reason, budget_hit=hit,
            message=message, subqueries=self.budget.subqueries, tokens=self.budget.tokens, cost=self.budget.cost,
            seen_chars=dict(self.seen_chars),
        )
        rt.session.emit("HetunResearchFinished@v1", {
            "stop_reason": stop_reason, "budget_hit": hit, "message": message, "subqueries": result.subqueries,
            "tokens": result.tokens, "cost": result.cost, "synthesis": synthesis, "seen_chars": result.seen_chars,
        })
        return result

    async def _seed(self, request: str, repo_map: str, hits: str) -> list[Slice]:
        await self.check_budgets()
        node = self._node("coordinator", "request", None, 0, "fast")
        try:
            answer, tokens, cost = await self.ask(
                ROLE_COORDINATOR, "fast", prompts.COORDINATOR_SYSTEM,
                prompts.coordinator_prompt(request, repo_map, hits, self.cfg.max_slices),
            )
        except Exception as exc:  # noqa: BLE001 - an LLM error here is the session's (raised below)
            node.status, node.error = "error", str(exc)[:500]
            self._emit(node)
            raise
        self.budget.add(tokens, cost)
        node.tokens, node.cost = tokens, cost
        chosen, block = prompts.parse_coordinator(answer)
        node.followups = chosen
        self._emit(node)
        if block is not None and self.cfg.helper.enabled:
            await self._helper(block, node.node_id)
        targets = chosen or _seed_targets(request, hits, repo_map)
        return [Slice(t, node.node_id, 0) for t in targets[: self.cfg.max_slices]]

    async def _fan_out(self, frontier: list[Slice]) -> None:
        seen_targets = {s.target for s in frontier}
        seen_findings: list[set[str]] = []
        while frontier:
            await self.check_budgets()
            room = self.budget.room()
            wave, rest = frontier[:room], frontier[room:]
            nodes = [self._node(s.kind, s.target, s.parent_id, s.depth, "fast") for s in wave]
            texts = [await self._slice_text(s.target) for s in wave]  # in order: recorded reads replay in order
            jobs = []
            for node, (text, error) in zip(nodes, texts):
                if error is not None:
                    node.status, node.error = "refused", error
                    jobs.append(None)
                else:
                    self.texts[node.node_id] = text
                    jobs.append(self.ask(ROLE_SUB, "fast", prompts.SUB_SYSTEM, prompts.sub_prompt(self.request, node.target, text)))
            answers = await asyncio.gather(*[j if j is not None else _none() for j in jobs], return_exceptions=True)
            next_frontier: list[Slice] = []
            for node, answer in zip(nodes, answers):
                if node.status == "refused":
                    self._emit(node)
                    continue
                if isinstance(answer, BaseException):
                    if isinstance(answer, asyncio.CancelledError):
                        raise answer
                    node.status, node.error = "error", str(answer)[:500]
                    self._emit(node)
                    continue
                content, tokens, cost = answer  # type: ignore[misc]
                self.budget.add(tokens, cost)
                node.tokens, node.cost = tokens, cost
                node.findings, node.followups = prompts.parse_sub(content)
                novel = False
                for f in node.findings:
                    words = set(_WORD.findall(f["text"].lower()))
                    f["novel"] = all(_overlap(words, old) < NOVELTY_OVERLAP for old in seen_findings)
                    if f["novel"]:
                        seen_findings.append(words)
                        novel = True
                self._emit(node)
                if novel and node.depth < self.cfg.max_depth:
                    for target in node.followups:
                        if target not in seen_targets:
                            seen_targets.add(target)
                            next_frontier.append(Slice(target, node.node_id, node.depth + 1, "followup"))
            if all(n.status == "error" for n in nodes) and nodes and isinstance(answers[0], BaseException):
                raise answers[0]  # every sub-query failed the same way: the model is unreachable
            frontier = rest + next_frontier
            if rest:
                self.budget.check()  # the wave was cut to the budget: say which one

    async def _cross_check(self) -> None:
        if not self.cfg.cross_check:
            return
        candidates = [(f, n) for n in self.nodes if n.kind in ("slice", "followup") and n.status == "ok"
                      for f in n.findings if f.get("novel")]
        candidates.sort(key=lambda fn: -fn[0]["relevance"])  # stable: node order breaks ties
        chosen = candidates[: self.cfg.cross_check]
        if not chosen:
            return
        await self.check_budgets()
        chosen = chosen[: max(self.budget.room(), 0)]
        nodes = [self._node("crosscheck", parent.target, parent.node_id, parent.depth + 1, "max_think") for _, parent in chosen]
        answers = await asyncio.gather(*[
            self.ask(ROLE_CROSSCHECK, "max_think", prompts.CROSSCHECK_SYSTEM,
                     prompts.crosscheck_prompt(self.request, f["text"], parent.target, self.texts.get(parent.node_id, "")))
            for f, parent in chosen
        ], return_exceptions=True)
        for node, (finding, _), answer in zip(nodes, chosen, answers):
            if isinstance(answer, BaseException):
                if isinstance(answer, asyncio.CancelledError):
                    raise answer
                node.status, node.error = "error", str(answer)[:500]
            else:
                content, tokens, cost = answer
                self.budget.add(tokens, cost)
                node.tokens, node.cost = tokens, cost
                verdict, why = prompts.parse_verdict(content)
                finding["verdict"] = verdict
                node.findings = [{"text": finding["text"], "relevance": finding["relevance"], "verdict": verdict, "why": why}]
            self._emit(node)

    async def _helper(self, code: str, parent_id: str) -> None:
        node = self._node("helper", "helper block", parent_id, 0, None)
        node.extra["code"] = code
        host = _Host(self)
        try:
            run = await run_block(code, host, self.cfg.helper, sandbox=getattr(self.rt.world, "sandbox", None))
        except HelperUnavailable as exc:
            node.status, node.error = "refused", str(exc)
            self._emit(node)
            return
        node.findings = list(run.findings)
        if run.ok and run.result is not None:
            node.findings.append({"text": _short(run.result), "relevance": 0.6})
        node.status = "ok" if run.ok else "error"
        node.error = run.error
        node.extra.update(calls=run.calls, output=run.output[:20])
        for f in node.findings:
            f.setdefault("novel", True)
        if host.stopped is not None:
            node.status, node.error = "error", str(host.stopped)[:500]
        self._emit(node)
        if host.stopped is not None:
            raise host.stopped

    async def _slice_text(self, target: str) -> tuple[str, str | None]:
        """The code a slice covers (or why not): `path`, `path:a-b`, `symbol:Name`."""
        world = self.rt.world
        path, first, last = target, 1, self.cfg.slice_lines
        if target.startswith("symbol:"):
            name = target.split(":", 1)[1]
            if not re.fullmatch(r"[A-Za-z_][\w]*", name):
                return "", f"not a symbol name: {name!r}"
            found = await world.call_tool("fs.search_rg", {
                "query": rf"^\s*(export\s+)?(async\s+)?(def|class|function|fn|func|struct|interface|type)\s+{name}\b",
                "limit": 3})
            if not found.get("ok"):
                return "", found.get("error") or f"the search for {name} failed"
            matches = (found.get("value") or {}).get("matches") or []
            if not matches:
                return "", f"no definition of {name} found"
            path, line = matches[0]["path"], int(matches[0]["line"])
            first, last = max(line - 5, 1), line + self.cfg.slice_lines - 5
        else:
            m = re.fullmatch(r"(.+?):(\d+)-(\d+)", target)
            if m:
                path, first, last = m.group(1), int(m.group(2)), min(int(m.group(3)), int(m.group(2)) + self.cfg.slice_lines)
        try:
            text = await world.read_file(path)
        except PolicyViolation as exc:
            return "", f"refused: {exc}"
        if text is None:
            return "", f"{path} does not exist"
        got = text.splitlines()[first - 1: last]
        self.seen_chars[path] = max(self.seen_chars.get(path, 0), len(text))
        numbered = "\n".join(f"{i}: {line}" for i, line in enumerate(got, start=first))
        return f"{path} (lines {first}-{first + len(got) - 1} of {len(text.splitlines())})\n{numbered}", None


class _Host:
    """Serves the helper block's workspace and model helpers: the tool host's policy, the session's log."""

    READ_TOOLS = {"read_file": "fs.read", "read_lines": "fs.read", "list_files": "fs.list",
                  "search": "fs.search_rg", "index_query": "index.query"}

    def __init__(self, researcher: Researcher) -> None:
        self.r = researcher
        # The session's cap stopped one of the block's model calls (`BudgetExceeded`): raised once the
        # block is over, so the whole session pauses, not only the block.
        self.stopped: Exception | None = None

    async def serve(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        world = self.r.rt.world
        if name == "read_file":
            return (await self._tool("fs.read", {"path": _arg(args, kwargs, 0, "path")}))["content"]
        if name == "read_lines":
            value = await self._tool("fs.read", {"path": _arg(args, kwargs, 0, "path"),
                                                 "start_line": int(_arg(args, kwargs, 1, "start")),
                                                 "end_line": int(_arg(args, kwargs, 2, "end"))})
            return value["content"]
        if name == "list_files":
            value = await self._tool("fs.list", {"glob": str(_arg(args, kwargs, 0, "glob", "**")),
                                                 "limit": int(_arg(args, kwargs, 1, "limit", 200))})
            return value.get("files", value)
        if name == "search":
            query = {"query": str(_arg(args, kwargs, 0, "pattern")), "limit": int(_arg(args, kwargs, 2, "limit", 50))}
            glob = _arg(args, kwargs, 1, "glob", None)
            if glob:
                query["globs"] = [str(glob)]
            value = await self._tool("fs.search_rg", query)
            return [{"path": m["path"], "line": m["line"], "text": m.get("text", "")} for m in value.get("matches", [])]
        if name == "index_query":
            value = await self._tool("index.query", {"q": str(_arg(args, kwargs, 0, "q")),
                                                     "top_k": int(_arg(args, kwargs, 1, "top_k", 10))})
            return [{"path": h.get("path"), "score": h.get("score")} for h in value.get("hits", [])]
        if name == "symbols":
            from deepseek_ls.index.languages import language_for
            from deepseek_ls.index.symbols import extract_symbols

            path = str(_arg(args, kwargs, 0, "path"))
            text = (await self._tool("fs.read", {"path": path}))["content"]
            lang = language_for(path) or ""
            return [s.name for s in extract_symbols(lang, text)][:500] if lang else []
        if name == "repo_map":
            return await world.repo_map(self.r.request)
        if name == "ask_fast":
            return await self._ask(str(_arg(args, kwargs, 0, "prompt")), str(_arg(args, kwargs, 1, "context", "")))
        if name == "ask_fast_many":
            prompts_ = _arg(args, kwargs, 0, "prompts")
            if not isinstance(prompts_, list):
                raise ValueError("ask_fast_many takes a list of prompts")
            context = str(_arg(args, kwargs, 1, "context", ""))
            if len(prompts_) > self.r.budget.room():
                raise ValueError(f"{len(prompts_)} prompts exceed the research budget left ({self.r.budget.room()})")
            return await asyncio.gather(*[self._ask(str(p), context, checked=True) for p in prompts_])
        raise ValueError(f"unknown helper {name!r}")

    async def _tool(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        outcome = await self.r.rt.world.call_tool(tool, arguments)
        if not outcome.get("ok"):
            raise ValueError(outcome.get("error") or f"{tool} failed")
        return outcome.get("value") or {}

    async def _ask(self, prompt: str, context: str, *, checked: bool = False) -> str:
        try:
            self.r.rt.check_cost_budget()  # the block's calls are the session's: its caps hold here too
        except Exception as exc:
            self.stopped = self.stopped or exc
            raise ValueError(str(exc)) from None
        if not checked:
            try:
                self.r.budget.check()
            except BudgetHit as exc:
                raise ValueError(f"research budget reached: {exc}") from None
        user = f"{prompt}\n\nContext:\n{context[:20000]}" if context else prompt
        content, tokens, cost = await self.r.ask(ROLE_HELPER, "fast", prompts.HELPER_SYSTEM, user)
        self.r.budget.add(tokens, cost)
        return content


def _arg(args: list[Any], kwargs: dict[str, Any], index: int, name: str, default: Any = ...) -> Any:
    if index < len(args):
        return args[index]
    if name in kwargs:
        return kwargs[name]
    if default is ...:
        raise ValueError(f"missing argument {name!r}")
    return default


async def _none() -> None:
    return None


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text[:500]


def _seed_targets(request: str, hits: str, repo_map: str) -> list[str]:
    """Files the request names, then index hits, then files of the repo map: in that order, once each."""
    out: list[str] = []
    for m in _PATHLIKE.finditer(request):
        out.append(m.group(1))
    for line in hits.splitlines():
        if line.startswith("- "):
            out.append(line[2:].split(" ", 1)[0])
    for line in repo_map.splitlines():
        word = line.strip().split(" ", 1)[0].rstrip(":")
        if _PATHLIKE.fullmatch(word):
            out.append(word)
    return list(dict.fromkeys(out))


def synthesise(request: str, nodes: list[dict[str, Any]]) -> str:
    """The research tree as a narrative: each slice with its findings, follow-ups and cross-checks beneath."""
    children: dict[str | None, list[dict[str, Any]]] = {}
    for n in nodes:
        children.setdefault(n["parent_id"], []).append(n)
    out = [f"Research for: {request}"]

    def walk(parent: str | None, indent: int) -> None:
        for n in children.get(parent, []):
            if n["kind"] == "coordinator":
                walk(n["node_id"], indent)
                continue
            pad = "  " * indent
            label = {"slice": "read", "followup": "followed up", "crosscheck": "cross-checked (max-think)",
                     "helper": "helper block"}.get(n["kind"], n["kind"])
            status = "" if n["status"] == "ok" else f" [{n['status']}: {n.get('error') or ''}]"
            out.append(f"{pad}- {label} {n['target']}{status}")
            for f in n.get("findings", []):
                verdict = f" ({f['verdict']}{': ' + f['why'] if f.get('why') else ''})" if f.get("verdict") and n["kind"] != "crosscheck" else ""
                if n["kind"] == "crosscheck":
                    out.append(f"{pad}  * {f.get('verdict', 'unsure')}: {f.get('why', '')}")
                elif f.get("novel", True):
                    out.append(f"{pad}  * ({f['relevance']:.1f}) {f['text']}{verdict}")
            walk(n["node_id"], indent + 1)

    walk(None, 0)
    return "\n".join(out)

"""Review: the analysis-only path. A change goes in, findings come out; nothing is staged, run or written.

`Reviewer.review(changes)` asks the model about the change piece by piece (`ChangeSet.chunks`:
the whole diff when it fits `review.chunk_tokens`, else file by file), each piece routed on
its own (`role="reviewer"`: a large or risky piece goes to max-think, `RouterDecision@v1`
like every call) with the index hits of the symbols it touches and the project's
instructions, and reads the answer as findings (`review_parse.py`): re-asked once with the
parse error, then escalated once to max-think. Findings that name a file or lines outside
the diff are dropped and counted; each kept finding gets a fingerprint (its file, the text
of its lines, its message: the same finding on the same code has the same one), so a
dismissed finding stays dismissed while the code it names is unchanged.

**Read-only by construction.** The reviewer is given a `ReadOnlyWorld`: index hits, nothing
else — no patch store, no tools, no commands, no writes. The model is offered no tools.
Everything is recorded: `ReviewStarted@v1`, one `ReviewFindings@v1` per piece, the router's
decisions and each `LLMCall@v1` (costed as every call is); replay re-issues the request.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from deepseek_ls.agent import review_prompts as prompts
from deepseek_ls.agent.review_diff import ChangeSet, Chunk, ReviewedFile
from deepseek_ls.agent.review_parse import SEVERITIES, Finding, FindingsAnswer, FindingsParseError, parse_findings
from deepseek_ls.router import RouterDecision, RouterSignals
from deepseek_ls.store.ids import new_id

# Areas of code where a mistake costs most: a piece touching two of them is reviewed on max-think.
RISK_AREAS: dict[str, re.Pattern[str]] = {
    "security": re.compile(r"\b(?:auth\w*|login|passw(?:or)?d|secret|credential\w*|crypt\w*|cipher|hmac|jwt|oauth|"
                           r"csrf|xss|saniti[sz]\w*|permission\w*|privilege\w*|sudo|chmod|certificate|api_?key|"
                           r"access_?token|verify_?ssl)\b", re.IGNORECASE),
    "execution": re.compile(r"\b(?:subprocess|popen|os\.system|shell\s*=\s*True|child_process|eval|exec)\b"),
    "sql": re.compile(r"\b(?:SELECT\s+\S|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|DROP\s+TABLE|ALTER\s+TABLE|"
                      r"cursor\.execute|raw_sql|migrations?)\b", re.IGNORECASE),
    "concurrency": re.compile(r"\b(?:threading|thread|mutex|rwlock|semaphore|atomic\w*|goroutine|"
                              r"concurrent\w*|race|deadlock|Lock\(\))", re.IGNORECASE),
    "memory": re.compile(r"\b(?:unsafe|malloc|free|memcpy|strcpy|transmute|realloc)\b"),
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_COMMON = frozenset("self this that return None True False null true false const static async await import from "
                    "def class function public private void string self. else elif while with pass raise".split())


class ReadOnlyWorld(Protocol):
    """All a review may ask of the workspace: index hits (recorded, replayable). No writes exist here."""

    async def index_hits(self, query: str, top_k: int = 8) -> tuple[str, int]: ...


class ReviewWorld:
    """A `World` narrowed to its reads: what the reviewer is given instead of the world itself."""

    def __init__(self, world: Any) -> None:
        self._index_hits = world.index_hits

    async def index_hits(self, query: str, top_k: int = 8) -> tuple[str, int]:
        return await self._index_hits(query, top_k)


Complete = Callable[..., Awaitable[Any]]  # `SessionRuntime.complete`


@dataclass
class ChunkOutcome:
    findings: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    error: str | None = None


@dataclass
class ReviewResult:
    review_id: str
    source: dict[str, Any]
    files: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    findings: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    dismissed: list[str] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)  # pieces whose answers were never findings
    summaries: list[str] = field(default_factory=list)
    session_id: str | None = None
    note: str = ""  # why nothing was reviewed (no session then)
    routing: list[str] = field(default_factory=list)  # each call's router explanation
    cost: dict[str, Any] = field(default_factory=dict)  # the session's spend (`CostLedger.summary`)

    @property
    def complete(self) -> bool:
        return not self.failed

    def counts(self) -> dict[str, int]:
        by = Counter(f["severity"] for f in self.findings)
        return {s: by.get(s, 0) for s in SEVERITIES}

    def to_json(self) -> dict[str, Any]:
        reasons = Counter(d["reason"] for d in self.dropped)
        return {
            "review_id": self.review_id, "session_id": self.session_id, "source": self.source,
            "files": self.files, "skipped": self.skipped, "findings": self.findings, "counts": self.counts(),
            "dropped": {"count": len(self.dropped), "by_reason": dict(reasons), "findings": self.dropped},
            "dismissed": len(self.dismissed), "failed": self.failed, "complete": self.complete,
            "summary": " ".join(s for s in self.summaries if s), "note": self.note,
            "routing": self.routing, "cost": self.cost,
        }


def fingerprint(file: str, lines: list[str], message: str) -> str:
    """The same finding on the same code: its file, its lines' text and its message, whitespace-normalised."""
    def norm(text: str) -> str:
        return " ".join(text.split())

    basis = "\n".join([file, *(norm(line) for line in lines), norm(message).lower()])
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def risk_areas(chunk: Chunk) -> list[str]:
    """The risk areas (`RISK_AREAS`) the piece's paths and changed lines touch."""
    text = "\n".join([*chunk.paths, *(t for f in chunk.files for h in f.hunks for tag, t in h.body if tag != " ")])
    return [name for name, pattern in RISK_AREAS.items() if pattern.search(text)]


def touched_symbols(chunk: Chunk, limit: int = 12) -> list[str]:
    """The identifiers the changed lines use most: what the index is asked where else they appear."""
    words = Counter(w for f in chunk.files for h in f.hunks for tag, t in h.body if tag != " "
                    for w in _IDENT.findall(t) if w.lower() not in _COMMON)
    return [w for w, _ in words.most_common(limit)]


class Reviewer:
    """Reviews one `ChangeSet` for one session. Given only what a review may use."""

    def __init__(self, *, world: ReadOnlyWorld, complete: Complete, router: Any, sink: Any,
                 system_prompt: str, chunk_tokens: int, files_in_change: int = 0, override: str | None = None,
                 latency_mode: str = "interactive") -> None:
        self.world = world
        self.complete = complete
        self.router = router
        self.sink = sink
        self.system_prompt = system_prompt
        self.chunk_tokens = chunk_tokens
        self.files_in_change = files_in_change
        self.override = override
        self.latency_mode = latency_mode

    async def review(self, changes: ChangeSet, source: dict[str, Any], *, focus: str | None = None,
                     dismissed: frozenset[str] = frozenset()) -> ReviewResult:
        chunks, too_large = changes.chunks(self.chunk_tokens, prompts.render_chunk)
        skipped = [s.to_json() for s in [*changes.skipped, *too_large]]
        result = ReviewResult(new_id(), source, [f.summary() for f in changes.files], skipped)
        self.sink.emit("ReviewStarted@v1", {
            "review_id": result.review_id, "source": source, "files": result.files, "skipped": skipped,
            "changed_lines": changes.changed_lines, "chunks": len(chunks), "focus": focus})
        for number, chunk in enumerate(chunks, start=1):
            outcome = await self._review_chunk(chunk, number, changes, focus)
            kept = [f for f in outcome.findings if f["fingerprint"] not in dismissed]
            gone = [f["fingerprint"] for f in outcome.findings if f["fingerprint"] in dismissed]
            result.findings += kept
            result.dropped += outcome.dropped
            result.dismissed += gone
            result.summaries.append(outcome.summary)
            if outcome.error:
                result.failed.append({"chunk": number, "files": chunk.paths, "error": outcome.error})
            self.sink.emit("ReviewFindings@v1", {
                "review_id": result.review_id, "chunk": number, "of": len(chunks), "files": chunk.paths,
                "findings": kept, "dropped": outcome.dropped, "dismissed": gone, "summary": outcome.summary,
                "error": outcome.error})
        return result

    async def _review_chunk(self, chunk: Chunk, number: int, changes: ChangeSet, focus: str | None) -> ChunkOutcome:
        symbols = touched_symbols(chunk)
        hits = (await self.world.index_hits(" ".join(symbols)))[0] if symbols else ""
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt}]
        if hits.strip():
            messages.append({"role": "user", "content": prompts.INDEX_HITS.format(hits=hits.strip()),
                             "_fit": {"priority": 20, "label": "the index hits"}})
        messages.append({"role": "user", "content": prompts.request_message(chunk, focus)})
        decision = self._route(chunk, number)
        reasked = False
        while True:
            completion = await self.complete(messages, decision, role="reviewer")
            text = completion.content or ""
            try:
                answer = parse_findings(text)
            except FindingsParseError as exc:
                messages += [{"role": "assistant", "content": text},
                             {"role": "user", "content": prompts.reask_message(str(exc))}]
                if not reasked:
                    reasked = True
                    continue
                escalated = self.router.escalate(decision, "INVALID_FINDINGS")
                if escalated is None:
                    return ChunkOutcome(error=f"the model's answer was not findings, after a re-ask and on "
                                              f"{_profile_name(decision)}: {exc}")
                decision = escalated
                continue
            return _screen(answer, chunk, changes)

    def _route(self, chunk: Chunk, number: int) -> RouterDecision:
        return self.router.decide(
            RouterSignals(role="reviewer", files_touched=self.files_in_change or len(chunk.files),
                          diff_lines=chunk.changed_lines, risk_areas=risk_areas(chunk),
                          latency_mode=self.latency_mode,  # type: ignore[arg-type]
                          override=self.override),  # type: ignore[arg-type]
            unit=f"reviewer:{number}",
        )


def _profile_name(decision: RouterDecision) -> str:
    return "max-think" if decision.profile == "max_think" else "the fast profile (max-think was not available)"


def _screen(answer: FindingsAnswer, chunk: Chunk, changes: ChangeSet) -> ChunkOutcome:
    """Keep the findings inside this piece of the diff, fingerprinted; drop (and say why) the others."""
    out = ChunkOutcome(summary=answer.summary.strip())
    in_chunk = {f.path: f for f in chunk.files}
    seen: set[str] = set()
    for finding in answer.findings:
        target = _match(finding.file, in_chunk)
        reason = None
        if target is None:
            reason = "outside_diff" if changes.file(finding.file) is None else "outside_chunk"
        elif not target.covers(finding.start_line, finding.end_line):
            reason = "outside_diff"
        if reason is not None:
            out.dropped.append({**finding.model_dump(mode="json"), "reason": reason})
            continue
        assert target is not None
        record = _record(finding, target)
        if record["fingerprint"] in seen:
            out.dropped.append({**finding.model_dump(mode="json"), "reason": "duplicate"})
            continue
        seen.add(record["fingerprint"])
        out.findings.append(record)
    return out


def _match(name: str, files: dict[str, ReviewedFile]) -> ReviewedFile | None:
    if name in files:
        return files[name]
    for prefix in ("a/", "b/", "./"):
        if name.startswith(prefix) and name[len(prefix):] in files:
            return files[name[len(prefix):]]
    return None


def _record(finding: Finding, target: ReviewedFile) -> dict[str, Any]:
    lines = target.lines()
    text = [lines[n] for n in range(finding.start_line, finding.end_line + 1) if n in lines]
    record = finding.model_dump(mode="json")
    record["file"] = target.path
    record["fingerprint"] = fingerprint(target.path, text, finding.message)
    record["id"] = record["fingerprint"][:12]
    record["side"] = target.side
    fix, why = _check_fix(finding.suggested_fix, target)
    record["suggested_fix"] = fix
    if why:
        record["fix_dropped"] = why
    return record


def _check_fix(diff: str | None, target: ReviewedFile) -> tuple[str | None, str | None]:
    """A suggested fix is kept when it is a readable diff of the finding's file alone (it is staged,
    and checked against the buffer, only when the person applies it)."""
    if diff is None:
        return None, None
    if target.status == "deleted":
        return None, "the file is deleted by the change"
    from deepseek_ls.patch.model import PatchError
    from deepseek_ls.patch.parse import parse_diff

    try:
        files = parse_diff(diff)
    except PatchError as exc:
        return None, f"not a unified diff: {exc}"
    paths = {p for f in files for p in (f.old_path, f.new_path) if p}
    if paths != {target.path}:
        return None, f"it changes {', '.join(sorted(paths)) or 'no file'}, not only {target.path}"
    return diff, None



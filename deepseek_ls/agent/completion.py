"""Inline completion: one editor's suggestions from the model's fill-in-the-middle endpoint.

`InlineCompleter.suggest(request)` answers one editor request with the text to insert at the
cursor, or None. Around the FIM call (`llm/fim.py`) it keeps what makes completion cheap:

- **reuse**: typing through a shown suggestion (the new text before the cursor is the old one
  plus a start of the suggestion, the text after it unchanged) answers the rest of that
  suggestion at once, without a request;
- **debounce and supersede**: a request waits `debounce_ms` before asking; a newer request
  cancels the older one, during its wait (nothing sent) or during its HTTP exchange (the
  connection closes, so no tokens are paid for a suggestion nobody will see). The editor's
  own `$/cancelRequest` cancels the same way;
- **cost**: every call lands in this completer's `CostLedger` (role `inline`), priced with the
  configuration's price book;
- **availability**: off by setting, or off by itself when the model has no FIM endpoint or no
  key — said once through `tell`, not on every keystroke;
- **never sent**: a buffer the policy hides from the model (`completion_context.hidden_reason`);
  and what is sent goes through the request redaction of `llm/fim.py`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepseek_ls.agent import completion_context as context
from deepseek_ls.config_models import Config
from deepseek_ls.llm.budget import CostLedger, price_book_for
from deepseek_ls.llm.errors import LLMError
from deepseek_ls.llm.fim import FimClient, FimRequest
from deepseek_ls.llm.profiles import ResolvedProfile
from deepseek_ls.policy import PathPolicy
from deepseek_ls.policy.secret_files import HEAD_BYTES

log = logging.getLogger("deepseek_ls.agent")

Search = Callable[[str, int], list[tuple[str, str]]]
_HIT_CACHE = 64  # index searches remembered by query: identifiers near the cursor change slowly
PATH_RECHECK_SECONDS = 2.0  # a buffer's location is judged again this often (a symlink can be swapped)


@dataclass(frozen=True)
class CompletionRequest:
    """One editor request: the buffer as the person sees it and the cursor in it (code points)."""

    path: str | None  # workspace-relative; None outside the workspace
    text: str
    offset: int


@dataclass
class _Shown:
    path: str | None
    before: str
    after: str
    completion: str


@dataclass
class CompletionStats:
    """What happened to the editor's requests (the bench and `deepseek/inlineCompletionStatus` read it)."""

    requests: int = 0  # editor requests
    sent: int = 0  # FIM requests sent to the model
    answered: int = 0  # FIM answers received
    cancelled_in_flight: int = 0  # sent, then cancelled before their answer (connection closed)
    superseded_before_send: int = 0  # cancelled while debouncing: nothing sent
    reused: int = 0  # answered from a shown suggestion, no request
    hidden: int = 0  # buffers never sent (policy)
    errors: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _LedgerSink:
    ledger: CostLedger

    def emit(self, kind: str, payload: Any) -> None:
        self.ledger.fold(kind, payload)


class InlineCompleter:
    """Suggestions for one editor connection (see the module docstring)."""

    def __init__(self, config: Config, root: Path, *, fim: FimClient | None = None,
                 tell: Callable[[str], None] = log.warning, ledger: CostLedger | None = None,
                 stats: CompletionStats | None = None) -> None:
        self.config = config
        self.root = root
        # Kept across settings changes by the adapter (one ledger per connection), priced anew.
        self.ledger = ledger or CostLedger()
        self.ledger.prices = price_book_for(config)
        self.fim = fim or FimClient(config.llm, sink=_LedgerSink(self.ledger))
        if fim is not None:
            fim.sink = _LedgerSink(self.ledger)
        self.tell = tell
        self.stats = stats or CompletionStats()
        self.policy = PathPolicy(root, config.policy.deny_paths)  # built once: compiling the deny-list takes ms
        self.search: Search | None = None  # related code (the index), set by the adapter when there is one
        self._said: set[str] = set()
        self._shown: _Shown | None = None
        self._resolved: ResolvedProfile | None = None
        self._path_memo: tuple[str | None, float, str | None] | None = None  # path, when, verdict
        self._head_memo: tuple[str, str | None] | None = None  # buffer head, verdict
        self._pending: asyncio.Task[str | None] | None = None
        self._hits: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()

    async def aclose(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
        await self.fim.aclose()

    # -- availability ------------------------------------------------------
    def availability(self) -> tuple[bool, str | None, str | None]:
        """(on, why it is off, the model id it uses)."""
        settings = self.config.inline_completion
        if not settings.enabled:
            return False, "inline_completion.enabled is false", None
        try:
            resolved = self._resolve()
        except LLMError as exc:
            return False, exc.user_message, None
        entry = resolved.entry
        if entry is None or not entry.fim:
            name = resolved.entry_name or resolved.model
            return False, (f"the model {resolved.model} has no fill-in-the-middle endpoint (fim = false in "
                           f"[models.{name}]); set inline_completion.model to one that has, or "
                           f"fim = true if yours does"), resolved.model
        return True, None, resolved.model

    def _resolve(self) -> ResolvedProfile:
        """The FIM profile, resolved once per completer (its settings are fixed: a change makes a
        new completer); a failure (no key) is not remembered, and raises again next time."""
        if self._resolved is None:
            settings = self.config.inline_completion
            self._resolved = self.fim.resolve(settings.profile, settings.model)
        return self._resolved

    def _say_once(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self.tell(message)

    # -- requests ------------------------------------------------------------
    async def suggest(self, request: CompletionRequest) -> str | None:
        """The text to insert at the cursor, or None (nothing to suggest, or off: said once)."""
        self.stats.requests += 1
        on, why, _ = self.availability()
        if not on:
            if why and self.config.inline_completion.enabled:
                self._say_once(f"deepseek-ls: inline completion is off: {why}.")
            return None
        reused = self._reuse(request)
        if reused is not None:
            self.stats.reused += 1
            return reused
        hidden = self._hidden(request)
        if hidden is not None:
            self.stats.hidden += 1
            log.info("inline completion: %s is never sent to the model: %s", request.path or "this buffer", hidden)
            return None
        previous, task = self._pending, asyncio.ensure_future(self._ask(request))
        self._pending = task
        if previous is not None and not previous.done():
            previous.cancel()  # a newer request: the older one's suggestion would never be seen
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the editor cancelled this request ($/cancelRequest), or the server is stopping
            return None  # superseded by a newer request
        finally:
            if self._pending is task:
                self._pending = None

    def _hidden(self, request: CompletionRequest) -> str | None:
        """`completion_context.hidden_reason`, its parts remembered: the location's for a couple of
        seconds (resolving it walks the file system), the content's for the buffer's head (looking
        at the head of a large buffer for credential shapes on every keystroke costs tens of ms)."""
        now = time.monotonic()
        memo = self._path_memo
        if memo is None or memo[0] != request.path or now - memo[1] > PATH_RECHECK_SECONDS:
            memo = self._path_memo = (request.path, now, context.path_reason(self.policy, request.path))
        if memo[2] is not None:
            return memo[2]
        head = request.text[:HEAD_BYTES]
        if self._head_memo is None or self._head_memo[0] != head:
            self._head_memo = (head, context.content_reason(request.text))
        return self._head_memo[1]

    def _reuse(self, request: CompletionRequest) -> str | None:
        shown = self._shown
        if shown is None or shown.path != request.path:
            return None
        before, after = request.text[: request.offset], request.text[request.offset :]
        if after != shown.after or not before.startswith(shown.before):
            return None
        typed = before[len(shown.before) :]
        if typed and shown.completion.startswith(typed) and len(typed) < len(shown.completion):
            return shown.completion[len(typed) :]
        return None

    async def _ask(self, request: CompletionRequest) -> str | None:
        settings = self.config.inline_completion
        sent = False
        try:
            if settings.debounce_ms:
                await asyncio.sleep(settings.debounce_ms / 1000)
            resolved = self._resolve()
            snippets = await self._snippets(request)
            win = context.window(request.text, request.offset, request.path or "",
                                 context_tokens=settings.context_tokens, snippets=snippets)

            def mark_sent() -> None:
                nonlocal sent
                sent = True
                self.stats.sent += 1

            answer = await self.fim.complete(
                resolved, FimRequest(win.prefix, win.suffix, settings.max_tokens, win.snippets, win.comment),
                timeout=settings.timeout_seconds, on_sent=mark_sent)
        except asyncio.CancelledError:
            if sent:
                self.stats.cancelled_in_flight += 1
            else:
                self.stats.superseded_before_send += 1
            raise
        except LLMError as exc:
            self.stats.errors += 1
            log.warning("inline completion failed: %s", exc.user_message)
            self._say_once(f"deepseek-ls: inline completion failed: {exc.user_message}")
            return None
        self.stats.answered += 1
        text = answer.text.rstrip()
        if not text.strip():
            return None
        self._shown = _Shown(request.path, request.text[: request.offset], request.text[request.offset :], text)
        return text

    async def _snippets(self, request: CompletionRequest) -> tuple[tuple[str, str], ...]:
        count = self.config.inline_completion.index_hits
        if self.search is None or count == 0:
            return ()
        words = context.identifiers_near(request.text[: request.offset])
        if not words:
            return ()
        query = " ".join(words)
        if query not in self._hits:
            try:
                found = await asyncio.to_thread(self.search, query, count + 1)  # one may be this file
            except Exception as exc:  # noqa: BLE001 - no related code this time; said in the log, once
                self._say_once(f"deepseek-ls: inline completion goes without related code: the index "
                               f"could not be searched ({exc})")
                found = []
            self._hits[query] = found
            while len(self._hits) > _HIT_CACHE:
                self._hits.popitem(last=False)
        return tuple(hit for hit in self._hits[query] if hit[0] != request.path)[:count]

    def status(self) -> dict[str, Any]:
        """JSON for `deepseek/inlineCompletionStatus`: on or off and why, the counts, the spend."""
        on, why, model = self.availability()
        return {"enabled": on, "reason": why, "model": model, "stats": self.stats.to_json(),
                "cost": self.ledger.total().to_json()}

"""`SessionStore`: where a workspace's sessions live and how to start, find and list them.

Layout: ``<state_dir>/sessions/<session_id>/events.jsonl`` with UUIDv7 ids, so
the directory listing is in creation order, and beside each log the sealed marker
`session.seal` (`store/provenance.py`): only sessions whose marker verifies are
listed, opened or resumed; the others (planted by a repository, another user's,
made before markers, sealed in another workspace, altered) are `ignored()` and asking
for one raises `NotOurSession`. The person can vouch for one (`adoptable`, then `adopt`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from deepseek_ls.store import provenance
from deepseek_ls.store.provenance import NotOurSession  # noqa: F401 - raised by resolve()/open()
from deepseek_ls.store.ids import is_id, new_id
from deepseek_ls.store.log import EventLog, SessionNotFound
from deepseek_ls.store.projections import LOG_NAME, SESSIONS_DIR, Projections


_log = logging.getLogger(__name__)
_warned: set[tuple[str, str]] = set()


class IgnoredSession(BaseModel):
    """A session directory that is not ours, and why (`provenance.why_not_ours`)."""

    session_id: str
    reason: str

    @property
    def hint(self) -> str:
        """How the person makes it theirs if they trust it."""
        return provenance.adopt_hint(self.session_id)


class SessionSummary(BaseModel):
    session_id: str
    created_at: str | None = None
    updated_at: str | None = None
    workspace_root: str | None = None
    mode: str | None = None
    prompt: str | None = None
    state: str = "Idle"
    event_count: int = 0
    last_seq: int = 0
    active_plan_id: str | None = None
    last_failure: str | None = None  # class of the last failure (FailureClassified, or the error of a Failed session)
    error: str | None = None  # why a Failed session failed
    state_reason: str | None = None  # the reason given with the last state change (why it is Paused, ...)
    log_error: str | None = None  # set when the log could not be projected past some line
    cost: dict | None = None  # `llm.budget.Spend.to_json()` of the session's calls (`llm.budget.price_sessions`)


class SessionStore:
    def __init__(self, state_dir: Path, *, durable: bool = True) -> None:
        self.state_dir = Path(state_dir)
        self.sessions_dir = self.state_dir / SESSIONS_DIR
        self._durable = durable

    @staticmethod
    def new_session_id() -> str:
        return new_id()

    def log_path(self, session_id: str) -> Path:
        return self.sessions_dir / session_id / LOG_NAME

    def create(
        self,
        workspace_root: Path | str,
        mode: str = "agent",
        prompt: str | None = None,
        *,
        baseline_commit: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> EventLog:
        """Start a session: a new log whose first event is `SessionCreated@v1` (`extra`: more fields,
        e.g. `driver` and `parent_session_id` of a teammate lane)."""
        session_id = self.new_session_id()
        log = EventLog(self.log_path(session_id), session_id, durable=self._durable)
        log.append(
            "SessionCreated@v1",
            {
                "workspace_root": str(workspace_root),
                "mode": mode,
                "prompt": prompt,
                "baseline_commit": baseline_commit,
                **(extra or {}),
            },
        )
        try:
            provenance.seal_session(log.path.parent, session_id, durable=self._durable)
        except BaseException:
            log.close()
            raise
        return log

    def open(self, session_id: str) -> EventLog:
        """The log of an existing session; a unique id prefix is enough."""
        session_id = self.resolve(session_id)
        return EventLog(self.log_path(session_id), session_id, durable=self._durable)

    def resolve(self, id_or_prefix: str) -> str:
        """Full session id for an id or a unique prefix of one; `SessionNotFound` otherwise."""
        text = id_or_prefix.strip().lower()
        if is_id(text) and self.log_path(text).is_file():
            why = provenance.why_not_ours(self.sessions_dir / text, text)
            if why is None:
                return text
            raise provenance.not_ours(text, why)
        matches = [sid for sid in self._ids() if text and sid.startswith(text)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            planted = [s for s in self.ignored() if text and s.session_id.startswith(text)]
            if len(planted) == 1:
                raise provenance.not_ours(planted[0].session_id, planted[0].reason)
            raise SessionNotFound(
                f"no session {id_or_prefix!r} in {self.sessions_dir}; `deepseek-ls sessions` lists them"
            )
        raise SessionNotFound(
            f"{id_or_prefix!r} matches {len(matches)} sessions ({', '.join(matches[:3])}, ...); "
            "give more of the id"
        )

    def adoptable(self, id_or_prefix: str) -> provenance.Adoptable:
        """The ignored session `id_or_prefix` names (a unique prefix is enough), as `adopt` would
        seal it: shown to the person first. `CannotAdopt` when it is ours already or damaged."""
        text = id_or_prefix.strip().lower()
        matches = [sid for sid in self._candidates() if text and sid.startswith(text)]
        if text in matches:
            matches = [text]
        if len(matches) != 1:
            raise SessionNotFound(
                f"no session {id_or_prefix!r} in {self.sessions_dir}" if not matches else
                f"{id_or_prefix!r} matches {len(matches)} sessions ({', '.join(matches[:3])}, ...); give more of the id"
            )
        return provenance.adoptable(self.sessions_dir / matches[0], matches[0])

    def adopt(self, found: provenance.Adoptable) -> Path:
        """Seal the session `found` (from `adoptable`, confirmed by the person) as theirs here;
        returns the audit file the adoption was recorded in."""
        return provenance.adopt(self.sessions_dir / found.session_id, found)

    def _candidates(self) -> list[str]:
        if not self.sessions_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.sessions_dir.iterdir() if is_id(p.name) and (p / LOG_NAME).is_file()
        )

    def _partition(self) -> tuple[list[str], list[IgnoredSession]]:
        ours, ignored = [], []
        for sid in self._candidates():
            why = provenance.why_not_ours(self.sessions_dir / sid, sid)
            if why is None:
                ours.append(sid)
            else:
                ignored.append(IgnoredSession(session_id=sid, reason=why))
        return ours, ignored

    def _ids(self) -> list[str]:
        """The ids of the sessions this user's deepseek-ls created here, oldest first."""
        return self._partition()[0]

    def ignored(self) -> list[IgnoredSession]:
        """The session logs in this workspace that are not ours, oldest first, with the reason."""
        return self._partition()[1]

    def list(self, *, warn: bool = True) -> list[SessionSummary]:
        """Every session of ours, newest first, from the projections (brought up to date first).

        With `warn`, sessions that are not ours are logged once per process (a caller that names
        them itself, like `deepseek-ls sessions`, passes False).
        """
        ours, ignored = self._partition()
        fresh = [p for p in ignored if warn and (str(self.sessions_dir), p.session_id) not in _warned]
        if fresh:  # one line per listing with new ones (the editor's log, not a flood)
            _warned.update((str(self.sessions_dir), p.session_id) for p in fresh)
            named = "; ".join(f"{p.session_id}: {p.reason}" for p in fresh[:3])
            more = f" (and {len(fresh) - 3} more)" if len(fresh) > 3 else ""
            _log.warning("ignoring %d session(s) in %s not written by you: %s%s (one you know to be yours: "
                         "`deepseek-ls sessions --adopt ID`)", len(fresh), self.sessions_dir, named, more)
        if not ours:
            return []
        with Projections(self.state_dir) as projections:
            projections.sync()
            return [SessionSummary.model_validate(row) for row in projections.sessions()]

    def llm_calls(self) -> list[dict[str, Any]]:
        """Every projected model call of our sessions (`Projections.llm_calls`), for a caller that
        prices them (`llm.budget.price_sessions`: the store knows no prices)."""
        if not self._ids():
            return []
        with Projections(self.state_dir) as projections:
            projections.sync()
            return projections.llm_calls()

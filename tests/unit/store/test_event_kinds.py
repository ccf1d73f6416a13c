"""Every event kind: any payload its model accepts is appended, read back unchanged, and projected."""

from __future__ import annotations

import math
import typing
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from deepseek_ls.store.events import KINDS
from deepseek_ls.store.projections import Projections
from deepseek_ls.store.sessions import SessionStore

# JSON values, with the keys the projector looks for so their odd shapes get tried too.
KEYS = st.sampled_from(["steps", "step_id", "plan_id", "version", "hunk_id", "id", "file", "status", "done", "x"])
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
                    max_leaves=12)
OBJECT = st.dictionaries(KEYS, JSON, max_size=5)


def _strategy_for(annotation: typing.Any) -> st.SearchStrategy | None:
    """Strategies for the fields hypothesis cannot build on its own (those holding `Any`)."""
    text = repr(annotation)
    if "Any" not in text:
        return None
    if typing.get_origin(annotation) is list:
        return st.lists(OBJECT if "dict" in text else JSON, max_size=3)
    if typing.get_origin(annotation) is dict:
        return OBJECT
    return JSON


def _fits_sqlite(value: typing.Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)  # NaN/Infinity are refused (tested in test_event_log.py)
    if isinstance(value, bool) or not isinstance(value, (int, dict, list)):
        return True
    if isinstance(value, int):
        return -(2**63) <= value + 1 < 2**63  # +1: a revision numbers itself previous_version + 1
    items = value.values() if isinstance(value, dict) else value
    return all(_fits_sqlite(item) for item in items)


def payloads(model) -> st.SearchStrategy:
    overrides = {}
    for name, field in model.model_fields.items():
        strategy = _strategy_for(field.annotation)
        if strategy is not None:
            overrides[name] = strategy
    return st.builds(model, **overrides).map(lambda m: m.model_dump(mode="json"))


ANY_EVENT = st.sampled_from(sorted(KINDS)).flatmap(lambda kind: payloads(KINDS[kind]).map(lambda p: (kind, p)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(ANY_EVENT, min_size=1, max_size=25))
def test_any_valid_payload_of_any_kind_round_trips_and_projects(tmp_path_factory, events):
    assume(all(_fits_sqlite(payload) for _, payload in events))  # 64-bit integers, finite floats
    state_dir: Path = tmp_path_factory.mktemp("state")
    with SessionStore(state_dir, durable=False).create("/ws", "agent", "x") as log:
        for kind, payload in events:
            log.append(kind, payload)
        read = [(e.kind, e.payload) for e in log.read()[1:]]
        sid = log.session_id
    assert read == [(kind, KINDS[kind].model_validate(p).model_dump(mode="json")) for kind, p in events]
    with Projections(state_dir) as projections:
        projections.sync()
        session = projections.dump_session(sid)["session"]
    assert session["log_error"] is None, session["log_error"]
    assert session["event_count"] == len(events) + 1


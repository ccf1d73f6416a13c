import pytest

from deepseek_ls.config_models import Config, RouterConfig
from deepseek_ls.router import MaxThinkBudget, Router, RouterSignals, explain
from deepseek_ls.sink import ListSink
from deepseek_ls.store.events import RouterDecision as RouterDecisionPayload

COMPLEX = (
    "Design the architecture for deterministic replay: it must guarantee the same plans across "
    "src/store/log.py, src/agent/session.py, src/agent/replay.py and src/router.py; refactor the state machine."
)
SMALL = "Fix the typo in README.md"


def make(router_cfg: RouterConfig | None = None, budget: MaxThinkBudget | None = None):
    cfg = Config()
    sink = ListSink()
    return Router(router_cfg or cfg.router, cfg.llm.profiles, sink=sink, budget=budget), sink


def test_complex_multi_file_planning_request_gets_max_think():
    router, sink = make()
    d = router.decide(RouterSignals(prompt=COMPLEX, role="planner"))
    assert d.profile == "max_think" and d.model == "deepseek-v4-pro"
    assert d.score >= d.threshold
    assert "PLANNING_KEYWORDS" in d.reason_codes and "MULTI_FILE" in d.reason_codes
    kind, payload = sink.events[-1]
    assert kind == "RouterDecision@v1"
    RouterDecisionPayload.model_validate(payload)
    assert payload["score"] == pytest.approx(sum(payload["contributions"].values()), abs=1e-3)


def test_small_request_stays_fast():
    router, _ = make()
    d = router.decide(RouterSignals(prompt=SMALL, role="planner"))
    assert d.profile == "fast" and "SCORE_BELOW_THRESHOLD" in d.reason_codes


def test_executor_is_less_likely_than_planner():
    router, _ = make()
    planner = router.decide(RouterSignals(prompt=COMPLEX, role="planner"))
    executor = router.decide(RouterSignals(prompt=COMPLEX, role="executor"))
    assert executor.score < planner.score and executor.profile == "fast"


def test_chinese_planning_and_constraint_keywords_count():
    router, _ = make()
    zh = router.features(RouterSignals(prompt="请规划并分解这个多步骤迁移，必须保证兼容", role="planner"))
    none = router.features(RouterSignals(prompt="请修复这个拼写错误", role="planner"))
    assert zh["planning_request"] == 1.0 and none["planning_request"] == 0.0
    assert zh["prompt_complexity"] > none["prompt_complexity"]


def test_repeated_failures_push_executor_to_max_think_and_explain_says_why():
    router, _ = make()
    d = router.decide(
        RouterSignals(prompt="fix", role="executor", files_touched=3, verification_failures=2,
                      failure_class="RepeatedVerifyFailure")
    )
    assert d.profile == "max_think"
    text = explain(d)
    assert text.startswith("max-think: ")
    assert "3 files touched (+0.24)" in text and "test failed twice (+0.15)" in text
    assert f"score {d.score:.2f} ≥ 0.72" in text


def test_one_escalation_per_unit():
    router, sink = make()
    d = router.decide(RouterSignals(prompt=SMALL, role="planner"), unit="planner")
    up = router.escalate(d, "INVALID_PLAN")
    assert up is not None and up.profile == "max_think" and up.escalation
    assert "RouterEscalation@v1" in sink.kinds()
    again = router.decide(RouterSignals(prompt=SMALL, role="planner"), unit="planner")
    assert router.escalate(again, "INVALID_PLAN") is None
    assert router.escalate(up, "INVALID_PLAN") is None  # already max-think


def test_budget_exhausted_keeps_fast_and_says_so():
    router, _ = make(budget=MaxThinkBudget(max_tokens=1000, max_seconds=None))
    router.record_usage("max_think", 1200, 1.0)
    d = router.decide(RouterSignals(prompt=COMPLEX, role="planner"))
    assert d.profile == "fast" and "MAX_THINK_BUDGET_EXHAUSTED" in d.reason_codes
    assert "budget spent (1200/1000 tokens)" in explain(d)
    assert router.escalate(router.decide(RouterSignals(prompt=SMALL)), "INVALID_PLAN") is None


def test_budget_restored_from_events():
    router, _ = make(budget=MaxThinkBudget(max_tokens=1000, max_seconds=None))
    router.restore([{"kind": "LLMCall@v1", "payload": {"profile": "max_think", "usage": {"total_tokens": 999}, "total_ms": 10}},
                    {"kind": "LLMCall@v1", "payload": {"profile": "fast", "usage": {"total_tokens": 5000}}}])
    assert router.budget.tokens == 999 and not router.budget.exhausted


def test_auto_off_and_overrides():
    off, _ = make(RouterConfig(auto_max_think=False))
    d = off.decide(RouterSignals(prompt=COMPLEX, role="planner"))
    assert d.profile == "fast" and "auto max-think is off" in explain(d)
    forced = off.decide(RouterSignals(prompt=SMALL, role="planner", override="max_think"))
    assert forced.profile == "max_think" and explain(forced).startswith("max-think: forced by request")
    router, _ = make()
    fast = router.decide(RouterSignals(prompt=COMPLEX, role="planner", override="fast"))
    assert fast.profile == "fast"

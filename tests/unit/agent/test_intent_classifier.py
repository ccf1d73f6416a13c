"""The intent classifier's corpus (`agent/intent.py`): English and Chinese prompts, each with the
reading the cheap heuristics must give — a question, a change, or honestly unsure (the fast model
is then asked). A prompt read wrongly sure is the failure that matters: a question sent to the
planner, or a request answered with words while the person waited for the change."""

from __future__ import annotations

import pytest

from deepseek_ls.agent import intent
from deepseek_ls.agent.intent import TurnFlags, classify

Q, C, UNSURE = "question", "change", None

CORPUS = [
    # English questions
    ("why does test_add fail?", Q), ("What does app.py do?", Q), ("how does the router pick a model", Q),
    ("Where is the config loaded?", Q), ("is add ever called with strings?", Q), ("Explain the patch store.", Q),
    ("Can you explain the router?", Q), ("could you tell me what greet returns?", Q),
    ("how do I add a new CLI flag?", Q), ("How to rename a module safely?", Q),
    ("I want to understand the event log", Q), ("Summarize the last commit.", Q),
    ("tell me about the index", Q), ("which tests cover greet?", Q), ("Does this handle unicode?", Q),
    ("the tests fail?", Q), ("what's the best way to add caching?", Q),
    # English change requests
    ("fix test_add", C), ("Fix the bug in app.py.", C), ("please add a docstring to greet", C),
    ("can you fix add?", C), ("Could you please rename foo to bar?", C), ("Rename foo to bar and update the callers.", C),
    ("Let's add logging to the server", C), ("I want you to remove the dead code in util.py", C),
    ("we need to migrate the config to TOML", C), ("Make greet return 'Hello, NAME!'", C),
    ("update the README", C), ("Now write tests for double.", C), ("refactor the loop into smaller functions", C),
    ("Implement --json for the sessions command", C), ("fix test_add 的 bug", C),
    # English, unsure: the model decides
    ("test_add fails", UNSURE), ("the README is outdated", UNSURE), ("Add a test?", UNSURE),
    ("update of the index failed", UNSURE), ("why does test_add fail? fix it", UNSURE),
    ("hello", UNSURE), ("greet is wrong. Fix it.", C), ("Can you run the tests?", UNSURE),
    # Chinese questions
    ("为什么 test_add 失败？", Q), ("这个函数是做什么的", Q), ("怎么修复这个 bug？", Q), ("解释一下 add 函数", Q),
    ("如何添加一个新的命令？", Q), ("可以解释一下路由吗", Q), ("greet 返回什么？", Q), ("配置文件在哪里加载", Q),
    ("这段代码有没有并发问题", Q), ("测试通过了吗？", Q),
    # Chinese change requests
    ("修复 test_add", C), ("请把 add 函数改成加法", C), ("能帮我修复这个bug吗？", C), ("帮我重构这个模块", C),
    ("给 add 加上类型注解", C), ("测试失败了，修一下", C), ("删除 util.py 里没用的代码", C), ("请添加单元测试", C),
    ("将 foo 重命名为 bar", C), ("更新 README", C),
    # Chinese, unsure
    ("README 过时了", UNSURE), ("test_add 失败了", UNSURE), ("你好", UNSURE),
    ("为什么 test_add 失败？修复它", UNSURE),
]


@pytest.mark.parametrize(("prompt", "expected"), [pytest.param(p, e, id=p) for p, e in CORPUS])
def test_the_heuristics_read_the_corpus(prompt, expected):
    guess = classify(prompt)
    assert guess.intent == expected, guess.reason
    assert guess.sure is (expected is not None)
    assert guess.reason  # a sure reading names its rules, an unsure one says why


def test_code_and_mentions_are_not_read_as_the_request():
    # A decorator or a pasted `fix` in code says nothing about what the person wants.
    assert classify("what does this do?\n```python\n@property\ndef fix(self): ...\n```").intent == Q
    assert classify("@app.py what calls add?").intent == Q


@pytest.mark.parametrize(("answer", "intent_", "route", "source"), [
    pytest.param("QUESTION", Q, "answer", "model", id="question"),
    pytest.param("CHANGE", C, "execute", "model", id="change"),
    pytest.param("change.", C, "execute", "model", id="lower-case-with-dot"),
    pytest.param("UNSURE", Q, "answer", "default", id="unsure"),
    pytest.param("I think the user wants", Q, "answer", "default", id="no-word"),
    pytest.param("", Q, "answer", "default", id="empty"),
])
def test_the_fast_model_s_word_decides_when_unsure(answer, intent_, route, source):
    decision = intent.from_model(classify("test_add fails"), "agent", answer)
    assert (decision.intent, decision.route, decision.source, decision.sure) == (intent_, route, source, False)
    assert decision.model_answer == answer
    if source == "default":
        assert "/run" in decision.reason  # says how to have the change made instead


@pytest.mark.parametrize(("mode", "route"), [("plan", "plan"), ("agent", "execute"), ("yolo", "execute"),
                                             ("hetun", "execute")])
def test_a_change_is_only_planned_in_plan_mode(mode, route):
    assert intent.from_guess(classify("fix test_add"), mode).route == route
    assert intent.from_guess(classify("why does it fail?"), mode).route == "answer"


@pytest.mark.parametrize(("flags", "route"), [
    pytest.param(TurnFlags(tools=False), "answer", id="tools-false"),
    pytest.param(TurnFlags(plan_only=True), "plan", id="plan-only"),
    pytest.param(TurnFlags(force_execute=True), "execute", id="force-execute"),
    pytest.param(TurnFlags(), None, id="none"),
])
def test_flags_decide_before_the_prompt_is_read(flags, route):
    decision = intent.forced(flags, "agent")
    assert (decision.route if decision else None) == route
    if decision:
        assert decision.source == "flag" and decision.sure


def test_the_model_request_is_the_prompt_alone():
    messages = intent.intent_messages("README 过时了")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == "README 过时了"
    assert "QUESTION" in messages[0]["content"] and "CHANGE" in messages[0]["content"]

"""Intent routing (docs/agent.md, "Intent routing"): is a prompt a question or a change request?

A question gets an answer (the analysis path: no plan, no tool, nothing written);
a change request gets plan-first execution (only the plan in plan mode, unless
execution is forced). The person's flags decide first (`--tools=false`,
`--plan-only`, `--force-execute`, and the chat's `/ask`, `/plan`, `/run`). Then
cheap cues, English and Chinese, read sentence by sentence: a sentence that
opens with a request to change something ("fix …", "can you add …", "请把…改成",
"帮我修复…") is a change; one that asks ("why …?", "how do I …", "为什么…",
"…吗？") is a question. When the cues agree the heuristics are sure. When they
disagree or say nothing ("test_add fails", "README 过时了") the classifier is
unsure and says so: the fast model is asked for one word (`INTENT_SYSTEM`), and
if it cannot tell either, the prompt is answered, which changes nothing, and the
person is told how to have the change made instead.

Pure except for the model call, which the caller makes (`agent/operations.py`):
`classify` and `decide` are deterministic, so replay, which serves the model's
recorded word back, reproduces the decision (`IntentClassified@v1`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from deepseek_ls.agent.ask_context import CODE, MENTION

Intent = Literal["question", "change"]
Route = Literal["answer", "plan", "execute"]
Source = Literal["flag", "heuristic", "model", "default"]

# -- English cues -------------------------------------------------------------------------
# Verbs that, opening a sentence, ask for the workspace to be changed.
CHANGE_VERBS_EN = frozenset("""
    add adjust allow append apply bump change clean cleanup comment convert correct create
    decrease delete deprecate disable document downgrade drop edit enable ensure exclude extract
    fix format generate handle implement improve include increase inline insert introduce limit
    lower make merge migrate modify move optimise optimize patch port prepend prevent raise
    refactor reformat remove rename reorder repair replace restore restructure revert rewrite
    set simplify split support switch translate tweak undo update upgrade use wrap write
""".split())
# Openers of a sentence that asks for information.
QUESTION_OPENERS_EN = frozenset("""
    what why how where when which who whose whom is are was were does do did has have had
    will should shall would could can may might am explain describe summarize summarise
    what's whats how's where's who's why's isn't aren't doesn't don't didn't
""".split())
QUESTION_PHRASES_EN = ("tell me", "show me", "walk me through", "help me understand", "i wonder",
                       "i'm curious", "is there", "are there", "any idea", "give me an overview")
# Verbs of "can you explain …", "I want to understand …": asking for information.
INFO_VERBS_EN = frozenset("""
    explain describe tell show summarize summarise list find look check clarify compare point give help
    walk understand know learn see review
""".split())
POLITE_EN = ("please", "pls", "kindly", "now", "ok", "okay", "also", "then", "and", "so", "just", "go ahead and",
             "let's", "lets")
# "can you fix …", "could you please add …": a request in the shape of a question.
_REQUEST_EN = re.compile(
    r"^(?:(?:can|could|would|will)\s+you|(?:would|do)\s+you\s+mind|i\s+(?:want|need|would\s+like|'d\s+like)"
    r"(?:\s+you)?\s+to|we\s+(?:need|have|should|must)\s+to|you\s+(?:should|need\s+to|must)|it\s+should|"
    r"i'd\s+like\s+(?:you\s+)?to|time\s+to)\s+(?:please\s+)?(?P<verb>[a-z']+)"
)
# "how do I add …", "how to rename …": asking how, not asking for it to be done.
_HOW_TO_EN = re.compile(r"^(?:how\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)|how\s+to|what's\s+the\s+best\s+way\s+to)\b")

# -- Chinese cues -------------------------------------------------------------------------
CHANGE_VERBS_ZH = (
    "修复", "修改", "修正", "改成", "改为", "改掉", "改进", "改一下", "改", "添加", "加上", "增加", "加入", "实现",
    "重构", "重命名", "删除", "删掉", "移除", "去掉", "更新", "升级", "替换", "换成", "创建", "新建", "编写", "写一个",
    "写", "优化", "迁移", "转换", "支持", "调整", "完善", "补充", "补上", "生成", "处理", "引入", "拆分", "合并",
    "格式化", "清理", "修", "加", "删",
)
# "把 X 改成 Y", "给 X 加上 Y", "将 X 替换为 Y": the object first, the change verb after it.
OBJECT_FIRST_ZH = ("把", "给", "将")
POLITE_ZH = ("请你", "请帮我", "请帮忙", "请", "麻烦你", "麻烦", "帮我", "帮忙", "给我", "你帮我", "能不能帮我", "能否帮我",
             "可以帮我", "可不可以帮我", "你能帮我", "能帮我", "你能", "能不能", "能否", "可以", "可不可以", "我想让你",
             "我需要你", "我要你", "需要", "我们需要", "我想", "我要", "然后", "再", "并且", "并", "也", "顺便")
QUESTION_WORDS_ZH = ("为什么", "为何", "怎么", "怎样", "如何", "什么", "哪里", "哪儿", "哪个", "哪些", "是否", "是不是",
                     "有没有", "解释", "说明一下", "介绍", "请问", "讲讲", "讲一下", "告诉我", "多少", "几个", "啥")
QUESTION_ENDINGS_ZH = ("吗", "呢", "么", "吧")
# "怎么修复…", "如何添加…": how to do it, a question.
_HOW_TO_ZH = re.compile(r"^(?:请问)?(?:我)?(?:应该|该)?(?:怎么|怎样|如何)")

_CJK = re.compile(r"[\u3400-\u9fff]")
# Where a sentence (or a Chinese clause) ends: a full stop before a space, not the one of `app.py`.
_SENTENCE_END = re.compile(r"(?<=[!?。！？；;，])|(?<=\.)(?=\s)|\n")
_WORD = re.compile(r"[a-z][a-z']*")


@dataclass(frozen=True)
class Cue:
    """What one sentence said: its reading (`question` or `change`) and the rule that read it."""

    intent: Intent
    code: str
    sentence: str

    def to_json(self) -> dict[str, str]:
        return {"intent": self.intent, "code": self.code, "sentence": self.sentence[:120]}


@dataclass(frozen=True)
class Guess:
    """The heuristics' reading of a prompt: an intent when `sure`, else why not (`reason`)."""

    intent: Intent | None
    sure: bool
    reason: str
    cues: tuple[Cue, ...] = ()


@dataclass(frozen=True)
class TurnFlags:
    """What the person forced for this turn: `tools=False` answers only,
    `plan_only` plans without applying or verifying, `force_execute` runs the whole loop."""

    tools: bool = True
    plan_only: bool = False
    force_execute: bool = False

    def __post_init__(self) -> None:
        if self.plan_only and self.force_execute:
            raise ValueError("--plan-only and --force-execute cannot be used together")
        if not self.tools and (self.plan_only or self.force_execute):
            raise ValueError("--tools=false answers without planning: it cannot be used with "
                             "--plan-only or --force-execute")

    def to_json(self) -> dict[str, bool]:
        return {"tools": self.tools, "plan_only": self.plan_only, "force_execute": self.force_execute}


@dataclass
class IntentDecision:
    """Where a turn goes and why: recorded as `IntentClassified@v1`, shown to the person."""

    intent: Intent
    route: Route
    source: Source
    sure: bool
    reason: str
    cues: list[dict[str, str]] = field(default_factory=list)
    model_answer: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


# -- the heuristics -------------------------------------------------------------------------


def classify(prompt: str) -> Guess:
    """Read `prompt` sentence by sentence; sure only when every cue found points the same way."""
    text = MENTION.sub(" ", CODE.sub(" ", prompt)).strip()
    cues = tuple(cue for sentence in _sentences(text) if (cue := _read(sentence)) is not None)
    kinds = {cue.intent for cue in cues}
    if not cues:
        return Guess(None, False, "no sentence reads as a question or as a request to change something")
    if len(kinds) == 1:
        intent = next(iter(kinds))
        return Guess(intent, True, ", ".join(dict.fromkeys(c.code for c in cues)), cues)
    return Guess(None, False, "it both asks and requests: " + "; ".join(f"{c.code} ({c.intent})" for c in cues), cues)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip(" \t.!?。！？；;，")]


def _read(sentence: str) -> Cue | None:
    # Mixed text ("fix test_add 的 bug") is read the Chinese way first, then the English way.
    return (_read_zh(sentence) if _CJK.search(sentence) else None) or _read_en(sentence)


def _read_en(sentence: str) -> Cue | None:
    lower = " ".join(sentence.lower().split())
    asks = lower.endswith("?")
    if _HOW_TO_EN.match(lower):
        return Cue("question", "EN_HOW_TO", sentence)
    request = _REQUEST_EN.match(lower)
    if request:
        verb = request.group("verb")
        if verb in CHANGE_VERBS_EN:
            return Cue("change", "EN_POLITE_REQUEST", sentence)
        return Cue("question", "EN_ASKS_TO_EXPLAIN", sentence) if verb in INFO_VERBS_EN else None
    words = _strip_polite_en(_WORD.findall(lower))
    if not words:
        return Cue("question", "EN_QUESTION_MARK", sentence) if asks else None
    if words[0] in CHANGE_VERBS_EN and not _noun_use(words):
        # "Add a test?" is a tentative request, neither clearly asked nor clearly asking.
        return None if asks else Cue("change", "EN_IMPERATIVE", sentence)
    if words[0] in QUESTION_OPENERS_EN or any(lower.startswith(p) for p in QUESTION_PHRASES_EN):
        return Cue("question", "EN_QUESTION_WORD", sentence)
    if asks:
        return Cue("question", "EN_QUESTION_MARK", sentence)
    return None


def _strip_polite_en(words: list[str]) -> list[str]:
    while words:
        for phrase in POLITE_EN:
            parts = phrase.split()
            if words[: len(parts)] == parts:
                words = words[len(parts):]
                break
        else:
            return words
    return words


def _noun_use(words: list[str]) -> bool:
    """'update of the index failed', 'fix is wrong': a verb-looking first word used as a noun."""
    return len(words) > 1 and words[1] in ("is", "was", "are", "were", "of", "for", "fails", "failed", "does", "did")


def _read_zh(sentence: str) -> Cue | None:
    text = re.sub(r"\s+", "", sentence)
    core = text.rstrip("。！？；;?!.")
    asks = text.endswith(("？", "?")) or core.endswith(QUESTION_ENDINGS_ZH)
    if _HOW_TO_ZH.match(core):
        return Cue("question", "ZH_HOW_TO", sentence)
    rest, polite = _strip_polite_zh(core)
    object_first = rest.startswith(OBJECT_FIRST_ZH) and any(verb in rest[1:] for verb in CHANGE_VERBS_ZH)
    if (object_first or rest.startswith(CHANGE_VERBS_ZH)) and not rest.startswith(QUESTION_WORDS_ZH):
        # "能帮我修复这个 bug 吗？": a request in the shape of a question.
        if not asks or polite:
            code = "ZH_POLITE_REQUEST" if polite else "ZH_OBJECT_FIRST" if object_first else "ZH_IMPERATIVE"
            return Cue("change", code, sentence)
    if any(word in core for word in QUESTION_WORDS_ZH):
        return Cue("question", "ZH_QUESTION_WORD", sentence)
    if asks:
        return Cue("question", "ZH_QUESTION_ENDING", sentence)
    return None


def _strip_polite_zh(text: str) -> tuple[str, bool]:
    polite = False
    stripped = True
    while stripped:
        stripped = False
        for prefix in sorted(POLITE_ZH, key=len, reverse=True):
            if text.startswith(prefix) and len(text) > len(prefix):
                text, polite, stripped = text[len(prefix):], True, True
                break
    return text, polite


# -- the decision ---------------------------------------------------------------------------

INTENT_SYSTEM = (
    "You route a developer's message to a coding agent working in their repository. Reply with exactly "
    "one word: QUESTION if they want an answer, an explanation or an opinion and no file changed; CHANGE "
    "if they want files in the repository changed (code, tests, docs, configuration); UNSURE if the "
    "message does not say which."
)
_ANSWER = re.compile(r"\b(QUESTION|CHANGE|UNSURE)\b")


def describe(decision: IntentDecision) -> str:
    """One line for the person, before the work starts: what the prompt was taken for, and why."""
    doing = {"answer": "answering, nothing changed", "plan": "planning only, nothing applied",
             "execute": "planning first, then carrying it out"}[decision.route]
    if decision.source == "default":
        return f"→ {decision.reason}"
    what = "a question" if decision.intent == "question" else "a change request"
    return f"→ {what} ({decision.reason}): {doing}"


def intent_messages(prompt: str) -> list[dict[str, str]]:
    """The fast model's request: the system prompt above and the person's message, nothing else."""
    return [{"role": "system", "content": INTENT_SYSTEM}, {"role": "user", "content": prompt}]


def parse_model_answer(text: str) -> Intent | None:
    """The model's word (QUESTION / CHANGE); None for UNSURE or anything else."""
    match = _ANSWER.search(text.upper())
    word = match.group(1) if match else None
    return "question" if word == "QUESTION" else "change" if word == "CHANGE" else None


def forced(flags: TurnFlags, mode: str) -> IntentDecision | None:
    """The decision the person's flags make, or None when the prompt must be read."""
    if not flags.tools:
        return IntentDecision("question", "answer", "flag", True, "--tools=false: answered without tools or changes")
    if flags.plan_only:
        return IntentDecision("change", "plan", "flag", True, "--plan-only: planned, nothing applied or verified")
    if flags.force_execute:
        return IntentDecision("change", "execute", "flag", True, "--force-execute: the whole loop runs")
    return None


def route_for(intent: Intent, mode: str) -> Route:
    """A question is answered; a change is planned in plan mode, planned and carried out otherwise."""
    if intent == "question":
        return "answer"
    return "plan" if mode == "plan" else "execute"


def from_guess(guess: Guess, mode: str) -> IntentDecision | None:
    """The heuristics' decision when they are sure, else None (the model is asked)."""
    if not guess.sure or guess.intent is None:
        return None
    return IntentDecision(guess.intent, route_for(guess.intent, mode), "heuristic", True, guess.reason,
                          [c.to_json() for c in guess.cues])


def from_model(guess: Guess, mode: str, answer: str) -> IntentDecision:
    """The decision once the fast model was asked. When it cannot tell either, the prompt is
    answered: that path writes nothing, and the reason tells the person how to have the change
    made instead."""
    cues = [c.to_json() for c in guess.cues]
    intent = parse_model_answer(answer)
    if intent is not None:
        return IntentDecision(intent, route_for(intent, mode), "model", False,
                              f"unsure ({guess.reason}); the fast model read it as a {intent}", cues, answer)
    return IntentDecision("question", "answer", "default", False,
                          f"ambiguous ({guess.reason}); the fast model could not tell either: answered "
                          "without changing anything (/run REQUEST has it made)", cues, answer)

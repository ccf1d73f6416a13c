"""The agent panel (a webview view) in real code-server, driven by playwright-core,
against the real server and the fake DeepSeek server: ask → streamed markdown with a
folded Thinking section → plan checklist → run the step from the panel → accept one
hunk and reject the other from the panel → the step turns done on save → sessions
listed → a reload rebuilds the panel from the server. Screenshots go to
test-artifacts/vscode/<test>/ (docs/vscode-panel.png is the `panel.png` of this test)."""

from __future__ import annotations

import pytest
from test_vscode_e2e import DIFF, ORIGINAL, PLAN, SCRIPT
from vscode_harness import drive

pytestmark = [pytest.mark.vscode, pytest.mark.slow, pytest.mark.timeout(900)]

# A model answer with markdown, code and hostile HTML: the panel must render the first two
# and show the rest as text.
ANSWER = """## How `add` works

It returns the sum:

```python
def add(a, b):
    return a + b
```

<img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> [docs](javascript:window.pwned=3)
"""
REASONING = "The user asks what add does. It is in app.py."

PANEL_SCRIPT = [
    SCRIPT[0],
    SCRIPT[1],
    {"match": {"role": "ask"}, "content": ANSWER, "reasoning_content": REASONING, "chunk_chars": 4, "chunk_delay": 0.08},
]


def test_panel_ask_plan_run_accept_reject_and_reload(code_server, vscode_tools, workspace, artifacts, fake_deepseek_process):
    (workspace / "app.py").write_text(ORIGINAL)
    fake = fake_deepseek_process(PANEL_SCRIPT)
    cs = code_server({"DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_BASE_URL": fake.base_url})
    run = drive(vscode_tools, cs, artifacts, "panel", file="app.py", question="what does add do?",
                streamedPart="How add works", expectAnswer="It returns the sum",
                prompt="convert add and sub arguments to int", timeout=300)
    assert run.returncode == 0, run.output
    r = run.result
    assert r["steps"][-1]["name"] == "panel-follows-theme", run.step_names()

    # Streamed: the live turn showed rendered markdown before the answer was complete.
    assert "<h2>" in r["streamed"]["html"], r["streamed"]
    answer = r["answer"]
    assert answer["headings"] == ["How add works"], answer
    assert "hljs-keyword" in answer["highlighted"], answer  # the code block is highlighted
    assert answer["thinkingOpen"] is False and REASONING in answer["thinking"], answer
    assert "deepseek-v4-flash" in answer["meta"] and " cached, " in answer["meta"] and " out · $" in answer["meta"], answer
    assert "score" in answer["meta"], answer  # the router's explanation, as in the hover
    assert answer["live"] == 0, answer
    # test_no_script_from_model_answers: hostile HTML is text, and nothing ran.
    assert answer["activeContent"] == 0 and r["pwned"] == {"value": None}, answer
    assert '<img src=x onerror="window.pwned=1">' in answer["text"], answer["text"]
    assert r["streamChannelShown"] is False  # the panel shows the stream; the output channel stays shut

    assert r["planChecklist"] == ["Step 1: Convert arguments in app.py [pending]"], r["planChecklist"]
    assert r["changes"]["files"] == ["app.py"], r["changes"]
    assert any("+ " in h and "int(a) + int(b)" in h for h in r["changes"]["hunks"]), r["changes"]
    assert r["stepWhileReviewing"] == "[running]", r
    assert r["badgeBefore"] == "2", r
    assert "pending changes" in r["multiDiffTab"], r
    assert r["afterAccept"] == {"hunks": 1, "count": "(1)"}, r
    assert r["badgeAfterAccept"] == "1", r
    assert "No changes waiting" in r["afterReject"] and r["badgeAfterReject"] == "", r
    assert r["stepAfterSave"] == "[done]", r
    assert (workspace / "app.py").read_text() == ORIGINAL.replace("return a + b", "return int(a) + int(b)")
    prompts = [row.split(" | ")[0] for row in r["sessions"]]
    assert prompts[:2] == ["convert add and sub arguments to int", "what does add do?"], r["sessions"]  # newest first
    assert r["afterReload"]["steps"] == ["[done]"], r["afterReload"]
    assert r["afterReload"]["turns"][:2] == ["You · planner", "DeepSeek · planner"], r["afterReload"]
    # Another theme changes the panel's colours (they come from the theme's variables).
    assert "vscode-light" in r["themeBefore"]["theme"] and "vscode-dark" in r["themeAfter"]["theme"], r
    assert r["themeAfter"]["background"] != r["themeBefore"]["background"], r
    assert DIFF and PLAN  # the same scripted plan and diff as the editor flow

"""Issue 32's editor features in a real VS Code (code-server + Chromium, playwright-core), in ONE
window so the suite pays one code-server start for all of them: "Edit Selection with DeepSeek…"
(dismissed once, then answered), the plan approval it asks while the agent panel is out of view
(`deepseek/attention`: a notification and the panel's badge), the pending hunks as diagnostics in
the Problems panel settled from VS Code's own code action UI (Quick Fix, the lightbulb), "DeepSeek:
Fix <message>" on a diagnostic of VS Code's JSON extension through the same approval, and "Rewind to
here" on that prompt in the panel (the pick dismissed, the server's question cancelled, then the
code rewound). The real server; the model is the fake DeepSeek server in its own process.
Screenshots and the driver's result go to test-artifacts/vscode/<test>/."""

from __future__ import annotations

import json

import pytest
from test_vscode_e2e import DIFF, ORIGINAL, PLAN
from vscode_harness import drive

pytestmark = [pytest.mark.vscode, pytest.mark.slow, pytest.mark.timeout(900)]

INSTRUCTION = "convert add and sub arguments to int"
CONF = '{\n  "name": "demo",\n  "port": 8080,\n}\n'
FIXED = '{\n  "name": "demo",\n  "port": 8080\n}\n'
CONF_DIFF = """\
--- a/conf.json
+++ b/conf.json
@@ -2,3 +2,3 @@
   "name": "demo",
-  "port": 8080,
+  "port": 8080
 }
"""
CONF_PLAN = {**PLAN, "goal": "Remove the trailing comma", "assumptions": [],
             "steps": [{"title": "Remove the trailing comma in conf.json", "intent": "edit", "files": ["conf.json"]}]}
SCRIPT = [
    {"match": {"role": "planner", "contains": INSTRUCTION}, "content": "```json\n" + json.dumps(PLAN) + "\n```"},
    {"match": {"role": "executor", "contains": "Convert arguments in app.py"}, "content": "```diff\n" + DIFF + "```"},
    {"match": {"role": "planner", "contains": "Trailing comma"}, "content": "```json\n" + json.dumps(CONF_PLAN) + "\n```"},
    {"match": {"role": "executor", "contains": "Remove the trailing comma"}, "content": "```diff\n" + CONF_DIFF + "```"},
]
ADDED = ORIGINAL.replace("return a + b", "return int(a) + int(b)")


def test_edit_selection_code_actions_fix_attention_and_rewind_in_one_window(
    code_server, vscode_tools, workspace, artifacts, fake_deepseek_process
):
    (workspace / "app.py").write_text(ORIGINAL)
    (workspace / "conf.json").write_text(CONF)
    fake = fake_deepseek_process(SCRIPT)
    cs = code_server({"DEEPSEEK_API_KEY": "test-key", "DEEPSEEK_BASE_URL": fake.base_url})
    run = drive(vscode_tools, cs, artifacts, "editorActions", timeout=600, workspace=str(workspace),
                file="app.py", instruction=INSTRUCTION,
                acceptLine=2, acceptTitle="Accept DeepSeek change (line 2)", acceptedText="return int(a) + int(b)",
                rejectLine=10, rejectTitle="Reject DeepSeek change (line 10)",
                jsonFile="conf.json", jsonLine="3:15", jsonMessage="Trailing comma",
                fixAcceptTitle="Accept all pending DeepSeek changes", fixedText='"port": 8080\n}',
                brokenText='"port": 8080,')
    r = run.result
    assert run.returncode == 0, run.output
    assert r["steps"][-1]["name"] == "conversation-rewound", run.step_names()

    # 2. The dismissed input box sent nothing and changed nothing; the answered one planned once.
    assert r["afterEditDismissed"]["text"] == ORIGINAL, r["afterEditDismissed"]
    assert not [t for t in r["afterEditDismissed"]["lenses"] if "Step" in t], r["afterEditDismissed"]
    roles = [q.get("role") for q in fake.requests() if q.get("role") in ("planner", "executor")]
    assert roles == ["planner", "executor", "planner", "executor"], roles  # one per item: no plan from the dismissal
    assert f"Run DeepSeek's plan for: {INSTRUCTION}" in r["editApproval"], r["editApproval"]

    # 4. While the approval waited and the panel was out of view: a notification and the badge.
    assert r["editAttention"].startswith("DeepSeek waits for your approval"), r["editAttention"]
    assert "Open panel" in r["editAttentionButtons"], r["editAttentionButtons"]
    assert r["fixAttention"].startswith("DeepSeek waits for your approval: Run DeepSeek's plan for: fix Trailing comma"), r
    assert r["badgeWhileWaiting"] == "1" and r["badgeWhileFixWaits"] == "1", r

    # 1. Two pending hunks in Problems; accepted from Quick Fix, rejected from the lightbulb; gone once settled.
    hunk_rows = [row for row in r["hunkProblems"] if "DeepSeek proposes" in row]
    assert len(hunk_rows) == 2 and all("deepseek" in row for row in hunk_rows), r["hunkProblems"]
    assert "Accept DeepSeek change (line 2)" in r["acceptOffered"], r["acceptOffered"]
    assert "Reject DeepSeek change (line 2)" in r["acceptOffered"], r["acceptOffered"]
    assert "Reject DeepSeek change (line 10)" in r["rejectOffered"], r["rejectOffered"]
    assert r["afterReject"] == ADDED, r["afterReject"]
    assert not [t for t in r["lensesAfterSettled"] if t.startswith(("Accept", "Reject"))], r["lensesAfterSettled"]
    assert (workspace / "app.py").read_text() == ADDED

    # 3. Fix on the JSON extension's diagnostic, through the approval, accepted: the error is gone.
    assert any("Trailing comma" in row for row in r["jsonProblems"]), r["jsonProblems"]
    assert "DeepSeek: Explain Trailing comma" in r["fixOffered"], r["fixOffered"]
    assert "Run DeepSeek's plan for:" in r["fixApproval"], r["fixApproval"]
    assert r["jsonDiskAfterFix"] == FIXED, r["jsonDiskAfterFix"]

    # 5. Rewind to here: the pick dismissed sent nothing; Code refused naming the file (accepted in the
    # editor: no checkpoint); Conversation asked first (Cancel: nothing), then rewound with Redo.
    assert "Trailing comma" in r["rewindPrompt"], r["rewindPrompt"]
    assert [c.split()[0] for c in r["rewindChoices"]] == ["Code", "Codethe", "Conversationthis"], r["rewindChoices"]
    assert "accepted in the editor" in r["codeRewindRefused"] and "conf.json" in r["codeRewindRefused"], r
    assert r["jsonDiskAfterRefusal"] == FIXED, r
    assert "conf.json" not in r["rewindQuestion"] and "1 prompt" in r["rewindQuestion"], r["rewindQuestion"]
    assert "nothing was changed" in r["rewindDeclined"], r["rewindDeclined"]
    assert r["rewound"].startswith("DeepSeek: rewound conversation: no file changed"), r["rewound"]
    assert "Redo" in r["rewoundButtons"], r
    assert (workspace / "conf.json").read_text() == FIXED  # a conversation rewind leaves the files
    assert (workspace / "app.py").read_text() == ADDED

"""Script matching, consumption, readable failures, endpoints and cache accounting."""

import json
import subprocess
import sys

import httpx

USER = [{"role": "user", "content": "hi"}]


def test_replies_are_served_in_order_and_used_once(fake_deepseek, api):
    fake_deepseek.add({"content": "first"})
    fake_deepseek.add({"content": "second"})
    assert [api.content(api.chat(USER)) for _ in range(2)] == ["first", "second"]
    third = api.chat(USER)
    assert third.status_code == 500
    assert "no scripted reply matched" in third.json()["error"]["message"]
    assert third.headers["x-should-retry"] == "false"


def test_repeat_reply_serves_every_time(fake_deepseek, api):
    fake_deepseek.add({"content": "again", "repeat": True})
    assert {api.content(api.chat(USER)) for _ in range(3)} == {"again"}
    assert fake_deepseek.script.unused() == []


def test_match_by_role_model_and_last_user_message(fake_deepseek, api):
    fake_deepseek.add({"match": {"role": "planner"}, "content": "plan", "repeat": True})
    fake_deepseek.add({"match": {"model": "deepseek-reasoner"}, "content": "deep", "repeat": True})
    fake_deepseek.add({"match": {"contains": "weather"}, "content": "sunny", "repeat": True})
    assert api.content(api.chat(USER, role="planner")) == "plan"
    assert api.content(api.chat(USER, role="executor", model="deepseek-reasoner")) == "deep"
    assert api.content(api.chat([{"role": "user", "content": "the weather?"}], role="ask")) == "sunny"
    assert api.chat(USER, role="ask").status_code == 500


def test_match_on_tool_results_for_multi_turn_agent_scenarios(fake_deepseek, api):
    fake_deepseek.add({"match": {"role": "executor", "last_role": "user"},
                       "tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}]})
    fake_deepseek.add({"match": {"role": "executor", "last_contains": "def main"}, "content": "found main"})
    first = api.chat(USER, role="executor").json()["choices"][0]
    assert first["finish_reason"] == "tool_calls"
    call = first["message"]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"path": "a.py"}
    history = USER + [first["message"], {"role": "tool", "tool_call_id": call["id"], "content": "def main(): ..."}]
    assert api.content(api.chat(history, role="executor")) == "found main"


def test_unmatched_request_error_describes_the_request(fake_deepseek, api):
    message = api.chat([{"role": "user", "content": "refactor utils"}], role="planner").json()["error"]["message"]
    assert '"role": "planner"' in message and "refactor utils" in message


def test_requests_are_recorded_with_headers_and_body(fake_deepseek, api):
    fake_deepseek.add({"content": "ok"})
    api.chat(USER, role="router", temperature=0.2)
    (request,) = fake_deepseek.requests
    assert request.role == "router"
    assert request.body["temperature"] == 0.2
    assert request.status == 200 and request.reply_index == 0


def test_models_endpoint_lists_models(api):
    response = httpx.get(f"{api.base_url}/models", headers=api.headers)
    assert {m["id"] for m in response.json()["data"]} >= {"deepseek-chat", "deepseek-reasoner"}
    assert httpx.get(f"{api.base_url}/models").status_code == 401


def test_v1_prefix_is_accepted(fake_deepseek, api):
    fake_deepseek.add({"content": "ok"})
    response = httpx.post(f"{api.base_url}/v1/chat/completions", headers=api.headers,
                          json={"model": "deepseek-chat", "messages": USER})
    assert api.content(response) == "ok"


def test_beta_completions_fim_streams_and_not(fake_deepseek, api):
    fake_deepseek.add({"match": {"endpoint": "fim"}, "content": "    return a + b\n", "repeat": True})
    body = {"model": "deepseek-chat", "prompt": "def add(a, b):\n", "suffix": "\n"}
    whole = httpx.post(f"{api.base_url}/beta/completions", headers=api.headers, json=body)
    assert whole.json()["choices"][0]["text"] == "    return a + b\n"
    streamed = httpx.post(f"{api.base_url}/beta/completions", headers=api.headers, json={**body, "stream": True})
    lines = [line[6:] for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    text = "".join(c["choices"][0]["text"] for c in map(json.loads, lines[:-1]) if c["choices"])
    assert text == "    return a + b\n"


def test_fim_latency_and_usage_and_a_hang_up_is_seen_before_the_answer(fake_deepseek, api):
    """The FIM endpoint answers after its latency with usage, billed; a client that hangs up during
    the latency is seen at once (`disconnected`, nothing billed), not when the answer is written."""
    fake_deepseek.add({"match": {"endpoint": "fim", "contains": "fast"}, "content": "x",
                       "fault": {"delay_before_first_byte": 0.01}})
    fake_deepseek.add({"match": {"endpoint": "fim", "contains": "slow"}, "content": "y",
                       "fault": {"delay_before_first_byte": 600}})
    answered = httpx.post(f"{api.base_url}/beta/completions", headers=api.headers,
                          json={"model": "deepseek-chat", "prompt": "fast", "suffix": ""})
    assert answered.json()["usage"]["completion_tokens"] == 1
    (first,) = fake_deepseek.requests
    assert first.finished.wait(10)  # the client can have the answer before the fake has noted it
    assert first.billed == answered.json()["usage"] and first.answered_at >= first.received_at + 0.01
    try:
        httpx.post(f"{api.base_url}/beta/completions", headers=api.headers, timeout=0.2,
                   json={"model": "deepseek-chat", "prompt": "slow", "suffix": ""})
    except httpx.TimeoutException:
        pass  # the client gives up and closes the connection
    hung_up = fake_deepseek.requests[1]
    assert hung_up.finished.wait(10), "the fake kept waiting out its latency for a client that had gone"
    assert hung_up.disconnected and hung_up.billed is None and hung_up.status is None


def test_llama_cpp_infill(fake_deepseek, api):
    fake_deepseek.add({"match": {"endpoint": "infill", "contains": "def add"}, "content": "return a + b"})
    body = {"input_prefix": "def add(a, b):\n    ", "input_suffix": "\n", "n_predict": 16,
            "input_extra": [{"filename": "m.py", "text": "x = 1"}]}
    answer = httpx.post(f"{api.base_url}/infill", headers=api.headers, json=body).json()
    assert answer["content"] == "return a + b" and answer["tokens_predicted"] > 0 and answer["tokens_evaluated"] > 0
    bad = httpx.post(f"{api.base_url}/infill", headers=api.headers, json={"input_prefix": 3})
    assert bad.status_code == 400 and "input_prefix" in bad.text


def test_prompt_cache_hits_follow_the_longest_common_prefix(fake_deepseek, api):
    fake_deepseek.add({"content": "ok", "repeat": True})
    system = {"role": "system", "content": "x" * 400}
    first = api.chat([system, {"role": "user", "content": "one"}]).json()["usage"]
    second = api.chat([system, {"role": "user", "content": "two"}]).json()["usage"]
    unrelated = api.chat([{"role": "user", "content": "y" * 400}]).json()["usage"]
    assert first["prompt_cache_hit_tokens"] == 0
    assert 100 <= second["prompt_cache_hit_tokens"] < second["prompt_tokens"]
    assert second["prompt_cache_hit_tokens"] + second["prompt_cache_miss_tokens"] == second["prompt_tokens"]
    assert unrelated["prompt_cache_hit_tokens"] <= 2


def test_scripted_usage_overrides_computed_fields(fake_deepseek, api):
    fake_deepseek.add({"content": "ok", "usage": {"prompt_cache_hit_tokens": 77}})
    assert api.chat(USER).json()["usage"]["prompt_cache_hit_tokens"] == 77


def test_fault_status_with_retry_after_headers(fake_deepseek, api):
    fake_deepseek.add({"fault": {"status": 429, "retry_after": 2, "retry_after_ms": 1500}})
    response = api.chat(USER)
    assert response.status_code == 429
    assert (response.headers["retry-after"], response.headers["retry-after-ms"]) == ("2", "1500")


def test_control_endpoints_add_replies_and_list_requests(fake_deepseek, api):
    added = httpx.post(f"{api.base_url}/_fake/replies", json=[{"content": "via control"}])
    assert added.json() == {"added": 1, "total": 1}
    assert api.content(api.chat(USER, role="ask")) == "via control"
    recorded = httpx.get(f"{api.base_url}/_fake/requests").json()
    assert [r["role"] for r in recorded] == ["ask"]
    bad = httpx.post(f"{api.base_url}/_fake/replies", json={"contnet": "typo"})
    assert bad.status_code == 422 and "contnet" in bad.text


def test_process_mode_prints_its_url_first_and_serves_the_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from a process"}]))
    proc = subprocess.Popen([sys.executable, "-m", "deepseek_ls.testkit.fake_deepseek", "--port", "0",
                             "--script", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        response = httpx.post(f"{url}/chat/completions", headers={"Authorization": "Bearer k"},
                              json={"model": "deepseek-chat", "messages": USER})
        assert response.json()["choices"][0]["message"]["content"] == "from a process"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_process_mode_rejects_a_bad_script_clearly(tmp_path):
    script = tmp_path / "bad.json"
    script.write_text('[{"content": 1, "bogus": true}]')
    result = subprocess.run([sys.executable, "-m", "deepseek_ls.testkit.fake_deepseek", "--script", str(script)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "cannot load script" in result.stderr and "bogus" in result.stderr


def test_a_bug_inside_the_fake_is_a_readable_500_not_a_dropped_connection(fake_deepseek, api, monkeypatch):
    from deepseek_ls.testkit import responses

    def broken(*args, **kwargs):
        raise RuntimeError("cannot build this body")

    monkeypatch.setattr(responses, "chat_body", broken)
    fake_deepseek.add({"content": "x"})
    response = api.chat(USER)
    assert response.status_code == 500
    assert "fake DeepSeek internal error" in response.text and "cannot build this body" in response.text


def test_held_replies_wait_for_release_and_count_as_in_flight(fake_deepseek, api):
    """Two requests held at once count 2 in flight; answered one after the other they count 1."""
    from concurrent.futures import ThreadPoolExecutor

    fake_deepseek.add({"match": {"model": "deepseek-chat"}, "content": "held", "repeat": True, "fault": {"hold": "gate"}})
    with ThreadPoolExecutor(2) as pool:
        answers = [pool.submit(api.chat, USER) for _ in range(2)]
        fake_deepseek.wait_for_requests(2)
        assert not any(a.done() for a in answers)  # nothing is answered before the release
        assert fake_deepseek.inflight == {"deepseek-chat": 2}
        released = httpx.post(f"{fake_deepseek.base_url}/_fake/release", json={"name": "gate"})
        assert released.json() == {"released": "gate"}
        assert [api.content(a.result(timeout=10)) for a in answers] == ["held", "held"]
    assert fake_deepseek.inflight == {"deepseek-chat": 0}
    assert fake_deepseek.peak_inflight == {"deepseek-chat": 2}

    fake_deepseek.add({"match": {"model": "deepseek-reasoner"}, "content": "one by one", "repeat": True})
    for _ in range(3):  # the next request is sent only once the answer is whole: never counted beside it
        assert api.content(api.chat(USER, model="deepseek-reasoner")) == "one by one"
    assert fake_deepseek.peak_inflight["deepseek-reasoner"] == 1

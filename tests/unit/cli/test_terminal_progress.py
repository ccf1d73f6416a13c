"""`TerminalUI` progress: a rewritten line on a terminal, plain lines otherwise; retries announced."""

from __future__ import annotations

import asyncio
import io
import logging
import re

import pytest

from deepseek_ls.cli import terminal_ui
from deepseek_ls.cli.terminal_ui import TerminalUI, announce_retries


async def until(condition, hang_guard: float = 30.0) -> None:
    """Let the loop run until `condition()` holds. A fixed sleep raced the ticker: on a loaded
    machine the process can be descheduled past both the tick and the sleep, which then fire in
    the same loop pass and only one tick is written."""
    async with asyncio.timeout(hang_guard):
        while not condition():
            await asyncio.sleep(0.01)


def test_not_a_terminal_gets_plain_start_and_end_lines_with_tokens():
    err = io.StringIO()
    ui = TerminalUI(err=err, tty=False)
    ui.progress("t", "planner: asking deepseek-v4-flash (fast)")
    for piece in ("a", "b", "c"):
        ui.stream("content", piece)
    ui.progress("t", "planner: done", done=True)
    lines = err.getvalue().splitlines()
    assert lines[0] == "… planner: asking deepseek-v4-flash (fast)"
    assert lines[1].startswith("planner: done (") and lines[1].endswith("s, 3 tokens)")
    assert "\r" not in err.getvalue() and "abc" not in err.getvalue()  # no --stream: text not shown


def test_not_a_terminal_gets_a_line_for_each_new_state_of_a_call():
    err = io.StringIO()
    ui = TerminalUI(err=err, tty=False)
    ui.progress("t", "ask: queued for m: 1 call(s) in flight, max_inflight 1")
    ui.progress("t", "ask: queued for m: 1 call(s) in flight, max_inflight 1")  # the same state: said once
    ui.progress("t", "ask: asking m (fast)")
    ui.progress("t", "ask: done", done=True)
    lines = err.getvalue().splitlines()
    assert lines[:2] == ["… ask: queued for m: 1 call(s) in flight, max_inflight 1", "… ask: asking m (fast)"]
    assert lines[2].startswith("ask: done (") and len(lines) == 3


async def test_a_terminal_gets_one_rewritten_line_while_the_call_runs(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(terminal_ui, "TTY_EVERY", 0.01)
    err = io.StringIO()
    ui = TerminalUI(err=err, tty=True)
    ui.progress("t", "executor: asking deepseek-v4-pro (max-think)")
    ui.stream("reasoning", "hmm")
    live = re.compile(r"\r\x1b\[2K… executor: asking deepseek-v4-pro \(max-think\) \(\d+s, 1 tokens\)")
    await until(lambda: len(live.findall(err.getvalue())) >= 2)  # a few ticks of the live line
    ui.progress("t", "executor: done", done=True)
    out = err.getvalue()
    assert len(live.findall(out)) >= 2
    last = out.rstrip("\n").split("\n")[-1].split("\r\x1b[2K")[-1]  # the live line is cleared before the final one
    assert last.startswith("executor: done (") and last.endswith("s, 1 tokens)")
    assert ui._ticker is None  # nothing left ticking


async def test_plain_lines_repeat_while_a_long_call_runs(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(terminal_ui, "PLAIN_EVERY", 0.01)
    err = io.StringIO()
    ui = TerminalUI(err=err, tty=False)
    ui.progress("t", "planner: asking m (fast)")
    await until(lambda: err.getvalue().count("… planner: asking m (fast) (") >= 2)
    ui.progress("t", "planner: done", done=True)
    lines = err.getvalue().splitlines()
    assert sum(line.startswith("… planner: asking m (fast) (") for line in lines) >= 2  # elapsed, repeated


def test_retries_are_announced_as_attempt_n_failed_why():
    said: list[str] = []
    notices = announce_retries(said.append)
    try:
        error = type("ServerError", (Exception,), {"user_message": "the API failed with 503"})()
        logging.getLogger("deepseek_ls.llm").warning(
            "LLM call (role %s) attempt %d/%d failed: %s; retrying in %.2fs", "planner", 1, 5, error, 0.5)
        logging.getLogger("deepseek_ls.llm").warning("something else")
    finally:
        logging.getLogger("deepseek_ls.llm").removeFilter(notices)
    assert said == ["planner: attempt 1/5 failed: the API failed with 503; retrying in 0.5s"]


def test_retries_go_to_the_latest_command_not_an_earlier_one_whose_terminal_is_gone():
    """An in-process command (the chat's tests run `cli.main`) left its filter behind; being first, it
    took the next command's notices and wrote them to a closed stream (ValueError)."""
    gone = io.StringIO()
    announce_retries(TerminalUI(err=gone)._say)
    gone.close()
    said: list[str] = []
    notices = announce_retries(said.append)
    try:
        logging.getLogger("deepseek_ls.llm").warning(
            "LLM call (role %s) attempt %d/%d failed: %s; retrying in %.2fs", "executor", 2, 5, "timeout", 1.0)
    finally:
        logging.getLogger("deepseek_ls.llm").removeFilter(notices)
    assert said == ["executor: attempt 2/5 failed: timeout; retrying in 1.0s"]

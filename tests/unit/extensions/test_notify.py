"""extensions/notify.py: every wait and finish reaches the editor, the Notification hook and the
desktop (a fake `notify-send` on PATH records its arguments); the desktop only where there is a
desktop session, never blocking nor failing the work when it hangs, fails or is missing."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from deepseek_ls.config_models import NotificationsConfig
from deepseek_ls.extensions import notify
from deepseek_ls.extensions.notify import NotifyingUI
from deepseek_ls.ui_port import ApprovalDecision, ApprovalRequest


class Editor:
    """An adapter's port with `notify` (as the language server's)."""

    def __init__(self, fail: bool = False) -> None:
        self.told: list[tuple[str, str, str | None, bool]] = []
        self.fail = fail

    async def request_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(request_id=request.request_id, answer="deny")

    async def ask_user(self, question: str, choices: list[str] | None = None) -> str | None:
        return "formal"

    def notify(self, title: str, message: str, *, session_id: str | None = None, waiting: bool = False) -> None:
        self.told.append((title, message, session_id, waiting))
        if self.fail:
            raise RuntimeError("the editor went away")


def fake_notify_send(tmp_path: Path, body: str) -> Path:
    bin_dir = tmp_path / "bin dir"
    bin_dir.mkdir()
    program = bin_dir / "notify-send"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture
def desktop_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "desktop.log"
    bin_dir = fake_notify_send(tmp_path, f'printf "%s|" "$@" >> "{log}"; echo >> "{log}"')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    return log


def hook_recorder() -> tuple[list[tuple[str, str, str | None]], Any]:
    fired: list[tuple[str, str, str | None]] = []

    async def fire(message: str, title: str, session_id: str | None) -> None:
        fired.append((message, title, session_id))

    return fired, fire


async def settle(ui: NotifyingUI) -> None:
    """Wait for the notifications running beside the work (bounded by the desktop's own limit)."""
    while ui._pending:
        await asyncio.wait(list(ui._pending), timeout=30)


async def test_a_wait_a_question_and_a_finish_reach_the_editor_the_hook_and_the_desktop(desktop_log: Path) -> None:
    editor = Editor()
    fired, fire = hook_recorder()
    ui = NotifyingUI(editor, NotificationsConfig(), fire)
    request = ApprovalRequest(request_id="r1", kind="bash.run", title="Run `make test`", session_id="s1")
    assert (await ui.request_approval(request)).answer == "deny"
    assert await ui.ask_user("Which greeting style?") == "formal"
    ui.notify_soon("finished (Completed)", "deepseek-ls", "s1")
    await settle(ui)
    assert editor.told == [("deepseek-ls needs your approval", "waits for your approval: Run `make test`", "s1", True),
                           ("deepseek-ls has a question", "asks you: Which greeting style?", None, True),
                           ("deepseek-ls", "finished (Completed)", "s1", False)]
    # The hook fires for the same moments, with the same words.
    assert [(m, t) for m, t, _ in fired] == [(m, t) for t, m, _, _ in editor.told]
    lines = sorted(desktop_log.read_text().splitlines())
    assert "--app-name=deepseek-ls|deepseek-ls|finished (Completed)|" in lines and len(lines) == 3


async def test_no_desktop_session_no_desktop_notification(desktop_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    editor = Editor()
    ui = NotifyingUI(editor, NotificationsConfig(), None)
    ui.notify_soon("finished (Completed)", "deepseek-ls", "s1")
    await settle(ui)
    assert len(editor.told) == 1 and not desktop_log.exists()


async def test_turned_off_the_editor_and_desktop_say_nothing_the_hook_still_fires(desktop_log: Path) -> None:
    editor = Editor()
    fired, fire = hook_recorder()
    ui = NotifyingUI(editor, NotificationsConfig(enabled=False), fire)
    ui.notify_soon("finished (Completed)", "deepseek-ls", "s1")
    await settle(ui)
    assert editor.told == [] and not desktop_log.exists() and len(fired) == 1


async def test_a_hanging_notify_send_is_stopped_and_a_failing_editor_fails_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_notify_send(tmp_path, "exec sleep 600")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    monkeypatch.setattr(notify, "DESKTOP_SECONDS", 0.2)
    editor = Editor(fail=True)
    ui = NotifyingUI(editor, NotificationsConfig(), None)
    request = ApprovalRequest(request_id="r1", kind="bash.run", title="Run `make`")
    assert (await ui.request_approval(request)).answer == "deny"  # the approval is answered as ever
    assert await notify.desktop("t", "m") is False  # stopped, said False, nothing raised
    await settle(ui)
    assert len(editor.told) == 1


async def test_no_notify_send_installed_is_not_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("DISPLAY", ":0")
    assert await notify.desktop("t", "m") is False


def test_the_terminal_rings_its_bell_on_a_terminal_only() -> None:
    import io

    from deepseek_ls.cli.terminal_ui import TerminalUI

    on_tty, piped = io.StringIO(), io.StringIO()
    TerminalUI(err=on_tty, tty=True).notify("deepseek-ls", "waits for your approval: x", waiting=True)
    TerminalUI(err=piped, tty=False).notify("deepseek-ls", "finished (Completed)")
    assert on_tty.getvalue() == "\a" and piped.getvalue() == ""  # a log file gets no control characters

"""Run the fake DeepSeek server as a separate process (for end-to-end tests of other processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx


class FakeDeepSeekProcess:
    """`python -m deepseek_ls.testkit.fake_deepseek` as a child process; `base_url` once started."""

    def __init__(self, script: Path | list[dict[str, Any]] | None = None, *, api_key: str | None = None,
                 workdir: Path | None = None) -> None:
        self._script = script
        self._api_key = api_key
        self._workdir = workdir
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self, timeout: float = 15.0) -> "FakeDeepSeekProcess":
        argv = [sys.executable, "-m", "deepseek_ls.testkit.fake_deepseek", "--port", "0"]
        script = self._script
        if isinstance(script, list):
            if self._workdir is None:
                raise ValueError("a list script needs a workdir to write it to")
            path = self._workdir / "fake_deepseek_script.json"
            path.write_text(json.dumps(script), encoding="utf-8")
            script = path
        if script is not None:
            argv += ["--script", str(script)]
        if self._api_key:
            argv += ["--api-key", self._api_key]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip() if self.proc.stdout else ""
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"fake DeepSeek did not start: {line!r}")
        self.base_url = line
        return self

    def add(self, *replies: dict[str, Any]) -> None:
        httpx.post(f"{self.base_url}/_fake/replies", json=list(replies)).raise_for_status()

    def release(self, name: str) -> None:
        """Answer the requests held by replies with `fault.hold == name` (now and from now on)."""
        httpx.post(f"{self.base_url}/_fake/release", json={"name": name}).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.base_url}/_fake/requests").json()

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The recorded requests once at least `count` have arrived (the server answers when they
        have); TimeoutError after `timeout` seconds."""
        answer = httpx.get(f"{self.base_url}/_fake/requests", params={"count": count, "timeout": timeout},
                           timeout=timeout + 10)
        if answer.status_code == 408:
            raise TimeoutError(answer.json()["error"]["message"])
        answer.raise_for_status()
        return answer.json()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "FakeDeepSeekProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

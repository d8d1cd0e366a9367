"""The embedded offline judge as a litellm provider: ``argue-local/<anything>`` runs in-process on llama.cpp.

``register_embedded_provider()`` adds :class:`EmbeddedLlamaLLM` to ``litellm.custom_provider_map`` under the
provider ``argue-local``; from then on the ordinary structured-output call works unchanged::

    client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)
    verdict = await client.chat.completions.create(model=EMBEDDED_MODEL, response_model=..., messages=...)

instructor sends OpenAI's ``response_format={"type": "json_schema", "json_schema": {"name", "schema"}}``; the
handler hands llama.cpp ``{"type": "json_object", "schema": ...}``, which compiles the schema to a grammar, so
the output always parses (it may still be cut by ``max_tokens``).

This module only translates between litellm and llama-cpp-python; the model, its threads, kernels and saved
prompt states belong to the runtime the handler delegates to (one per process: :func:`embedded_runtime`), by
default a :class:`~judge.llm.embedded.worker_runtime.WorkerRuntime`, which keeps the model in a worker process of
its own so that a native crash fails the decisions in flight (:class:`EmbeddedWorkerCrashed`) instead of the run.
``acompletion`` runs the blocking call on the handler's single thread so the event loop stays free. The response
carries ``usage.prompt_tokens_details.cached_tokens`` (prompt tokens whose KV state was reused) and, when asked
with ``logprobs=True`` (and ``top_logprobs=n``), OpenAI-shaped ``choices[0].logprobs.content``: each token's
log-probability and its likeliest grammar-allowed alternatives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import re
import threading
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the cost map from the network

import litellm
from litellm import CustomLLM
from litellm.types.utils import ChoiceLogprobs, ModelResponse, PromptTokensDetailsWrapper, Usage

from judge.errors import ConfigurationError
from judge.llm.embedded.kernels import KernelChoice
from judge.llm.embedded.runtime import Completion, LlamaRuntime
from judge.llm.embedded.weights import EMBEDDED_MODEL, EMBEDDED_PROVIDER, embedded_available, ensure_model_file
from judge.llm.embedded.worker_runtime import WorkerDied, WorkerRuntime

_REGISTER_LOCK = threading.Lock()


class EmbeddedContextOverflow(litellm.ContextWindowExceededError):
    """The prompt does not fit the embedded model's context window. Cut documents into passages beforehand."""

    def __init__(self, prompt_tokens: int, n_ctx: int, model: str = EMBEDDED_MODEL):
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
        super().__init__(
            message=(
                f"the prompt has {prompt_tokens} tokens but the embedded model's context window is {n_ctx} "
                f"tokens (room is also needed for the answer); cut the documents into shorter passages"
            ),
            model=model,
            llm_provider=EMBEDDED_PROVIDER,
        )


class EmbeddedLlamaError(litellm.BadRequestError):
    """A request the embedded model cannot serve (unsupported parameter or message)."""

    def __init__(self, message: str, model: str = EMBEDDED_MODEL):
        super().__init__(message=message, model=model, llm_provider=EMBEDDED_PROVIDER)


class EmbeddedWorkerCrashed(litellm.APIError):
    """The embedded model's worker process died (a signal, e.g. SIGILL or the OOM killer's SIGKILL) before it
    answered: this decision failed. Not a transient fault: asking again would only meet the same crash."""

    def __init__(self, message: str, signal_name: str | None, model: str = EMBEDDED_MODEL):
        self.signal_name = signal_name
        super().__init__(status_code=500, message=message, llm_provider=EMBEDDED_PROVIDER, model=model)


# ----------------------------------------------------------------------------------------- translation


def _text_content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                texts.append(part)
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise EmbeddedLlamaError(f"the embedded model accepts text only, got a {kind!r} content part")
        return "".join(texts)
    return str(content)


def _messages(messages: list) -> list[dict[str, str]]:
    out = []
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else getattr(m, "role", None)
        content = m.get("content") if isinstance(m, dict) else getattr(m, "content", None)
        if role not in ("system", "user", "assistant"):
            raise EmbeddedLlamaError(f"the embedded model accepts system/user/assistant messages, got {role!r}")
        out.append({"role": role, "content": _text_content(content)})
    return out


def translate_response_format(response_format: Any) -> dict | None:
    """OpenAI-style ``response_format`` -> llama-cpp-python's (``{"type": "json_object", "schema": ...}``)."""
    if response_format is None:
        return None
    if not isinstance(response_format, dict):
        raise EmbeddedLlamaError(f"unsupported response_format {response_format!r}")
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        schema = response_format.get("schema")
        return {"type": "json_object", "schema": schema} if schema is not None else {"type": "json_object"}
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if schema is None:
            return {"type": "json_object"}
        return {"type": "json_object", "schema": schema}
    raise EmbeddedLlamaError(f"unsupported response_format type {kind!r}")


_UNSUPPORTED = ("tools", "tool_choice", "functions", "function_call")
_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def _completion_kwargs(messages: list, optional_params: dict) -> tuple[dict[str, Any], int | None]:
    """litellm's optional params -> Llama.create_chat_completion keywords, and the top_logprobs request."""
    params = dict(optional_params or {})
    for key in _UNSUPPORTED:
        if params.get(key):
            raise EmbeddedLlamaError(
                f"the embedded model does not support {key!r}; use instructor Mode.JSON_SCHEMA (response_format)"
            )
    if params.get("stream"):
        raise EmbeddedLlamaError("the embedded model does not stream")
    if params.get("n", 1) not in (None, 1):
        raise EmbeddedLlamaError("the embedded model returns one choice (n=1)")

    kwargs: dict[str, Any] = {
        "messages": _messages(messages),
        "repeat_penalty": 1.0,  # judgments quote the documents; the chat handler's 1.1 default would fight that
        "response_format": translate_response_format(params.get("response_format")),
    }
    if params.get("temperature") is not None:
        kwargs["temperature"] = float(params["temperature"])
    if params.get("seed") is not None:
        kwargs["seed"] = int(params["seed"])
    if params.get("max_tokens") is not None:
        kwargs["max_tokens"] = int(params["max_tokens"])
    elif params.get("max_completion_tokens") is not None:
        kwargs["max_tokens"] = int(params["max_completion_tokens"])
    if params.get("top_p") is not None:
        kwargs["top_p"] = float(params["top_p"])
    if params.get("stop"):
        kwargs["stop"] = params["stop"]
    for key in ("presence_penalty", "frequency_penalty"):
        if params.get(key) is not None:
            kwargs[key] = float(params[key])
    # Log-probabilities come from the runtime's own sampler: llama-cpp-python's would need logits for every
    # position of the context (logits_all, gigabytes for a 151k vocabulary) and ignore the grammar.
    top_logprobs = int(params.get("top_logprobs") or 0) if params.get("logprobs") else None
    return kwargs, top_logprobs


Runtime = LlamaRuntime | WorkerRuntime


def _generate(runtime: Runtime, model: str, messages: list, optional_params: dict) -> Completion:
    kwargs, top_logprobs = _completion_kwargs(messages, optional_params)
    try:
        return runtime.complete(top_logprobs=top_logprobs, **kwargs)
    except WorkerDied as exc:
        raise EmbeddedWorkerCrashed(str(exc), exc.signal_name, model) from exc
    except ValueError as exc:
        match = _OVERFLOW.search(str(exc))
        if match:
            raise EmbeddedContextOverflow(int(match.group(1)), int(match.group(2)), model) from exc
        raise


def _logprobs_content(completion: Completion) -> list[dict[str, Any]]:
    """OpenAI's ``logprobs.content``: token text and bytes, log-probability, grammar-allowed alternatives."""

    def entry(token: int, logprob: float) -> dict[str, Any]:
        raw = completion.token_bytes(token)
        return {"token": raw.decode("utf-8", errors="replace"), "logprob": logprob, "bytes": list(raw)}

    return [
        {**entry(choice.token, choice.logprob),
         "top_logprobs": [entry(token, logprob) for token, logprob in choice.alternatives]}
        for choice in completion.choices or []
    ]


def _fill(model_response: ModelResponse, completion: Completion, model: str) -> ModelResponse:
    result = completion.result
    choice = result["choices"][0]
    message = choice.get("message") or {}
    model_response.choices[0].message.content = message.get("content") or ""
    model_response.choices[0].finish_reason = choice.get("finish_reason") or "stop"
    if completion.choices is not None:
        model_response.choices[0].logprobs = ChoiceLogprobs(content=_logprobs_content(completion))
    usage = result.get("usage") or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion_tokens = int(usage.get("completion_tokens", 0))
    model_response.usage = Usage(  # type: ignore[attr-defined]
        prompt_tokens=prompt,
        completion_tokens=completion_tokens,
        total_tokens=prompt + completion_tokens,
        prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=completion.reused_tokens),
    )
    model_response.model = f"{EMBEDDED_PROVIDER}/{model}"
    model_response.created = int(result.get("created") or time.time())
    return model_response


# ---------------------------------------------------------------------------------------------- handler


class EmbeddedLlamaLLM(CustomLLM):
    """litellm handler for ``argue-local/<anything>``: the bundled Qwen2.5-Coder-1.5B-Instruct on llama.cpp."""

    def __init__(self, runtime: Runtime):
        super().__init__()
        self.runtime = runtime
        self.prepared = False  # the weights were checked (and assembled) by register_embedded_provider
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()

    def executor(self) -> concurrent.futures.ThreadPoolExecutor:
        """The one thread async callers hand completions to (keeps the event loop free; the model answers one
        prompt at a time anyway)."""
        with self._executor_lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="argue-local")
            return self._executor

    def completion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
        model_response: ModelResponse | None = None, print_verbose: Any = None, encoding: Any = None,
        api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
        acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
        timeout: Any = None, client: Any = None,
    ) -> ModelResponse:
        completion = _generate(self.runtime, model, messages, optional_params or {})
        return _fill(model_response if model_response is not None else ModelResponse(), completion, model)

    async def acompletion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
        model_response: ModelResponse | None = None, print_verbose: Any = None, encoding: Any = None,
        api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
        acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
        timeout: Any = None, client: Any = None,
    ) -> ModelResponse:
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        completion = await loop.run_in_executor(
            self.executor(), ctx.run, _generate, self.runtime, model, messages, optional_params or {}
        )
        return _fill(model_response if model_response is not None else ModelResponse(), completion, model)


_HANDLER = EmbeddedLlamaLLM(WorkerRuntime())


def embedded_runtime() -> Runtime:
    """The runtime that ``argue-local/...`` calls in this process go to."""
    return _HANDLER.runtime


def embedded_kernels() -> KernelChoice | None:
    """The kernel choice of the embedded judge's runtime (None for a runtime without one, e.g. a test's fake)."""
    return getattr(_HANDLER.runtime, "kernels", None)


def embedded_events() -> list[str]:
    """What happened to the embedded judge's worker in this process so far (deaths, restarts), oldest first."""
    return list(getattr(_HANDLER.runtime, "events", ()))


def use_runtime(runtime: Runtime) -> Runtime:
    """Send ``argue-local/...`` calls to ``runtime`` from now on (tests, benchmarks); returns the previous one."""
    previous, _HANDLER.runtime = _HANDLER.runtime, runtime
    return previous


def register_embedded_provider(*, prepare: bool = True, threads: int | None = None, kernels: str | None = None
                               ) -> None:
    """Route ``argue-local/<anything>`` to the embedded model (idempotent). Cost is registered as 0.

    With ``prepare`` (the default) it first checks that the embedded judge can run here and assembles the weights
    if needed (seconds, once per machine), raising ConfigurationError with the reason otherwise: inside a litellm
    call the same problem would surface as a retried ``APIConnectionError``. The model itself loads on first call.
    ``threads`` fixes llama.cpp's thread count (the CLI's ``--threads``); None chooses from the free cores.
    ``kernels`` (auto|safe|fast, the CLI's ``--kernels``) chooses llama.cpp's CPU kernels; None keeps the runtime's.
    """
    with _REGISTER_LOCK:
        if threads is not None:
            _HANDLER.runtime.set_threads(threads)
        if kernels is not None and isinstance(_HANDLER.runtime, WorkerRuntime):
            _HANDLER.runtime.set_kernels(kernels)
        if prepare and not _HANDLER.prepared:
            reason = embedded_available()
            if reason is not None:
                raise ConfigurationError(f"the embedded judge cannot run: {reason}")
            ensure_model_file()
            _HANDLER.prepared = True
        if not any(item.get("provider") == EMBEDDED_PROVIDER for item in litellm.custom_provider_map):
            litellm.custom_provider_map = [
                *litellm.custom_provider_map,
                {"provider": EMBEDDED_PROVIDER, "custom_handler": _HANDLER},
            ]
        # litellm adds custom providers to its provider list lazily, at the next call; do it now so the
        # model registration below resolves the provider instead of printing litellm's "Provider List" help.
        from litellm.utils import custom_llm_setup

        custom_llm_setup()
        if EMBEDDED_MODEL not in litellm.model_cost:
            litellm.register_model({
                EMBEDDED_MODEL: {
                    "litellm_provider": EMBEDDED_PROVIDER,
                    "mode": "chat",
                    "max_input_tokens": _HANDLER.runtime.n_ctx,
                    "max_output_tokens": _HANDLER.runtime.n_ctx,
                    "max_tokens": _HANDLER.runtime.n_ctx,
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_read_input_token_cost": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "supports_response_schema": True,
                }
            })

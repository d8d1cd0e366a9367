"""The embedded offline judge as a litellm provider: ``argue-local/<anything>`` runs in-process on llama.cpp.

``register_embedded_provider()`` adds :class:`EmbeddedLlamaLLM` to ``litellm.custom_provider_map`` under the
provider ``argue-local``; from then on the ordinary structured-output call works unchanged::

    client = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)
    verdict = await client.chat.completions.create(model=EMBEDDED_MODEL, response_model=..., messages=...)

instructor sends OpenAI's ``response_format={"type": "json_schema", "json_schema": {"name", "schema"}}``; the
handler hands llama.cpp ``{"type": "json_object", "schema": ...}``, which compiles the schema to a grammar, so
the output always parses (it may still be cut by ``max_tokens``).

One ``Llama`` per process, loaded on first use. llama.cpp is not thread-safe: every call holds one lock, and
``acompletion`` runs the blocking call on a dedicated single worker thread so the event loop stays free.
Consecutive calls whose prompts share a token prefix (same system message / instruction block first, the
varying part last) reuse the KV cache for that prefix; ``usage.prompt_tokens_details.cached_tokens`` reports
how many prompt tokens were reused.
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
from litellm.types.utils import ModelResponse, PromptTokensDetailsWrapper, Usage

from judge.errors import ConfigurationError
from judge.llm.embedded import (
    EMBEDDED_MODEL,
    EMBEDDED_PROVIDER,
    INSTALL_HINT,
    embedded_available,
    ensure_model_file,
)

N_CTX = 8192
SEED = 20240714
DEFAULT_TEMPERATURE = 0.0
DEFAULT_MAX_TOKENS = 1024

_LOCK = threading.RLock()                 # guards the Llama object: loading and every call
_EXECUTOR: concurrent.futures.ThreadPoolExecutor | None = None
_LLAMA: Any = None
_LOAD_SECONDS: float | None = None
_PREPARED = False


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


# ---------------------------------------------------------------------------------------------- model


def _cpu_threads() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one, else os.cpu_count())."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def get_llama() -> Any:
    """The process's one ``llama_cpp.Llama``, loading it (and assembling the weights) on first use."""
    global _LLAMA, _LOAD_SECONDS
    with _LOCK:
        if _LLAMA is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ConfigurationError(f"llama-cpp-python is not installed; run: {INSTALL_HINT}") from exc

            path = ensure_model_file()
            threads = _cpu_threads()
            started = time.perf_counter()
            _LLAMA = Llama(
                model_path=str(path),
                n_ctx=N_CTX,
                n_threads=threads,
                n_threads_batch=threads,
                seed=SEED,
                verbose=False,
            )
            _LOAD_SECONDS = time.perf_counter() - started
        return _LLAMA


def load_seconds() -> float | None:
    """Seconds the model load took in this process (None before the first call)."""
    return _LOAD_SECONDS


def unload() -> None:
    """Drop the loaded model (frees its memory); the next call loads it again."""
    global _LLAMA, _LOAD_SECONDS
    with _LOCK:
        if _LLAMA is not None:
            close = getattr(_LLAMA, "close", None)
            if close is not None:
                close()
        _LLAMA = None
        _LOAD_SECONDS = None


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _EXECUTOR
    with _LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="argue-local")
        return _EXECUTOR


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


def _common_prefix(a: Any, b: Any) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _generate(model: str, messages: list, optional_params: dict) -> tuple[dict, int]:
    """Run one chat completion under the lock; returns llama-cpp-python's response dict and reused tokens."""
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
        "temperature": DEFAULT_TEMPERATURE if params.get("temperature") is None else float(params["temperature"]),
        "max_tokens": DEFAULT_MAX_TOKENS if params.get("max_tokens") is None else int(params["max_tokens"]),
        "seed": SEED if params.get("seed") is None else int(params["seed"]),
        "repeat_penalty": 1.0,  # judgments quote the documents; the chat handler's 1.1 default would fight that
        "response_format": translate_response_format(params.get("response_format")),
    }
    if params.get("max_completion_tokens") is not None and params.get("max_tokens") is None:
        kwargs["max_tokens"] = int(params["max_completion_tokens"])
    if params.get("top_p") is not None:
        kwargs["top_p"] = float(params["top_p"])
    if params.get("stop"):
        kwargs["stop"] = params["stop"]
    for key in ("presence_penalty", "frequency_penalty"):
        if params.get(key) is not None:
            kwargs[key] = float(params[key])

    with _LOCK:
        llama = get_llama()
        try:
            before = list(llama._input_ids[: llama.n_tokens])
        except Exception:  # private attributes; only used to report cache reuse
            before = []
        try:
            result = llama.create_chat_completion(**kwargs)
        except ValueError as exc:
            match = _OVERFLOW.search(str(exc))
            if match:
                raise EmbeddedContextOverflow(int(match.group(1)), int(match.group(2)), model) from exc
            raise
        prompt_tokens = int(result.get("usage", {}).get("prompt_tokens", 0))
        try:
            reused = min(_common_prefix(before, llama._input_ids[:prompt_tokens]), max(prompt_tokens - 1, 0))
        except Exception:
            reused = 0
    return result, reused


def _fill(model_response: ModelResponse, result: dict, reused: int, model: str) -> ModelResponse:
    choice = result["choices"][0]
    message = choice.get("message") or {}
    model_response.choices[0].message.content = message.get("content") or ""
    model_response.choices[0].finish_reason = choice.get("finish_reason") or "stop"
    usage = result.get("usage") or {}
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    model_response.usage = Usage(  # type: ignore[attr-defined]
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details=PromptTokensDetailsWrapper(cached_tokens=reused),
    )
    model_response.model = f"{EMBEDDED_PROVIDER}/{model}"
    model_response.created = int(result.get("created") or time.time())
    return model_response


# ---------------------------------------------------------------------------------------------- handler


class EmbeddedLlamaLLM(CustomLLM):
    """litellm handler for ``argue-local/<anything>``: the bundled Qwen2.5-Coder-1.5B-Instruct on llama.cpp."""

    def completion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
        model_response: ModelResponse | None = None, print_verbose: Any = None, encoding: Any = None,
        api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
        acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
        timeout: Any = None, client: Any = None,
    ) -> ModelResponse:
        result, reused = _generate(model, messages, optional_params or {})
        return _fill(model_response if model_response is not None else ModelResponse(), result, reused, model)

    async def acompletion(  # type: ignore[override]
        self, model: str, messages: list, api_base: Any = None, custom_prompt_dict: Any = None,
        model_response: ModelResponse | None = None, print_verbose: Any = None, encoding: Any = None,
        api_key: Any = None, logging_obj: Any = None, optional_params: dict | None = None,
        acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
        timeout: Any = None, client: Any = None,
    ) -> ModelResponse:
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        result, reused = await loop.run_in_executor(
            _executor(), ctx.run, _generate, model, messages, optional_params or {}
        )
        return _fill(model_response if model_response is not None else ModelResponse(), result, reused, model)


_HANDLER = EmbeddedLlamaLLM()


def register_embedded_provider(*, prepare: bool = True) -> None:
    """Route ``argue-local/<anything>`` to the embedded model (idempotent). Cost is registered as 0.

    With ``prepare`` (the default) it first checks that the embedded judge can run here and assembles the weights
    if needed (seconds, once per machine), raising ConfigurationError with the reason otherwise: inside a litellm
    call the same problem would surface as a retried ``APIConnectionError``. The model itself loads on first call.
    """
    global _PREPARED
    with _LOCK:
        if prepare and not _PREPARED:
            reason = embedded_available()
            if reason is not None:
                raise ConfigurationError(f"the embedded judge cannot run: {reason}")
            ensure_model_file()
            _PREPARED = True
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
                    "max_input_tokens": N_CTX,
                    "max_output_tokens": N_CTX,
                    "max_tokens": N_CTX,
                    "input_cost_per_token": 0.0,
                    "output_cost_per_token": 0.0,
                    "cache_read_input_token_cost": 0.0,
                    "cache_creation_input_token_cost": 0.0,
                    "supports_response_schema": True,
                }
            })

"""The decision client: litellm + instructor behind one cache, one retry policy and one budget.

- Transport faults (rate limits, timeouts, connection errors, 5xx) are retried here with tenacity, exponential
  backoff with jitter; litellm and the OpenAI SDK are told not to retry on their own, so every retry is counted.
- Invalid output is re-asked by instructor (the validator's message goes back to the model).
- A decision that still fails becomes an explicit failure (never a default verdict) and is reported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import litellm
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from judge.errors import BudgetExceeded, ConfigurationError
from judge.llm.cache.store import CachedAnswer, DecisionCache, cache_key
from judge.llm.instructor_compat import (
    IncompleteOutputException,
    InstructorRetryException,
    Untemplated,
    as_templated,
    instructor_model,
    provider_error_behind,
    structured_completions,
)
from judge.llm.judges import judge_of
from judge.llm.logprob import TOP_LOGPROBS, completion_logprobs
from judge.llm.pricing import Prices, cached_prompt_tokens, estimate_cost
from judge.llm.reasoning import completion_reasoning, reasoning_tokens
from judge.settings import ModelSettings, RetryPolicy

litellm.suppress_debug_info = True  # no "Give Feedback" banner on every exception

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError, litellm.InternalServerError,
    litellm.ServiceUnavailableError, litellm.BadGatewayError,
)
# Errors that will not go away by asking the next decision: stop the run and say how to fix it.
FATAL_ERRORS: tuple[type[BaseException], ...] = (
    litellm.AuthenticationError, litellm.NotFoundError, litellm.PermissionDeniedError,
)

# Every provider error we handle: instructor wraps them, provider_error_behind unwraps them.
PROVIDER_ERRORS: tuple[type[BaseException], ...] = (
    *TRANSIENT_ERRORS, *FATAL_ERRORS, litellm.BadRequestError, litellm.APIError,
)


@dataclass
class Usage:
    model_calls: int = 0      # decisions sent to the model (each may include re-asks)
    cache_hits: int = 0
    transport_retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    # Of those, the prompt tokens the provider served from its prompt cache (llama.cpp's reused KV state,
    # vLLM's prefix cache, OpenAI's and Anthropic's prompt caching): what putting the document first earns.
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    # Of those, the tokens the provider says the model spent reasoning before it answered, and what they cost.
    reasoning_tokens: int = 0
    reasoning_cost: float = 0.0
    cost: float = 0.0
    cost_known: bool = True
    # Decisions left unasked once the server was given up on (RetryPolicy.give_up_after), and why it was.
    unasked: int = 0
    stopped: str | None = None

    @property
    def decisions(self) -> int:
        return self.model_calls + self.cache_hits


@dataclass(frozen=True)
class Answered:
    response: BaseModel | None
    error: str | None
    cached: bool
    # With log-probabilities asked for: the completion's `logprobs.content` (compacted; [] when the provider sent
    # none) and its text, the JSON they spell. None when not asked for (or no answer).
    logprobs: list[dict[str, Any]] | None = None
    output: str | None = None
    # With the reasoning kept (ModelSettings.keep_reasoning): what the judge thought before it answered ("" when
    # it gave none). None when not kept (or no answer).
    reasoning: str | None = None


class DecisionClient:
    def __init__(self, settings: ModelSettings, cache: DecisionCache | None = None, *, concurrency: int = 4,
                 retry: RetryPolicy = RetryPolicy(), max_cost: float | None = None,
                 price_per_1k: float | None = None,
                 on_decision: Callable[[bool], None] | None = None,
                 completions: Callable[..., Any] | None = None):
        self.judge = judge_of(settings)  # the one parse of the model: what it is, takes and can do
        self.settings = self.judge.settings
        self.cache = cache
        self.retry = retry
        self.max_cost = max_cost
        self.on_decision = on_decision
        self.usage = Usage()
        self.logprobs = self.judge.logprobs
        self.keep_reasoning = self.settings.keep_reasoning
        concurrency = min(concurrency, self.judge.max_concurrency() or concurrency)
        self._slots = asyncio.Semaphore(concurrency)
        keep_up_with_logging(concurrency)
        self._reserved = 0.0
        self.prices = Prices(self.settings.model, price_per_1k)  # before a Router is built (see Prices)
        self._in_flight: dict[str, asyncio.Future[Answered]] = {}
        # A Router (several servers) picks one per call and fails over; instructor wraps its acompletion exactly as
        # it wraps litellm's, so re-asks and validation are unchanged. The embedded judge registers its provider.
        # `completions` stands in for them (judge.llm.batch.BatchRounds: provider batch jobs): a decision is then
        # asked, validated and re-asked exactly as online.
        connected = self.judge.connect()
        self._instructor = structured_completions(completions or connected, self.judge.mode)
        self._target: dict[str, Any] = self.judge.target()
        self._events_before = len(self.judge.runtime_state()[1])
        # Remote caches (Redis) block on the network: their calls go to a thread so the event loop keeps going.
        self._cache_blocks = cache is not None and cache.blocking
        # Transport failures since the server last answered (any answer, valid or not), across all decisions.
        self._failures_in_a_row = 0
        self._stopped = asyncio.Event()  # set when the server is given up on: wakes retries from their backoff

    def embedded_report(self) -> tuple[dict[str, Any] | None, list[str]]:
        """For the embedded judge: its kernel choice (for run-summary.json) and what happened to its worker since
        this client was made (deaths, a restart with safe kernels); (None, []) for other models."""
        kernels, events = self.judge.runtime_state()
        return kernels, events[self._events_before:]

    async def ask(self, messages: list[dict[str, str]], response_model: type[BaseModel],
                  context: dict[str, Any], contract: str = "") -> Answered:
        """One validated answer (or an explicit failure). `contract` is an opaque part of the cache key: the
        caller's hash of whatever, beyond the JSON schema, decides which answers are valid (its validators)."""
        key = cache_key(model=self.settings.model, messages=messages, schema=json_schema(response_model),
                        sampling=self.judge.cache_sampling(), contract=contract)
        answered = await self._from_cache(key, response_model, context)
        if answered is None and self.usage.stopped:
            answered = self._not_asked()
        elif answered is None:
            answered = await self._ask_once(key, messages, response_model, context)
        if self.on_decision:
            self.on_decision(answered.cached)
        return answered

    async def _ask_once(self, key: str, messages: list[dict[str, str]], response_model: type[BaseModel],
                        context: dict[str, Any]) -> Answered:
        """Identical questions in flight share one answer: a rerun replays one cached answer per key, so the
        first run must not record two (a local model's output can depend on its KV-cache state)."""
        pending = self._in_flight.get(key)
        if pending is not None:
            shared = await asyncio.shield(pending)
            self.usage.cache_hits += 1
            if shared.error is not None:  # each decision that ends in an error counts as a failure
                self.usage.failures += 1
            return replace(shared, cached=True)
        future: asyncio.Future[Answered] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            async with self._slots:
                answered = await self._call(key, messages, response_model, context)
            future.set_result(answered)
            return answered
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, and nobody else needs to
            raise
        finally:
            del self._in_flight[key]

    async def _cache_get(self, key: str) -> CachedAnswer | None:
        if self.cache is None:
            return None
        return await asyncio.to_thread(self.cache.get, key) if self._cache_blocks else self.cache.get(key)

    async def _cache_put(self, key: str, answer: CachedAnswer) -> None:
        if self.cache is None:
            return
        if self._cache_blocks:
            await asyncio.to_thread(self.cache.put, key, answer)
        else:
            self.cache.put(key, answer)

    async def _from_cache(self, key: str, response_model: type[BaseModel], context: dict[str, Any]
                          ) -> Answered | None:
        cached = await self._cache_get(key)
        if cached is None or (self.logprobs and cached.logprobs is None) \
                or (self.keep_reasoning and cached.reasoning is None):
            return None  # absent, or cached by a run that did not ask for log-probabilities or keep the reasoning
        try:
            response = response_model.model_validate(cached.response, context=context)
        except ValidationError:
            return None  # the contract tightened since this answer was cached: ask again
        self.usage.cache_hits += 1
        # a run that does not ask gets none, cold or warm, so reruns stay byte-identical
        reasoning = cached.reasoning if self.keep_reasoning else None
        if not self.logprobs:
            return Answered(response, None, cached=True, reasoning=reasoning)
        return Answered(response, None, cached=True, logprobs=cached.logprobs, output=cached.output,
                        reasoning=reasoning)

    async def _call(self, key: str, messages: list[dict[str, str]], response_model: type[BaseModel],
                    context: dict[str, Any]) -> Answered:
        estimate = self._reserve(messages)
        try:
            response, completion = await self._with_transport_retries(messages, response_model, context)
        except InstructorRetryException as exc:
            # Not cached: a server that sent garbage may answer well next time (the next run asks again).
            error = f"invalid output after {self.retry.reasks} re-asks: {_one_line(exc)}"
            self._settle(estimate, None)
            self.usage.failures += 1
            return Answered(None, error, cached=False)
        except IncompleteOutputException:
            # The model ran into max_tokens (a small local model can loop inside its grammar): a failed decision,
            # not a crashed run, and not cached (another run, or a larger --max-tokens, may finish it).
            self._settle(estimate, None)
            self.usage.failures += 1
            return Answered(None, f"the answer was cut off at --max-tokens {self.settings.max_tokens} before it was "
                            "complete", cached=False)
        except _GaveUp:
            self._settle(estimate, None)
            return self._not_asked()
        except FATAL_ERRORS as exc:
            raise ConfigurationError(f"model {self.settings.model!r} refused the request: {_one_line(exc)}") from exc
        except PROVIDER_ERRORS as exc:
            self._settle(estimate, None)
            self.usage.failures += 1
            return Answered(None, f"{type(exc).__name__}: {_one_line(exc)}", cached=False)
        tokens_in, tokens_out, cost = self._settle(estimate, completion)
        logprobs, output = completion_logprobs(completion) if self.logprobs else (None, None)
        reasoning = completion_reasoning(completion) if self.keep_reasoning else None
        await self._cache_put(key, CachedAnswer(response=response.model_dump(mode="json"),
                                                prompt_tokens=tokens_in, completion_tokens=tokens_out, cost=cost,
                                                logprobs=logprobs, output=output, reasoning=reasoning))
        return Answered(response, None, cached=False, logprobs=logprobs, output=output, reasoning=reasoning)

    async def _with_transport_retries(self, messages, response_model, context):
        def count_retry(_state: Any) -> None:
            self.usage.transport_retries += 1

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.retry.transport_attempts),
            wait=wait_random_exponential(multiplier=self.retry.wait_multiplier, max=self.retry.wait_max),
            retry=retry_if_exception_type(TRANSIENT_ERRORS),
            before_sleep=count_retry,
            sleep=self._backoff,
            reraise=True,
        )
        self.usage.model_calls += 1  # one decision sent; its transport retries are counted separately
        async for attempt in retrying:
            with attempt:
                if self.usage.stopped:
                    raise _GaveUp
                try:
                    # num_retries=0: litellm hands it to the OpenAI SDK as max_retries, so the SDK does not
                    # retry behind our back; instructor's max_retries is its re-ask budget, not HTTP retries.
                    answer = await self._instructor.chat.completions.create_with_completion(
                        messages=as_templated(messages) if context else messages,
                        response_model=instructor_model(response_model), context=Untemplated(context),
                        max_retries=self.retry.reasks, **self._target, timeout=self.settings.timeout,
                        num_retries=0, drop_params=True, **self.judge.call_options(),
                        **({"logprobs": True, "top_logprobs": TOP_LOGPROBS} if self.logprobs else {}),
                    )
                except InstructorRetryException as exc:
                    api_error = provider_error_behind(exc, PROVIDER_ERRORS)
                    self._server_answered(api_error)
                    if api_error is not None:  # instructor wraps HTTP errors; retry or report those as such
                        raise api_error from exc
                    raise
                except Exception as exc:  # not CancelledError: a cancelled call is no answer, nor a failure
                    self._server_answered(exc)
                    raise
                self._server_answered(None)
                return answer
        raise AssertionError("unreachable: tenacity reraises")  # pragma: no cover

    def _server_answered(self, error: BaseException | None) -> None:
        """Count transport failures in a row across all decisions (any answer from the server, valid or not,
        ends a row); after `give_up_after` of them, stop asking (the rest of the run is left unasked). A rate
        limit neither counts nor ends a row: the server is up and says to slow down, which the backoff does (a
        busy hosted provider sends runs of them that must not stop a run)."""
        if isinstance(error, litellm.RateLimitError):
            return
        if error is None or not isinstance(error, TRANSIENT_ERRORS):
            self._failures_in_a_row = 0
            return
        self._failures_in_a_row += 1
        if self._failures_in_a_row >= self.retry.give_up_after and not self.usage.stopped:
            where = ", ".join(self.judge.servers()) or f"the provider of {self.settings.model}"
            self.usage.stopped = (
                f"gave up on {where} after {self._failures_in_a_row} transport failures in a row with no answer "
                f"between (last: {type(error).__name__}: {_one_line(error)[:120]}); the decisions not yet asked "
                "are recorded failed and not cached: check that the server is up and reachable (--api-base, "
                "--timeout), then rerun with --resume to ask them")
            self._stopped.set()

    async def _backoff(self, seconds: float) -> None:
        """tenacity's sleep between transport attempts, cut short when the server is given up on."""
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except TimeoutError:
            pass

    def _not_asked(self) -> Answered:
        """The failure of a decision left unasked because the server was given up on (never cached)."""
        self.usage.unasked += 1
        self.usage.failures += 1
        return Answered(None, f"not asked: {self.usage.stopped}", cached=False)

    def _reserve(self, messages: list[dict[str, str]]) -> float:
        """Refuse a call that could take the run past --max-cost; in-flight calls hold their estimate."""
        if self.max_cost is None:
            return 0.0
        estimate = estimate_cost(self.settings, messages, self.prices.price_per_1k)
        if self.usage.cost + self._reserved + estimate > self.max_cost:
            raise BudgetExceeded(
                f"the next decision could cost ~${estimate:.4f}; ${self.usage.cost:.4f} spent of --max-cost "
                f"${self.max_cost:.4f}")
        self._reserved += estimate
        return estimate

    def _settle(self, estimate: float, completion: Any) -> tuple[int, int, float]:
        self._reserved -= estimate
        if completion is None:
            return 0, 0, 0.0
        usage = getattr(completion, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        self.usage.cached_prompt_tokens += cached_prompt_tokens(usage)
        cost = self.prices.cost_of(completion, tokens_in, tokens_out)
        if cost is None:
            self.usage.cost_known = False
            cost = 0.0
        thought = reasoning_tokens(usage)
        if thought:
            self.usage.reasoning_tokens += thought
            self.usage.reasoning_cost += self.prices.output_cost(thought) or 0.0
        self.usage.prompt_tokens += tokens_in
        self.usage.completion_tokens += tokens_out
        self.usage.cost += cost
        return tokens_in, tokens_out, cost


class _GaveUp(Exception):
    """Raised inside the transport retries once the server has been given up on: the decision is not asked."""


def keep_up_with_logging(concurrency: int) -> None:
    """litellm queues a success-logging coroutine per call (holding its request and response) and runs at most
    100 at once (LOGGING_WORKER_CONCURRENCY, read when litellm is imported). On a loop this busy they finish slower
    than calls: with 256 calls in flight, 2,982 waited after 8,000 decisions and RSS grew ~110 MB per 1,000 reports;
    with room for 4 per call in flight, none waited. Takes effect in the next event loop that logs (each eval)."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    except ImportError:  # another litellm layout: nothing to raise
        return
    if getattr(GLOBAL_LOGGING_WORKER, "concurrency", 4 * concurrency) < 4 * concurrency:
        GLOBAL_LOGGING_WORKER.concurrency = 4 * concurrency


@cache
def json_schema(response_model: type[BaseModel]) -> dict[str, Any]:
    """Built once per model: pydantic rebuilds it on every call, which dominated fully cached reruns."""
    return response_model.model_json_schema()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")

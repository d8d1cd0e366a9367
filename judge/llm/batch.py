"""Provider batch jobs: every completion a run asks goes into a file of requests answered within the provider's
window, at its batch price, instead of one online call each.

The run needs no rounds of its own. `BatchRounds.acompletion` stands where `litellm.acompletion` stands under
instructor (as a Router's does), so each decision is asked exactly as online -- same messages, same validation,
same re-asks, same cache -- except that its completion waits in a queue. When every walk of the run is parked on
a question (no new request for `idle` seconds), the queue is one *round*: written as JSONL, uploaded, submitted as
one or more jobs (split at the provider's limits), polled until they end, and each answer handed back to the
walk that asked it. The walks then go on to their next diamond, which fills the next round. A re-ask (invalid
output) is a new completion, so it lands in the next round too; a line the job failed or left unanswered
(expired, cancelled) is raised as a transport error, which the client retries -- in the next round -- and
counts like an online failure.

Nothing is paid twice. A request's `custom_id` is the hash of its body, so the same question has the same id in
every run. Each submitted job is written to the journal (OUT/.argue-run/batch-journal.jsonl of the command's output
folder) before it is polled: a command that is killed and started again finds its questions in a job of the
journal and polls that job (or reads its output) instead of submitting them again; answers already handed back
are in the decision cache and never asked.

Every command that asks a model takes it the same way (eval, nuggets create and pool, calibrate): `check_batch`
refuses what cannot be batched before anything is read, and `BatchJobs.rounds` gives the `acompletion` the
command's DecisionClient asks through.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import litellm

from judge.errors import ConfigurationError
from judge.llm.judges import judge_of
from judge.settings import ModelSettings

# Providers whose batch API litellm drives with OpenAI-format request files (the format written here).
BATCH_PROVIDERS = ("openai", "azure", "hosted_vllm", "litellm_proxy")
# OpenAI's limits per job: 50,000 requests and a 200 MB input file (kept under, for the JSON framing).
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000
# Batch prices where litellm's price map has none: what OpenAI, Anthropic and Vertex charge (half the online price).
DEFAULT_DISCOUNT = 0.5
JOURNAL = "batch-journal.jsonl"   # in the run's working folder (judge.formats.atomic.WorkingFolder)
FINISHED = ("completed", "failed", "expired", "cancelled")
# What the OpenAI chat-completions body takes of the arguments instructor passes on; the rest (api_base, timeout,
# num_retries, drop_params, ...) are litellm's own and stay out of the request file.
BODY_KEYS = ("messages", "response_format", "temperature", "seed", "max_tokens", "max_completion_tokens",
             "logprobs", "top_logprobs", "top_p", "stop", "tools", "tool_choice", "reasoning_effort")


def batch_provider(model: str) -> str:
    """The litellm provider of `model` if its batch API is supported here; otherwise a one-line ConfigurationError
    naming the providers that are."""
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    if provider not in BATCH_PROVIDERS:
        raise ConfigurationError(
            f"--batch: {model!r} is served by {provider!r}, which has no batch API argue-judge can drive; batch jobs "
            f"work with the providers {', '.join(BATCH_PROVIDERS)} (drop --batch to ask online)")
    return provider


def check_batch(model: ModelSettings, ray: str | None = None) -> None:
    """`batch` with a judge and executor that can take it: ConfigurationError (one line) otherwise."""
    judge = judge_of(model)
    if judge.in_process:
        raise ConfigurationError("--batch needs a hosted model with a batch API (the embedded judge answers "
                                 "locally, one prompt at a time): give --model, e.g. --model openai/gpt-4o-mini")
    if model.routed:
        raise ConfigurationError("--batch submits its jobs to one server: give one --api-base (a Router's fail-over "
                                 "has no batch jobs)")
    if ray is not None:
        raise ConfigurationError("--batch and --ray do not go together: a provider batch job already runs the "
                                 "whole round at the provider; drop --ray")
    batch_provider(model.model)


@dataclass(frozen=True)
class BatchJobs:
    """How a command asks through batch jobs: `poll` seconds between two looks at a running job, and the journal
    of its jobs (None: not kept, so a command killed and started again submits its questions again)."""

    poll: float = 30.0
    journal: Path | None = None

    def done(self) -> None:
        """The command finished (every answer in its decision cache): the journal goes (BatchJournal.forget)."""
        forget_journal(self.journal)

    def rounds(self, model: ModelSettings, on_state: Callable[[RoundStats], None] | None = None) -> BatchRounds:
        """The rounds a DecisionClient asks through (its `completions=`), for the checked `model`."""
        return BatchRounds(model.model, api_base=model.api_base, api_key=model.api_key,  # type: ignore[arg-type]
                           journal=self.journal, poll_interval=self.poll, on_state=on_state)


def forget_journal(path: Path | None) -> None:
    """Remove a finished command's journal, and its folder if nothing else is in it (a killed eval's log may be)."""
    if path is None:
        return
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()
    except OSError:
        pass  # not empty, or gone already


def batch_line(batch: dict[str, Any]) -> str:
    """What a command prints of its batch jobs (RoundStats.as_dict())."""
    resumed = f" ({n} of an earlier run polled)" if (n := batch["resumed_jobs"]) else ""
    return (f"batch: {batch['rounds']} rounds, {batch['jobs']} jobs submitted{resumed}, {batch['requests']} "
            f"requests, {batch['failed_lines']} re-asked after a failed line; cost at the batch price")


def custom_id(body: dict[str, Any]) -> str:
    """The request's id in a job: the hash of its body, so the same question has the same id in every run."""
    return "aj-" + hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:40]


@dataclass
class RoundStats:
    """What the batch path did, for the progress line and run-summary.json."""

    rounds: int = 0
    requests: int = 0           # request lines submitted (a re-submitted line counts again)
    jobs: int = 0               # jobs submitted by this run
    resumed_jobs: int = 0       # jobs of an earlier run found in the journal and polled instead of resubmitted
    failed_lines: int = 0       # lines a job failed or left unanswered (re-asked in the next round)
    states: dict[str, int] = field(default_factory=dict)  # jobs by their last known status
    wall: float = 0.0           # seconds spent waiting on jobs

    def as_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "requests": self.requests, "jobs": self.jobs,
                "resumed_jobs": self.resumed_jobs, "failed_lines": self.failed_lines,
                "states": dict(sorted(self.states.items())), "wait_seconds": round(self.wall, 1)}


class BatchJournal:
    """The jobs a run submitted, one JSON line per event, appended and flushed before the job is polled: the ids
    each job holds, its last known status, and the ids it answered with an error (never taken from it again)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.jobs: dict[str, dict[str, Any]] = {}   # batch id -> {"ids": set, "failed": set, "status": str}
        if path is not None and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                    self._apply(record["batch_id"], record)
                except (ValueError, KeyError, TypeError):
                    # The last line of a killed run may be cut short; every line before it was flushed whole.
                    continue

    def _apply(self, batch_id: str, record: dict[str, Any]) -> None:
        job = self.jobs.setdefault(batch_id, {"ids": set(), "failed": set(), "status": None})
        job["ids"].update(record.get("ids", ()))
        job["failed"].update(record.get("failed", ()))
        job["status"] = record.get("status", job["status"])

    def job_of(self, request_id: str) -> str | None:
        """The latest journalled job that holds `request_id` and did not fail it: its answer is paid for (or
        still coming), so the run reads it from there instead of submitting the question again."""
        for batch_id in reversed(list(self.jobs)):
            job = self.jobs[batch_id]
            if request_id in job["ids"]:
                return None if request_id in job["failed"] else batch_id
        return None

    def forget(self) -> None:
        """The command finished, every answer in the decision cache: its jobs are done with (forget_journal)."""
        forget_journal(self.path)

    def record(self, batch_id: str, **fields: Any) -> None:
        self._apply(batch_id, fields)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"batch_id": batch_id, "time": round(time.time(), 3), **fields}) + "\n")
            out.flush()


@dataclass
class _Waiting:
    body: dict[str, Any]
    futures: list[asyncio.Future[Any]]


class BatchRounds:
    """`acompletion` for instructor that answers through provider batch jobs, in rounds (module docstring)."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 journal: Path | None = None, poll_interval: float = 30.0, idle: float = 0.5,
                 max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES,
                 on_state: Callable[[RoundStats], None] | None = None):
        self.provider = batch_provider(model)
        self.model = model.split("/", 1)[1] if "/" in model else model
        self.litellm_model = model
        self.api_base, self.api_key = api_base, api_key
        self.journal = BatchJournal(journal)
        self.poll_interval, self.idle = poll_interval, idle
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.on_state = on_state
        self.stats = RoundStats()
        self._queue: dict[str, _Waiting] = {}
        self._arrivals = 0
        self._flusher: asyncio.Task[None] | None = None
        self._rounds: set[asyncio.Task[None]] = set()  # the running rounds, held so they are not collected
        self._status: dict[str, str] = {}

    # -- what instructor calls -----------------------------------------------------------------------------------
    async def acompletion(self, **kwargs: Any) -> litellm.ModelResponse:
        body = {key: kwargs[key] for key in BODY_KEYS if kwargs.get(key) is not None}
        body["model"] = self.model
        request_id = custom_id(body)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        waiting = self._queue.get(request_id)
        if waiting is None:
            self._queue[request_id] = _Waiting(body, [future])
        else:
            waiting.futures.append(future)
        self._arrivals += 1
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_when_idle())
        return await future

    # -- rounds ----------------------------------------------------------------------------------------------
    async def _flush_when_idle(self) -> None:
        """Wait until no question has arrived for `idle` seconds (every walk is parked), then send the round."""
        while True:
            seen = self._arrivals
            await asyncio.sleep(self.idle)
            if self._arrivals == seen or len(self._queue) >= self.max_requests:
                break
        queue, self._queue = self._queue, {}
        self._flusher = None
        task = asyncio.create_task(self._round(queue))
        self._rounds.add(task)
        task.add_done_callback(self._rounds.discard)

    async def _round(self, queue: dict[str, _Waiting]) -> None:
        self.stats.rounds += 1
        try:
            resumed: dict[str, list[str]] = {}
            fresh: list[str] = []
            for request_id in queue:
                batch_id = self.journal.job_of(request_id)
                if batch_id is None:
                    fresh.append(request_id)
                else:
                    resumed.setdefault(batch_id, []).append(request_id)
            jobs = [self._collect(batch_id, ids, queue, resumed=True) for batch_id, ids in resumed.items()]
            jobs += [self._submit_and_collect(chunk, queue) for chunk in self._chunks(fresh, queue)]
            started = time.monotonic()
            results = await asyncio.gather(*jobs, return_exceptions=True)
            self.stats.wall += time.monotonic() - started
            for result in results:
                if isinstance(result, BaseException):
                    raise result
        except BaseException as exc:
            # A job that could not be submitted or read (the provider refused it, the key is wrong): every
            # question of the round gets that error, as each online call would have.
            for waiting in queue.values():
                for future in waiting.futures:
                    if not future.done():
                        future.set_exception(exc if isinstance(exc, Exception) else asyncio.CancelledError())
            if not isinstance(exc, Exception):
                raise

    def _chunks(self, ids: list[str], queue: dict[str, _Waiting]) -> list[list[str]]:
        chunks: list[list[str]] = []
        size = 0
        for request_id in ids:
            line = len(self._line(request_id, queue[request_id].body))
            if not chunks or len(chunks[-1]) >= self.max_requests or size + line > self.max_bytes:
                chunks.append([])
                size = 0
            chunks[-1].append(request_id)
            size += line
        return chunks

    def _line(self, request_id: str, body: dict[str, Any]) -> bytes:
        return (json.dumps({"custom_id": request_id, "method": "POST", "url": "/v1/chat/completions",
                            "body": body}, ensure_ascii=False) + "\n").encode()

    def _provider_args(self) -> dict[str, Any]:
        return {"custom_llm_provider": self.provider, "api_base": self.api_base, "api_key": self.api_key}

    async def _submit_and_collect(self, ids: list[str], queue: dict[str, _Waiting]) -> None:
        content = b"".join(self._line(i, queue[i].body) for i in ids)
        uploaded = await litellm.acreate_file(file=(f"argue-judge-round-{self.stats.rounds}.jsonl", content),
                                              purpose="batch", **self._provider_args())
        job = await litellm.acreate_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                          input_file_id=uploaded.id, **self._provider_args())
        self.journal.record(job.id, ids=ids, status=job.status, input_file_id=uploaded.id, round=self.stats.rounds)
        self._seen(job.id, job.status)
        self.stats.jobs += 1
        self.stats.requests += len(ids)
        await self._collect(job.id, ids, queue, resumed=False)

    async def _collect(self, batch_id: str, ids: list[str], queue: dict[str, _Waiting], *, resumed: bool) -> None:
        """Poll the job until it ends, then hand each of `ids` its answer, or a transport error to re-ask."""
        if resumed:
            self.stats.resumed_jobs += 1
        while True:
            job = await litellm.aretrieve_batch(batch_id=batch_id, **self._provider_args())
            self._seen(batch_id, job.status)
            if job.status in FINISHED:
                break
            await asyncio.sleep(self.poll_interval)
        answers: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        if job.output_file_id:
            for record in await self._lines(job.output_file_id):
                response = record.get("response") or {}
                if response.get("status_code") == 200:
                    answers[record["custom_id"]] = response["body"]
                else:
                    errors[record["custom_id"]] = json.dumps(response.get("body"))[:200]
        if job.error_file_id:
            for record in await self._lines(job.error_file_id):
                error = record.get("error") or {}
                errors[record["custom_id"]] = f"{error.get('code')}: {error.get('message')}"
        failed = [i for i in ids if i not in answers]
        self.journal.record(batch_id, status=job.status, failed=failed)
        for request_id in ids:
            waiting = queue[request_id]
            if request_id in answers:
                response = self._response(answers[request_id])
                for future in waiting.futures:
                    if not future.done():
                        future.set_result(response)
                continue
            self.stats.failed_lines += 1
            why = errors.get(request_id, f"no answer: the job ended {job.status}")
            failure = litellm.APIConnectionError(message=f"batch {batch_id}: {why}", llm_provider=self.provider,
                                                 model=self.litellm_model)
            for future in waiting.futures:
                if not future.done():
                    future.set_exception(failure)

    async def _lines(self, file_id: str) -> list[dict[str, Any]]:
        content = await litellm.afile_content(file_id=file_id, **self._provider_args())
        return [json.loads(line) for line in content.content.decode().splitlines() if line.strip()]

    def _response(self, body: dict[str, Any]) -> litellm.ModelResponse:
        response = litellm.ModelResponse(**body)
        usage = body.get("usage") or {}
        cost = batch_cost(self.litellm_model, int(usage.get("prompt_tokens") or 0),
                          int(usage.get("completion_tokens") or 0))
        # The client reads litellm's own price here first (judge.llm.pricing.Prices): the batch price, not online.
        response._hidden_params = {**(getattr(response, "_hidden_params", None) or {}), "response_cost": cost}
        return response

    def _seen(self, batch_id: str, status: str) -> None:
        if self._status.get(batch_id) == status:
            return
        self._status[batch_id] = status
        self.stats.states = dict(Counter(self._status.values()))
        if self.journal.jobs.get(batch_id, {}).get("status") != status:
            self.journal.record(batch_id, status=status)
        if self.on_state is not None:
            self.on_state(self.stats)


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of one answer at the provider's batch price: litellm's map where it has one, else half the online
    price; None when the model has no known price."""
    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1]) or {}
    batch_in, batch_out = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if batch_in is not None and batch_out is not None:
        return prompt_tokens * float(batch_in) + completion_tokens * float(batch_out)
    try:
        online_in, online_out = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                       completion_tokens=completion_tokens)
    except Exception:  # litellm raises a bare Exception for models missing from its price map
        return None
    return DEFAULT_DISCOUNT * float(online_in + online_out)

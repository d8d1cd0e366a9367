"""The worker side of `eval --ray`: one `JudgeWorker` per Ray worker process judges the units (groups of reports)
the driver sends it, with its own decision client. `JudgeWorker.judge` is a Ray streaming generator: it yields a
`UnitPart` the moment there is something to send (an answer from the model, a finished judgment, a call started
since the last part), so every answer and its cost reach the driver, which writes the cache and keeps the tally,
as they arrive: a worker that dies, or a run that stops at --max-cost, loses no answer the worker was sent.

A worker reads the driver's decision cache when it can reach it: a Redis cache (`redis://...`) from any node, a
cache directory from a node that sees the same path (this machine, or a shared file system). Elsewhere it starts
from an empty cache; the answers it gets still reach the driver's cache. It never writes the cache itself, so an
answer is recorded once, by the driver, and the first one recorded under a key stays.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from judge.formats.judgments import ReportJudgment
from judge.llm.cache.backends import DECISIONS_SUBDIR, REDIS_SCHEMES, CacheBackend
from judge.llm.cache.store import DecisionCache, open_decision_cache
from judge.llm.client import DecisionClient, Usage
from judge.llm.router import servers
from judge.run.executors.base import Asking, usage_since
from judge.run.executors.one_process import judge_by_request
from judge.types import Document, NuggetBank, Report, Request


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker needs for the whole run (sent once, when the worker starts)."""

    config: Any                       # the run's EvalPlan (its model settings, judge settings, retry policy)
    signature: str
    requests: Mapping[str, Request]
    banks: Mapping[str, NuggetBank]
    cache_target: str | None          # the driver's cache: an absolute directory or a redis:// URL; None: no cache
    threads: int | None = None        # the embedded judge's llama.cpp threads on this node


@dataclass(frozen=True)
class Unit:
    """One group of reports (`number` of the run's units), the documents they cite, and the run's state when it
    was sent: the budget left (None: no --max-cost) and why the server was given up on (None: it was not)."""

    number: int
    reports: list[Report]
    documents: dict[str, Document]
    budget_left: float | None = None
    stopped: str | None = None


# How often a unit waiting on the model sends the usage it has run up since its last part (the calls it has sent):
# the answers themselves go the moment they arrive; this keeps the calls in flight counted should the worker die.
USAGE_EVERY = 0.2


@dataclass
class UnitPart:
    """What a worker has to send since its previous part (of any of its units): the judgments of `number` completed
    since, the answers got from the model (cache key -> sealed answer, which only the driver writes to the cache),
    the usage, and what happened (source, message) for the run's diagnostics."""

    number: int
    judgments: list[ReportJudgment]
    entries: dict[str, str]
    usage: Usage
    events: list[tuple[str, str]] = field(default_factory=list)
    kernels: dict[str, Any] | None = None

    def __bool__(self) -> bool:
        return bool(self.judgments or self.entries or self.events or self.usage != _NOTHING_SPENT)


_NOTHING_SPENT = Usage()


@dataclass(frozen=True)
class Hello:
    """A worker's answer to the driver's first call: where it runs and what it cannot do."""

    node: str                         # the node's address (and host name)
    version: str
    pid: int
    problem: str | None = None        # why this worker cannot judge (a model server it cannot reach)


class JudgeWorker:
    """Made a Ray actor by the driver (judge.run.executors.ray_cluster); plain Python here, so it is testable."""

    def __init__(self, setup: WorkerSetup):
        self.setup = setup
        config = setup.config
        model = config.model if setup.threads is None else replace(config.model, threads=setup.threads)
        self.backend = CollectingBackend(_reachable_cache(setup.cache_target), self._wake_all)
        self.cache = DecisionCache(self.backend)
        self.model = model
        self._client: DecisionClient | None = None
        self._asking: Asking | None = None
        self._reported = Usage()
        self._events_reported = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: set[asyncio.Event] = set()  # one per unit being judged: set when there is news to send

    def hello(self) -> Hello:
        from judge._version import __version__

        node = _node_name()
        problem = None
        for server in servers(self.model):
            reason = _unreachable(server)
            if reason:
                problem = f"cannot reach the model server {server}: {reason}"
                break
        return Hello(node, __version__, os.getpid(), problem)

    def _client_for(self, unit: Unit) -> DecisionClient:
        config = self.setup.config
        if self._client is None:  # made inside the worker's event loop, and kept: its slots are shared by units
            self._client = DecisionClient(self.model, self.cache, concurrency=config.concurrency,
                                          retry=config.retry, price_per_1k=config.price_per_1k)
            self._asking = Asking(self._client)
        client = self._client
        if unit.budget_left is not None:  # the client refuses a call that would spend more than the run has left
            client.max_cost = client.usage.cost + unit.budget_left
        if unit.stopped and not client.usage.stopped:  # another worker gave up on the server: ask nothing more
            client.usage.stopped = unit.stopped
        return client

    def stop_spending(self) -> None:
        """The run has reached --max-cost: ask nothing more (the calls in flight end, and their answers are sent)."""
        if self._client is not None:
            self._client.max_cost = self._client.usage.cost

    async def judge(self, unit: Unit) -> AsyncIterator[UnitPart]:
        """The unit's parts as they come (see UnitPart); a failure (BudgetExceeded, ...) is raised after every
        part before it was yielded."""
        from judge.judging.walker import ReportWalker

        config = self.setup.config
        self._loop = asyncio.get_running_loop()
        self._client_for(unit)
        asking = self._asking
        assert asking is not None
        walker = ReportWalker(asking, unit.documents, config.judge)
        judgments: list[ReportJudgment] = []
        news = asyncio.Event()

        def deliver(judgment: ReportJudgment) -> None:
            judgments.append(judgment)
            news.set()

        judging = asyncio.ensure_future(judge_by_request(
            walker, unit.reports, lambda report: report, self.setup.requests, self.setup.banks,
            self.setup.signature, config.concurrency, deliver, asking))
        self._waiting.add(news)
        try:
            while not judging.done():
                waiter = asyncio.ensure_future(news.wait())
                await asyncio.wait({judging, waiter}, timeout=USAGE_EVERY, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                news.clear()
                part = self._part(unit.number, judgments)
                judgments = []
                if part:
                    yield part
            judging.result()  # its failure, now that everything it got has been sent
            yield self._part(unit.number, judgments)
        finally:
            self._waiting.discard(news)
            if not judging.done():  # the driver stopped reading (it was interrupted): stop asking
                judging.cancel()

    def _wake_all(self) -> None:
        """An answer arrived (from the client, on the event loop or a thread of a blocking cache): each unit's
        generator sends what there is."""
        loop = self._loop
        if loop is not None:
            for news in list(self._waiting):
                loop.call_soon_threadsafe(news.set)

    def _part(self, number: int, judgments: list[ReportJudgment]) -> UnitPart:
        assert self._client is not None
        usage = self._client.usage
        delta = usage_since(usage, self._reported)
        if usage.cost_known == self._reported.cost_known and usage.stopped == self._reported.stopped:
            delta.cost_known, delta.stopped = True, None  # unchanged: nothing to send unless a count moved
        self._reported = replace(usage)
        kernels, events = self._client.embedded_report()
        node = _node_name()
        new_events = [("embedded judge", f"{node}: {event}") for event in events[self._events_reported:]]
        self._events_reported = len(events)
        new_events += [("cache", f"{node}: {line}") for line in self.cache.problems()]
        self.cache.unreadable.clear()
        return UnitPart(number, judgments, self.backend.take(), delta, new_events, kernels)


class CollectingBackend:
    """A worker's view of the decision cache: reads go to the driver's cache (when reachable), writes are kept
    here until the next part takes them to the driver (`on_new` is told of each); deleting an unreadable entry is
    the driver's job."""

    def __init__(self, inner: CacheBackend | None, on_new: Callable[[], None] = lambda: None):
        self.inner = inner
        self.on_new = on_new
        self.location = inner.location if inner is not None else "this worker's memory"
        self.blocking = inner.blocking if inner is not None else False
        self.new: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        value = self.new.get(key)
        if value is None and self.inner is not None:
            value = self.inner.get(key)
        return value

    def set(self, key: str, value: str) -> None:
        self.new[key] = value
        self.on_new()

    def delete(self, key: str) -> bool:
        return self.new.pop(key, None) is not None

    def keys(self) -> Iterator[str]:
        return iter(list(self.new))

    def __len__(self) -> int:
        return len(self.new)

    def size_bytes(self) -> int | None:
        return None

    def clear(self) -> int:
        count = len(self.new)
        self.new.clear()
        return count

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()

    def take(self) -> dict[str, str]:
        entries, self.new = self.new, {}
        return entries


def _reachable_cache(target: str | None) -> CacheBackend | None:
    if target is None:
        return None
    if not target.startswith(REDIS_SCHEMES) and not (Path(target) / DECISIONS_SUBDIR / "cache.db").is_file():
        return None  # the driver's cache directory is not on this node: start empty (see the module docstring)
    return open_decision_cache(target).backend


def _node_name() -> str:
    try:
        import ray

        address = ray.util.get_node_ip_address()
    except Exception:  # outside Ray (a test of this class alone)
        address = "127.0.0.1"
    return f"{address} ({socket.gethostname()})"


def _unreachable(server: str) -> str | None:
    """Why a TCP connection to `server`'s host and port fails from here (None: it connects, or `server` is a
    provider name rather than a URL)."""
    parts = urlsplit(server)
    if not parts.hostname or parts.scheme not in ("http", "https"):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=10):
            return None
    except OSError as exc:
        return str(exc.strerror or exc) or type(exc).__name__

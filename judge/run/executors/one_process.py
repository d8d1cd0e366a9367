"""The default executor: this process judges every report with the run's own client, at most `--concurrency`
decisions and `max(8, --concurrency)` reports in flight. The same loop (`judge_by_request`) runs inside each Ray
worker on its share of the reports."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Protocol, TypeVar

from judge.errors import BudgetExceeded
from judge.formats.judgments import ReportJudgment
from judge.judging.walker import ReportWalker
from judge.run.executors.base import Asking, Judged, Judging, budget_reached
from judge.types import NuggetBank, Report, Request


class _OfRequest(Protocol):
    @property
    def request_id(self) -> str: ...


Item = TypeVar("Item", bound=_OfRequest)


class OneProcess:
    """Judge in this process (the executor of every run without --ray)."""

    async def judge(self, work: Judging, deliver: Callable[[ReportJudgment], None]) -> Judged:
        inputs = work.inputs
        # The run's walker, over a client that counts its decisions in flight (see judge_by_request).
        asking = Asking(work.client)
        walker = ReportWalker(asking, inputs.documents, work.config.judge, on_sentence=work.progress.sentence_done,
                              decider=work.decider)
        try:
            await judge_by_request(walker, work.todo, inputs.reports.read, inputs.requests, inputs.banks,
                                   work.signature, work.config.in_flight, deliver, asking)
        except BudgetExceeded:
            if work.config.max_cost is None:
                raise
            raise budget_reached(work.client.usage, work.config.max_cost) from None
        kernels, events = work.client.embedded_report()
        return Judged(work.client.usage, kernels, [("embedded judge", event) for event in events])

    def close(self) -> None:
        pass


async def judge_by_request(walker: ReportWalker, todo: Sequence[Item], read: Callable[[Item], Report],
                           requests: Mapping[str, Request], banks: Mapping[str, NuggetBank], signature: str,
                           concurrency: int, deliver: Callable[[ReportJudgment], None],
                           asking: Asking | None = None) -> None:
    """Judge `todo` (report entries, or reports with `read` the identity) whole requests at a time, at most
    `max(8, concurrency)` reports in flight so memory stays bounded: a report is read when its request's turn
    comes, and each judgment is handed to `deliver` the moment it is complete. With `asking` (the walker's client):
    BudgetExceeded is raised only once no decision is in flight, so every call already made reaches the cache."""
    async def judge(report: Report) -> None:
        deliver(await walker.judge_report(report, requests[report.request_id], banks.get(report.request_id),
                                          signature))

    async def judge_request(items: list[Item]) -> None:
        # The reports of one request share documents: their support questions go first, in document-major order
        # (see judge.judging.walker), then each report is walked and delivered the moment it is complete.
        reports = [read(item) for item in items]
        await walker.ask_supports_document_major((r, requests[r.request_id]) for r in reports)
        # Every report's walk to its end, then the first failure: a walk left running would be cancelled with
        # its calls in flight, their answers paid and lost, when the run stops at --max-cost.
        _raise_first_failure_of(await asyncio.gather(*(judge(r) for r in reports), return_exceptions=True))

    by_request: dict[str, list[Item]] = {}
    for item in todo:
        by_request.setdefault(item.request_id, []).append(item)
    per_request = max(1, len(todo) // max(1, len(by_request)))
    window = max(8, concurrency)  # reports in flight, whole requests at a time
    try:
        await run_bounded((judge_request(by_request[r]) for r in sorted(by_request)),
                          limit=max(1, -(-window // per_request)))
    except BudgetExceeded:
        if asking is not None:  # the walker's own gathers may leave sibling decisions running: they are paid
            await asking.quiet.wait()
        raise


async def run_bounded(jobs: Iterator[Awaitable[None]], limit: int) -> None:
    """Run the jobs with at most `limit` in flight, taking the next job only when one finishes; the first
    failure is raised as it is (no ExceptionGroup: callers catch BudgetExceeded etc.). BudgetExceeded takes no new
    job and waits for the running ones to end (the client refuses their next calls, and the calls they have in
    flight are paid: their answers reach the cache); any other failure cancels the rest."""
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            if len(running) >= limit:
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                _raise_first_failure(finished)
            job = next(jobs, None)  # taken only once it can start: a coroutine made and never run is a warning
            if job is None:
                break
            running.add(asyncio.ensure_future(job))
        while running:
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            _raise_first_failure(finished)
    except BudgetExceeded:
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


def _raise_first_failure_of(results: list[object]) -> None:
    for result in results:
        if isinstance(result, BaseException):
            raise result


def _raise_first_failure(finished: set[asyncio.Task[None]]) -> None:
    """Raise the first failure among tasks that finished together, having read every one's: an exception left
    unread is printed with its traceback ("Task exception was never retrieved") when the task is collected, which
    two requests over --max-cost at once did after the run had already said why it stopped."""
    failures = [task.exception() for task in finished if not task.cancelled()]
    for failure in failures:
        if failure is not None:
            raise failure
    if any(task.cancelled() for task in finished):
        raise asyncio.CancelledError

"""The interface between a run (judge.run.evaluate) and whatever judges its reports."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

from pydantic import BaseModel

from judge.errors import BudgetExceeded
from judge.formats.judgments import ReportJudgment
from judge.formats.reports import ReportEntry
from judge.judging.walker import ReportWalker
from judge.llm.cache.store import DecisionCache
from judge.llm.client import Answered, DecisionClient, Usage
from judge.run.inputs import Inputs


@dataclass
class Judging:
    """What a run asks an executor to judge: `todo` (the reports not kept from a resumed log, in canonical order)
    of `inputs`, under `config`, signed `signature`. `walker` and `client` are the driver's own (one process judges
    with that client, through an `Asking` that counts its decisions in flight, on a walker of the same settings);
    `cache` is the driver's decision cache, the only place a run writes answers to."""

    inputs: Inputs
    config: Any            # judge.run.spec.EvalPlan
    signature: str
    todo: Sequence[ReportEntry]
    walker: ReportWalker
    client: DecisionClient
    cache: DecisionCache | None
    progress: Any          # judge.run.evaluate.JudgingProgress: start, sentence_done, decision_done
    decider: Any = None    # a panel of judges (judge.judging.panel.PanelDecider; then `client` is it too)


@dataclass
class Judged:
    """What an executor reports when every report of `todo` has been delivered: the usage over all its workers,
    the embedded judge's kernel choice (None for other models) and what happened on the way, for the run's
    diagnostics, each as (source, message) with the source naming what it happened to: "embedded judge" (its
    llama.cpp worker died, restarted), "ray" (a Ray worker died), "cache" (an unreadable entry a worker met)."""

    usage: Usage
    kernels: dict[str, Any] | None = None
    events: list[tuple[str, str]] | None = None


class Executor(Protocol):
    async def judge(self, work: Judging, deliver: Callable[[ReportJudgment], None]) -> Judged:
        """Judge every report of `work.todo`, calling `deliver` once per report as its judgment completes (in any
        order), and return the usage. Errors the user can act on (BudgetExceeded, ConfigurationError, ...) are
        raised as they are."""
        ...

    def close(self) -> None:
        """Release what the executor started (a local Ray runtime); the run calls it once, however it ends."""
        ...


def add_usage(total: Usage, part: Usage) -> None:
    """Add one worker's usage to the run's: counts and cost summed, the cost known only if every part's is, the
    first reason a server was given up on kept."""
    for field in fields(Usage):
        name = field.name
        if name == "cost_known":
            total.cost_known = total.cost_known and part.cost_known
        elif name == "stopped":
            total.stopped = total.stopped or part.stopped
        else:
            setattr(total, name, getattr(total, name) + getattr(part, name))


def budget_reached(usage: Usage, max_cost: float) -> BudgetExceeded:
    """The run's one line when it stops at --max-cost, said once every call in flight has ended: what the whole
    run spent (not what one client or worker had spent when it refused a call)."""
    state = "which is past" if usage.cost > max_cost else "and the next decision could pass"
    return BudgetExceeded(f"${usage.cost:.4f} spent on {usage.model_calls} model calls, {state} --max-cost "
                          f"${max_cost:.4f}")


def usage_since(now: Usage, before: Usage) -> Usage:
    """The usage between two snapshots of one client (`before` taken earlier)."""
    delta = Usage()
    for field in fields(Usage):
        name = field.name
        if name in ("cost_known", "stopped"):
            setattr(delta, name, getattr(now, name))
        else:
            setattr(delta, name, getattr(now, name) - getattr(before, name))
    return delta


class Asking:
    """A client as a run's walker sees it (judge.judging.decisions.asker.AsksModels), counting the decisions in
    flight: when the run stops at --max-cost, it waits for those the other tasks are still asking (`quiet`), since
    they are paid and their answers must reach the cache, rather than cancel them."""

    def __init__(self, client: DecisionClient):
        self.client = client
        self.settings = client.settings
        self.asking = 0
        self.quiet = asyncio.Event()
        self.quiet.set()

    async def ask(self, messages: list[dict[str, str]], response_model: type[BaseModel], context: dict[str, Any],
                  contract: str = "") -> Answered:
        self.asking += 1
        self.quiet.clear()
        try:
            return await self.client.ask(messages, response_model, context, contract=contract)
        finally:
            self.asking -= 1
            if not self.asking:
                self.quiet.set()

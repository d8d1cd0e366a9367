"""`plan_batch`: what `argue-judge eval --batch --dry-run` prints, the bounds of a batch run before anything is
submitted (judge.run.batch_plan)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, Unpack

from judge.api._inputs import (
    DEFAULT_CACHE,
    DocumentInputs,
    NuggetInputs,
    PathLike,
    ReportInputs,
    RequestInputs,
    _check_input,
    _check_judge,
)
from judge.api.evaluation import EvalOptions, _load_inputs, _run
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.settings import JudgeSettings
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:
    from judge.run.batch_plan import BatchPlan


def plan_batch(reports: ReportInputs, *, requests: RequestInputs, docs: DocumentInputs,
               nuggets: NuggetInputs | None = None, model: str = EMBEDDED_MODEL, api_base: str | None = None,
               api_key: str | None = None, judge: JudgeSettings | None = None, cache: PathLike | None = DEFAULT_CACHE,
               **options: Unpack[EvalOptions]) -> BatchPlan:
    """The requests, rounds and dollars (at the batch price) that `judge.evaluate(..., batch=True)` with the same
    arguments can take, at most; nothing is submitted and no model is asked (`eval --batch --dry-run`).

    >>> import judge
    >>> plan = judge.plan_batch("examples/reports", requests="examples/requests.jsonl", docs="examples/docs.jsonl",
    ...                         nuggets="examples/nuggets", model="openai/gpt-4o-mini", cache=None)
    >>> plan.reports, plan.sentences, plan.rounds
    (6, 29, 4)
    >>> 0 < plan.cost < 0.05
    True
    """
    from judge.run.batch_plan import plan_batch as plan
    from judge.run.evaluate import EvalConfig

    request = _run(reports, requests, docs, nuggets, model, api_base, api_key, judge, cache, None, 4, None, None,
                   "reports", 0.95, False, False, None, {**options, "batch": True})
    for argument, kind, optional in (("reports", Report, False), ("requests", Request, False),
                                     ("docs", Document, False), ("nuggets", NuggetBank, True)):
        _check_input(argument, getattr(request, argument), kind, optional=optional)
    _check_judge(request.judge)
    config = EvalConfig(model=request.model, judge=request.judge or JudgeSettings(), concurrency=request.concurrency,
                        cache_dir=None if request.cache is None else str(request.cache), **request.run_options)
    with ExitStack() as stack:
        return plan(_load_inputs(request, config, stack, None), config)

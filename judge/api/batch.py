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
)
from judge.api.evaluation import EvalOptions, _load_inputs, eval_spec
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.settings import JudgeSettings

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
    arguments = {name: value for name, value in locals().items() if name != "options"}
    from judge.run.batch_plan import plan_batch as plan

    spec = eval_spec({**arguments, **options, "batch": True})
    with ExitStack() as stack:
        return plan(_load_inputs(spec, stack), spec.resolve())

"""`plan_batch`: what `argue-judge eval --batch --dry-run` prints, the bounds of a batch run before anything is
submitted (judge.run.batch_plan)."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from judge.api._inputs import (
    DEFAULT_CACHE,
    PathLike,
    _bank_record,
    _check_input,
    _document_record,
    _Materialised,
    _report_record,
    _request_record,
)
from judge.api.evaluation import EvalRequest, _eval_request, eval_config
from judge.llm.cache.backends import docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:
    from judge.run.batch_plan import BatchPlan


def plan_batch_with(request: EvalRequest) -> BatchPlan:
    """The bounds of judging `request` with batch jobs (its run options must say batch=True)."""
    from judge.errors import SettingError
    from judge.run.batch_plan import plan_batch as plan
    from judge.run.inputs import Inputs

    if not request.run_options.get("batch"):
        raise SettingError("a batch plan is of a batch run: give batch=True")
    for argument, kind, optional in (("reports", Report, False), ("requests", Request, False),
                                     ("docs", Document, False), ("nuggets", NuggetBank, True)):
        _check_input(argument, getattr(request, argument), kind, optional=optional)
    config = eval_config(request.model, request.judge, cache=request.cache, concurrency=request.concurrency,
                         **request.run_options)
    with ExitStack() as stack:
        files = _Materialised(stack)
        reports = files.paths("reports", request.reports, _report_record, Report)
        requests = files.paths("requests", request.requests, _request_record, Request)
        if len(requests) != 1:
            raise TypeError("requests must be one requests file or Request objects (or dicts)")
        docs = files.paths("docs", request.docs, _document_record, Document)
        nuggets = files.paths("nuggets", request.nuggets, _bank_record, NuggetBank, optional=True)
        inputs = stack.enter_context(Inputs.load(reports, requests[0], nuggets or None, docs,
                                                 docstore_dir(request.cache),
                                                 max_doc_bytes=config.judge.passages.max_doc_bytes,
                                                 shard=request.run_options.get("shard")))
        return plan(inputs, config)


def plan_batch(reports: Any, *, requests: Any, docs: Any, nuggets: Any = None, model: str = EMBEDDED_MODEL,
               api_base: str | None = None, api_key: str | None = None, cache: PathLike | None = DEFAULT_CACHE,
               **model_options: Any) -> BatchPlan:
    """The requests, rounds and dollars (at the batch price) that `judge.evaluate(..., batch=True)` with the same
    arguments can take, at most; nothing is submitted and no model is asked.

    >>> import judge
    >>> plan = judge.plan_batch("examples/reports", requests="examples/requests.jsonl", docs="examples/docs.jsonl",
    ...                         nuggets="examples/nuggets", model="openai/gpt-4o-mini", cache=None)
    >>> plan.reports, plan.sentences, plan.rounds
    (6, 29, 4)
    >>> 0 < plan.cost < 0.05
    True
    """
    model_options["batch"] = True
    return plan_batch_with(_eval_request(reports, requests, docs, nuggets, model, api_base, api_key, None, cache,
                                         None, 4, None, None, "reports", 0.95, False, False, None, model_options))

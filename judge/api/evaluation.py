"""`evaluate`: judge reports and score them, as `argue-judge eval` does (which builds an `EvalRequest` and
runs it with `evaluate_with`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.api._inputs import (
    DEFAULT_CACHE,
    PathLike,
    _bank_record,
    _check_input,
    _check_judge,
    _check_path,
    _document_record,
    _Materialised,
    _report_record,
    _request_record,
)
from judge.api.estimates import _estimates, _human_paths, _write_estimates
from judge.errors import SettingError
from judge.event_loop import run_sync
from judge.formats.judgments import ReportJudgment
from judge.llm.cache.backends import docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.metrics.table import select_measures
from judge.settings import HumanSample, InstanceOf, JudgeSettings, ModelSettings
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.baselines.suite import BaselineResult
    from judge.run.evaluate import EvalConfig, JudgingProgress
    from judge.run.outputs import Evaluation


def eval_config(model: ModelSettings, judge: JudgeSettings | None = None, *, cache: PathLike | None = DEFAULT_CACHE,
                concurrency: int = 4, **run_options: Any) -> EvalConfig:
    """The run configuration of `evaluate` and of `argue-judge eval`. `judge`: None for eval's default judging.
    `cache`: the decision cache (a directory or redis://...), None for none. `run_options`: the other fields of
    `judge.run.evaluate.EvalConfig` (retry, max_cost, price_per_1k, max_failed_fraction, shard, resume)."""
    from judge.run.evaluate import EvalConfig

    _check_judge(judge)
    return EvalConfig(model=model, judge=judge or JudgeSettings(), concurrency=concurrency,
                      cache_dir=None if cache is None else str(cache), **run_options)



@dataclass(frozen=True)
class EvalRequest:
    """One evaluation, every choice of `argue-judge eval` in one object: the command builds it from its options,
    `evaluate` from its arguments, and `evaluate_with` runs it. Inputs are paths or objects (see the module)."""

    reports: Any
    requests: Any
    docs: Any
    nuggets: Any = None
    model: ModelSettings = field(default_factory=lambda: ModelSettings(EMBEDDED_MODEL))
    judge: JudgeSettings | None = None
    cache: PathLike | None = DEFAULT_CACHE
    out: PathLike | None = None
    concurrency: int = 4
    run_options: Mapping[str, Any] = field(default_factory=dict)  # EvalConfig's retry, max_cost, shard, resume, ...
    measures: Sequence[str] | None = None
    human: Any = None           # human judgments of a sample of the reports: paths or records
    sample: str = "reports"     # how that sample was drawn
    confidence: float = 0.95
    view: bool = False          # also write the HTML view to OUT/view (needs out)
    baselines: bool = False     # also score the reports with the baselines (OUT/<name>.scores.tsv with out)
    gold: Any = None            # gold reports for the reference-based baselines


async def evaluate_with_async(request: EvalRequest, progress: JudgingProgress | None = None) -> Evaluation:
    """Run `request` (awaitable; `evaluate_with` from synchronous code). `progress`: callbacks as judging goes
    (judge.run.evaluate.JudgingProgress; the CLI hands in its progress bar)."""
    from judge.formats.lock import output_lock
    from judge.run.evaluate import JudgingProgress
    from judge.run.evaluate import evaluate_async as run_evaluation
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs

    _check_path("cache", request.cache)
    _check_path("out", request.out)
    InstanceOf((JudgingProgress,), optional=True).check("progress", progress)
    for argument, kind, optional in (("reports", Report, False), ("requests", Request, False),
                                     ("docs", Document, False), ("nuggets", NuggetBank, True),
                                     ("human", ReportJudgment, True), ("gold", Report, True)):
        _check_input(argument, getattr(request, argument), kind, optional=optional)
    measures = select_measures(request.measures)
    HumanSample(request.sample, request.confidence, given=request.human is not None)  # type: ignore[arg-type]
    if request.view and request.out is None:
        raise SettingError("view=True writes OUT/view: give out= too")
    if request.gold is not None and not request.baselines:
        raise SettingError("gold: only the baselines read it; give baselines=True too, or leave it out")
    config = eval_config(request.model, request.judge, cache=request.cache, concurrency=request.concurrency,
                         **request.run_options)
    out = Path(request.out) if request.out is not None else None
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
                                                 shard=request.run_options.get("shard"), out=out))
        human = None
        if request.human is not None:
            human = _human_paths(request.human, files)
            from judge.run.prediction_powered import check_human_files

            # a human file that does not fit is refused before any model call
            check_human_files(human, inputs.reports, request.sample)  # type: ignore[arg-type]
        if progress is not None and progress.loaded is not None:
            progress.loaded(inputs)
        # One run writes OUT at a time, to its last rename (judge.formats.lock); the finished files of an earlier run
        # stay as they are until write_outputs swaps the new ones in.
        stack.enter_context(output_lock(out, "eval") if out is not None else nullcontext())
        evaluation = await run_evaluation(inputs, config, progress, out=out)
        evaluation.measures = measures
        # Baselines and estimates before the summary is written, so their diagnostics (the human files' own
        # warnings among them) reach run-summary.json.
        if request.baselines:
            evaluation.baseline_results = _eval_baselines(inputs, request.gold, out, evaluation, files)
        estimates = _estimates(evaluation.scores, evaluation.signature, human, evaluation.judgments, request.sample,
                               request.confidence, config.judge.policy, inputs.banks,
                               evaluation.diagnostics) if human is not None else None
        if out is not None:
            write_outputs(evaluation, out)
        if estimates is not None:
            evaluation.estimates = _write_estimates(estimates, out) if out is not None else estimates
        if request.view:  # while the document store is open: the pages show the cited documents
            from judge.run.prediction_powered import ppi_json
            from judge.view import write_view  # pulls in jinja2 and scipy only when asked for

            estimates = evaluation.estimates
            evaluation.view_index = write_view(
                evaluation.judgments, out / "view", requests=inputs.requests, banks=inputs.banks,  # type: ignore[operator]
                documents=inputs.documents,
                estimates=ppi_json(estimates.corrected, estimates.signature) if estimates else None).index
    return evaluation


def evaluate_with(request: EvalRequest, progress: JudgingProgress | None = None) -> Evaluation:
    """Run `request`: what `evaluate` and `argue-judge eval` do, safe inside a running event loop."""
    return run_sync(evaluate_with_async(request, progress))


def _eval_baselines(inputs: Any, gold: Any, out: Path | None, evaluation: Evaluation, files: _Materialised
                    ) -> list[BaselineResult]:
    from judge.baselines import BaselineWarning
    from judge.baselines.suite import run_baselines as run_suite
    from judge.formats import read_reports
    from judge.formats.scores import write_scores

    gold_paths = files.paths("gold", gold, _report_record, Report, optional=True)
    with evaluation.diagnostics.capture_warnings(BaselineWarning, "baselines"):
        results, notes = run_suite(inputs.reports, inputs.banks, read_reports(gold_paths) if gold_paths else None)
    evaluation.diagnostics.extend(notes, "baselines")  # a baseline that did not run is missing from the table
    if out is not None:
        for result in results:
            write_scores(out / f"{result.name}.scores.tsv", result.rows, str(result.signature))
    return results


def _eval_request(reports: Any, requests: Any, docs: Any, nuggets: Any, model: str, api_base: str | None,
                  api_key: str | None, judge: JudgeSettings | None, cache: PathLike | None, out: PathLike | None,
                  concurrency: int, measures: Sequence[str] | None, human: Any, sample: str, confidence: float,
                  view: bool, baselines: bool, gold: Any, model_options: dict[str, Any]) -> EvalRequest:
    run_fields = {"retry", "max_cost", "price_per_1k", "max_failed_fraction", "resume", "shard", "ray", "workers",
                  "batch", "batch_poll"}
    run_options = {k: model_options.pop(k) for k in list(model_options) if k in run_fields}
    if isinstance(run_options.get("shard"), str):  # "2/3", as --shard takes it
        from judge.run.shards import Shard

        run_options["shard"] = Shard.parse(run_options["shard"])
    if "max_doc_bytes" in model_options:  # a passage setting: where the CLI's --max-doc-bytes goes too
        _check_judge(judge)
        base = judge or JudgeSettings()
        judge = replace(base, passages=replace(base.passages, max_doc_bytes=model_options.pop("max_doc_bytes")))
    for name, value in (("view", view), ("baselines", baselines)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, not {value!r}")
    try:
        settings = ModelSettings(model, api_base, api_key, **model_options)
    except TypeError as exc:
        if "unexpected keyword" in str(exc):
            raise TypeError(f"evaluate() got an unknown argument: {exc}") from None
        raise
    return EvalRequest(reports, requests, docs, nuggets, settings, judge, cache, out, concurrency, run_options,
                       measures, human, sample, confidence, view, baselines, gold)


def evaluate(reports: Any, *, requests: Any, docs: Any, nuggets: Any = None, model: str = EMBEDDED_MODEL,
             api_base: str | None = None, api_key: str | None = None, judge: JudgeSettings | None = None,
             cache: PathLike | None = DEFAULT_CACHE, out: PathLike | None = None, concurrency: int = 4,
             measures: Sequence[str] | None = None, human: Any = None, sample: str = "reports",
             confidence: float = 0.95, view: bool = False, baselines: bool = False, gold: Any = None,
             **model_options: Any) -> Evaluation:
    """Judge every report sentence by sentence and score the judgments, as `argue-judge eval` does.

    `reports`: report files or directories of *.jsonl, or Report objects / dicts; `requests`, `docs`, `nuggets`:
    as eval's options, paths or objects (Request, Document, NuggetBank, or dicts). `judge`: judging choices
    (citation policy, passages, injection policy, thresholds); the default is eval's. `cache`: the decision cache
    (a directory or redis://...), None for none. `out`: also write eval's five files there. `measures`: the
    measures the rows and leaderboard keep. `human`, `sample`, `confidence`: prediction-powered estimates from
    human judgments of a sample (`evaluation.estimates`). `view`: also write OUT/view. `baselines`, `gold`: also
    run the baselines (`evaluation.baseline_results`). `model_options`: the other fields of
    `judge.settings.ModelSettings` (temperature, seed, max_tokens, timeout, threads, kernels, logprobs) and of
    `judge.run.evaluate.EvalConfig` (retry, max_cost, price_per_1k, max_failed_fraction, resume, shard as "I/N",
    and `ray="local"`, `"auto"` or `"ray://HOST:PORT"` with `workers=N` to judge on Ray: docs/scale.md; `batch=True`
    to ask through the provider's batch jobs, polled every `batch_poll` seconds: docs/batch.md).

    >>> import judge
    >>> from judge.testing import FakeEndpoint, smart_responder
    >>> with FakeEndpoint(smart_responder) as model:
    ...     evaluation = judge.evaluate("examples/reports", requests="examples/requests.jsonl",
    ...                                 docs="examples/docs.jsonl", nuggets="examples/nuggets",
    ...                                 model="openai/fake", api_base=model.api_base, api_key="none", cache=None)
    >>> len(evaluation.judgments), sorted(evaluation.scores.runs)
    (6, ['run-cited', 'run-miscited', 'run-padded'])
    >>> round(evaluation.scores.runs["run-cited"]["SentencePrecision"], 3)
    1.0
    >>> evaluation.signature.short().startswith("argue-judge:0.1.0|judge:openai/fake|")
    True
    >>> evaluation.to_records(aggregate=True)[0]["request_id"]
    'all'
    >>> evaluation.failure is None   # why the run failed as a whole, if it did
    True

    Objects instead of files, and a choice of measures:

    >>> from judge.types import Report, Sentence
    >>> report = Report(run_id="mine", request_id="ex-101", sentences=[
    ...     Sentence(index=0, text="Work on the Marrowick flood barrier began in March 2021.", citations=["ex-d01"])])
    >>> with FakeEndpoint(smart_responder) as model:
    ...     mine = judge.evaluate([report], requests="examples/requests.jsonl", docs="examples/docs.jsonl",
    ...                           nuggets="examples/nuggets", model="openai/fake", api_base=model.api_base,
    ...                           api_key="none", cache=None, measures=["SentencePrecision", "F1"])
    >>> mine.aggregates()["mine"]["SentencePrecision"]
    1.0
    """
    return evaluate_with(_eval_request(reports, requests, docs, nuggets, model, api_base, api_key, judge, cache,
                                       out, concurrency, measures, human, sample, confidence, view, baselines, gold,
                                       model_options))


async def evaluate_async(reports: Any, *, requests: Any, docs: Any, nuggets: Any = None,
                         model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
                         judge: JudgeSettings | None = None, cache: PathLike | None = DEFAULT_CACHE,
                         out: PathLike | None = None, concurrency: int = 4, measures: Sequence[str] | None = None,
                         human: Any = None, sample: str = "reports", confidence: float = 0.95, view: bool = False,
                         baselines: bool = False, gold: Any = None, **model_options: Any) -> Evaluation:
    """`evaluate`, awaited (`await judge.evaluate_async(...)` in async code); the same arguments."""
    return await evaluate_with_async(_eval_request(reports, requests, docs, nuggets, model, api_base, api_key,
                                                   judge, cache, out, concurrency, measures, human, sample,
                                                   confidence, view, baselines, gold, model_options))


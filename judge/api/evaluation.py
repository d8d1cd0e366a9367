"""`evaluate` (and `evaluate_async`): judge reports and score them, as `argue-judge eval` does (the command makes
this one call)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from judge.api._inputs import (
    DEFAULT_CACHE,
    DocumentInputs,
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    ReportInputs,
    RequestInputs,
    _check_input,
    _check_judge,
    _check_path,
    _given,
    _humans,
    _reports,
)
from judge.api.estimates import _estimates, _write_estimates
from judge.errors import SettingError
from judge.event_loop import run_sync
from judge.formats.judgments import ReportJudgment
from judge.labels import SampleDesign
from judge.llm.cache.backends import docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.metrics.table import select_measures
from judge.settings import HumanSample, InstanceOf, JudgeSettings, Kernels, ModelSettings, ReasoningEffort, RetryPolicy
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.baselines.suite import BaselineResult
    from judge.run.evaluate import EvalConfig, JudgingProgress
    from judge.run.inputs import Inputs
    from judge.run.outputs import Evaluation
    from judge.run.shards import Shard


class EvalOptions(TypedDict, total=False):
    """The other settings of `evaluate`, each as eval's option of the same name: the model's
    (`judge.settings.ModelSettings`), the run's (`judge.run.evaluate.EvalConfig`) and `max_doc_bytes` (a passage
    setting). tests/test_api.py holds these keys equal to those objects' fields."""

    temperature: float
    seed: int | None
    max_tokens: int
    timeout: float
    api_bases: Sequence[str]          # several servers of the model (--api-base repeated)
    router_config: PathLike | None    # a litellm Router config (--router)
    logprobs: bool | None
    threads: int | None
    kernels: Kernels
    reasoning_effort: ReasoningEffort | None
    keep_reasoning: bool
    retry: RetryPolicy
    max_cost: float | None
    price_per_1k: float | None
    max_failed_fraction: float
    resume: bool
    shard: str | Shard | None         # "I/N", as --shard takes it
    ray: str | None                   # "local", "auto" or "ray://HOST:PORT" (docs/scale.md)
    workers: int | None
    batch: bool                       # ask through the provider's batch jobs (docs/batch.md)
    batch_poll: float                 # seconds between two looks at a running job
    max_doc_bytes: int | None


# The EvalOptions that go to judge.run.evaluate.EvalConfig; the rest, but max_doc_bytes, are ModelSettings fields.
RUN_OPTIONS = frozenset({"retry", "max_cost", "price_per_1k", "max_failed_fraction", "resume", "shard", "ray",
                         "workers", "batch", "batch_poll"})
MODEL_OPTIONS = frozenset(f.name for f in fields(ModelSettings)) - {"model", "api_base", "api_key"}


@dataclass(frozen=True)
class _Run:
    """One evaluation, every choice checked and in one object (what `evaluate`'s arguments ask for)."""

    reports: ReportInputs
    requests: RequestInputs
    docs: DocumentInputs
    nuggets: NuggetInputs | None
    model: ModelSettings
    judge: JudgeSettings | None
    cache: PathLike | None
    out: PathLike | None
    concurrency: int
    run_options: dict[str, Any]     # EvalConfig's retry, max_cost, shard, resume, ...
    measures: Sequence[str] | None
    human: JudgmentInputs | None    # human judgments of a sample of the reports
    sample: SampleDesign            # how that sample was drawn
    confidence: float
    view: bool                      # also write the HTML view to OUT/view (needs out)
    baselines: bool                 # also score the reports with the baselines (OUT/<name>.scores.tsv with out)
    gold: ReportInputs | None       # gold reports for the reference-based baselines


async def _evaluate(request: _Run, progress: JudgingProgress | None) -> Evaluation:
    from judge.formats.lock import output_lock
    from judge.run.evaluate import EvalConfig, JudgingProgress
    from judge.run.evaluate import evaluate_async as run_evaluation
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
    _check_judge(request.judge)
    config = EvalConfig(model=request.model, judge=request.judge or JudgeSettings(), concurrency=request.concurrency,
                        cache_dir=None if request.cache is None else str(request.cache), **request.run_options)
    out = Path(request.out) if request.out is not None else None
    with ExitStack() as stack:
        inputs = _load_inputs(request, config, stack, out)
        human = None
        if request.human is not None:
            human = _humans("human", request.human, request.sample)
            from judge.run.prediction_powered import check_human

            # human judgments that do not fit are refused before any model call
            check_human(human, inputs.reports, request.sample)  # type: ignore[arg-type]
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
            evaluation.baseline_results = _eval_baselines(inputs, request.gold, out, evaluation)
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


def _load_inputs(request: _Run, config: EvalConfig, stack: ExitStack, out: Path | None) -> Inputs:
    """The run's inputs, loaded and checked (closed with `stack`): objects as given, files read."""
    from judge.run.inputs import Inputs

    reports = _given("reports", request.reports, Report)
    requests = _given("requests", request.requests, Request)
    if not isinstance(requests[0], Request) and len(requests) != 1:
        raise TypeError("requests must be one requests file or Request objects (or dicts)")
    docs = _given("docs", request.docs, Document)
    nuggets = _given("nuggets", request.nuggets, NuggetBank, optional=True)
    return stack.enter_context(Inputs.load(reports, requests, nuggets or None, docs, docstore_dir(request.cache),
                                           max_doc_bytes=config.judge.passages.max_doc_bytes,
                                           shard=request.run_options.get("shard"), out=out))


def _eval_baselines(inputs: Any, gold: ReportInputs | None, out: Path | None, evaluation: Evaluation
                    ) -> list[BaselineResult]:
    from judge.baselines import BaselineWarning
    from judge.baselines.suite import run_baselines as run_suite
    from judge.formats.scores import write_scores

    gold_reports = _reports("gold", gold, optional=True)
    with evaluation.diagnostics.capture_warnings(BaselineWarning, "baselines"):
        results, notes = run_suite(inputs.reports, inputs.banks, gold_reports)
    evaluation.diagnostics.extend(notes, "baselines")  # a baseline that did not run is missing from the table
    if out is not None:
        for result in results:
            write_scores(out / f"{result.name}.scores.tsv", result.rows, str(result.signature))
    return results


def _run(reports: ReportInputs, requests: RequestInputs, docs: DocumentInputs, nuggets: NuggetInputs | None,
         model: str, api_base: str | None, api_key: str | None, judge: JudgeSettings | None, cache: PathLike | None,
         out: PathLike | None, concurrency: int, measures: Sequence[str] | None, human: JudgmentInputs | None,
         sample: SampleDesign, confidence: float, view: bool, baselines: bool, gold: ReportInputs | None,
         options: dict[str, Any]) -> _Run:
    unknown = sorted(set(options) - MODEL_OPTIONS - RUN_OPTIONS - {"max_doc_bytes"})
    if unknown:
        raise TypeError(f"evaluate() got an unknown argument {unknown[0]!r}: the settings are those of "
                        "judge.api.EvalOptions")
    model_options = {k: v for k, v in options.items() if k in MODEL_OPTIONS}
    run_options = {k: v for k, v in options.items() if k in RUN_OPTIONS}
    if isinstance(run_options.get("shard"), str):  # "2/3", as --shard takes it
        from judge.run.shards import Shard

        run_options["shard"] = Shard.parse(run_options["shard"])
    if "max_doc_bytes" in options:  # a passage setting: where the CLI's --max-doc-bytes goes too
        _check_judge(judge)
        base = judge or JudgeSettings()
        judge = replace(base, passages=replace(base.passages, max_doc_bytes=options["max_doc_bytes"]))
    if "api_bases" in model_options:
        model_options["api_bases"] = tuple(model_options["api_bases"])
    if model_options.get("router_config") is not None:
        _check_path("router_config", model_options["router_config"])
        model_options["router_config"] = Path(model_options["router_config"])
    for name, value in (("view", view), ("baselines", baselines)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, not {value!r}")
    settings = ModelSettings(model, api_base, api_key, **model_options)
    return _Run(reports, requests, docs, nuggets, settings, judge, cache, out, concurrency, run_options, measures,
                human, sample, confidence, view, baselines, gold)


def evaluate(reports: ReportInputs, *, requests: RequestInputs, docs: DocumentInputs,
             nuggets: NuggetInputs | None = None, model: str = EMBEDDED_MODEL, api_base: str | None = None,
             api_key: str | None = None, judge: JudgeSettings | None = None, cache: PathLike | None = DEFAULT_CACHE,
             out: PathLike | None = None, concurrency: int = 4, measures: Sequence[str] | None = None,
             human: JudgmentInputs | None = None, sample: SampleDesign = "reports", confidence: float = 0.95,
             view: bool = False, baselines: bool = False, gold: ReportInputs | None = None,
             progress: JudgingProgress | None = None, **options: Unpack[EvalOptions]) -> Evaluation:
    """Judge every report sentence by sentence and score the judgments, as `argue-judge eval` does.

    `reports`: report files or directories of *.jsonl, or Report objects / dicts; `requests`, `docs`, `nuggets`:
    as eval's options, paths or objects (Request, Document, NuggetBank, or dicts). `judge`: judging choices
    (citation policy, passages, injection policy, thresholds); the default is eval's. `cache`: the decision cache
    (a directory or redis://...), None for none. `out`: also write eval's five files there. `measures`: the
    measures the rows and leaderboard keep. `human`, `sample`, `confidence`: prediction-powered estimates from
    human judgments of a sample (`evaluation.estimates`). `view`: also write OUT/view. `baselines`, `gold`: also
    run the baselines (`evaluation.baseline_results`). `progress`: callbacks as judging goes
    (`judge.run.evaluate.JudgingProgress`; the command line hands in its progress bar). `options`: the other
    settings, as eval's options of the same name (`EvalOptions`): the model's (temperature, seed, max_tokens,
    timeout, api_bases, router_config, logprobs, threads, kernels, reasoning_effort "low"/"medium"/"high",
    keep_reasoning: docs/models.md#reasoning-judges), the run's (retry, max_cost, price_per_1k,
    max_failed_fraction, resume, shard as "I/N", `ray="local"`, `"auto"` or `"ray://HOST:PORT"` with
    `workers=N` to judge on Ray: docs/scale.md, `batch=True` to ask through the provider's batch jobs polled every
    `batch_poll` seconds: docs/batch.md) and max_doc_bytes.

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
    return run_sync(_evaluate(_run(reports, requests, docs, nuggets, model, api_base, api_key, judge, cache, out,
                                   concurrency, measures, human, sample, confidence, view, baselines, gold,
                                   dict(options)), progress))


async def evaluate_async(reports: ReportInputs, *, requests: RequestInputs, docs: DocumentInputs,
                         nuggets: NuggetInputs | None = None, model: str = EMBEDDED_MODEL, api_base: str | None = None,
                         api_key: str | None = None, judge: JudgeSettings | None = None,
                         cache: PathLike | None = DEFAULT_CACHE, out: PathLike | None = None, concurrency: int = 4,
                         measures: Sequence[str] | None = None, human: JudgmentInputs | None = None,
                         sample: SampleDesign = "reports", confidence: float = 0.95, view: bool = False,
                         baselines: bool = False, gold: ReportInputs | None = None,
                         progress: JudgingProgress | None = None, **options: Unpack[EvalOptions]) -> Evaluation:
    """`evaluate`, awaited (`await judge.evaluate_async(...)` in async code); the same arguments."""
    return await _evaluate(_run(reports, requests, docs, nuggets, model, api_base, api_key, judge, cache, out,
                                concurrency, measures, human, sample, confidence, view, baselines, gold,
                                dict(options)), progress)

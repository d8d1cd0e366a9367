"""`evaluate` (and `evaluate_async`): judge reports and score them, as `argue-judge eval` does (the command makes
this one call)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
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
    _check_path,
    _given,
    _humans,
    _reports,
)
from judge.api.estimates import _estimates, _write_estimates
from judge.errors import SettingError
from judge.event_loop import run_sync
from judge.formats.judgments import ReportJudgment
from judge.labels import CitationPolicy, SampleDesign, Vote
from judge.llm.cache.backends import docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.llm.panel import PanelMember  # imports no model client
from judge.metrics.table import select_measures
from judge.settings import (
    InjectionDetector,
    InjectionPolicy,
    JudgeSettings,
    Kernels,
    ReasoningEffort,
    RetryPolicy,
    Thresholds,
    check,
)
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.baselines.suite import BaselineResult
    from judge.run.evaluate import JudgingProgress
    from judge.run.inputs import Inputs
    from judge.run.outputs import Evaluation
    from judge.run.shards import Shard
    from judge.run.spec import EvalSpec


class EvalOptions(TypedDict, total=False):
    """The other settings of `evaluate`, each a field of the run's specification (judge.run.spec.EvalSpec) by its
    own name, as eval's option of the same name sets it: the model's (`judge.settings.ModelSettings`), the judging's
    (`JudgeSettings`, its passages' too; `judge=` gives them whole), the retry policy's (`RetryPolicy`; `retry=`
    whole) and the execution's (`judge.run.spec.Execution`). tests/test_spec.py holds these keys equal to the
    spec's fields."""

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
    policy: CitationPolicy            # how several citations must support a sentence (--citation-policy)
    truncate: bool
    max_chars: int                    # passages: a longer document is cut into the passages closest to the sentence
    window_chars: int
    max_doc_bytes: int | None
    prompts_dir: PathLike | None
    on_injection: InjectionPolicy
    thresholds: Thresholds | None     # decision thresholds (judge.judging.thresholds.read_thresholds); None: none
    injection_detector: InjectionDetector
    retry: RetryPolicy
    transport_attempts: int
    reasks: int
    wait_multiplier: float
    wait_max: float
    give_up_after: int
    max_cost: float | None
    price_per_1k: float | None
    max_failed_fraction: float
    resume: bool
    shard: str | Shard | None         # "I/N", as --shard takes it
    ray: str | None                   # "local", "auto" or "ray://HOST:PORT" (docs/scale.md)
    workers: int | None
    batch: bool                       # ask through the provider's batch jobs (docs/batch.md)
    batch_poll: float                 # seconds between two looks at a running job
    panel: Sequence[PanelMember]      # a panel of judges, each its own model, server and prompts (docs/models.md)
    vote: Vote | None                 # how a panel votes per decision: majority (default), unanimous, any


def eval_spec(arguments: dict[str, Any]) -> EvalSpec:
    """The specification `evaluate`'s arguments ask for: inputs checked for their kind (before any is read, so a
    wrong input never waits behind a slow one), every setting by the spec's own rules."""
    from judge.run.spec import EvalSpec

    for argument, kind, optional in (("reports", Report, False), ("requests", Request, False),
                                     ("docs", Document, False), ("nuggets", NuggetBank, True),
                                     ("human", ReportJudgment, True), ("gold", Report, True)):
        _check_input(argument, arguments.get(argument), kind, optional=optional)
    for argument in ("cache", "out", "router_config", "prompts_dir"):
        _check_path(argument, arguments.get(argument))
    if arguments.get("judge") is None:
        arguments.pop("judge", None)  # the spec's default judging
    _panel_of(arguments)
    if arguments.get("out") is not None:
        arguments["out"] = Path(arguments["out"])
    for name in ("measures", "api_bases"):  # lists as the spec's tuples
        if isinstance(arguments.get(name), list | tuple):
            arguments[name] = tuple(arguments[name])
    return EvalSpec.of(**arguments)


def _panel_of(arguments: dict[str, Any]) -> None:
    """`model` given as a list of models: a panel of those judges, each with the other model settings given (and the
    one server and prompts); `panel` given: its first judge stands for the model, and the model settings are the
    judges' own. `arguments` is changed in place; nothing changes for one judge."""
    from judge.settings import ModelSettings

    model, panel = arguments.get("model"), arguments.get("panel")
    fields = [f for f in ModelSettings.__dataclass_fields__ if f != "model" and f in arguments]
    if isinstance(model, list | tuple):
        if panel is not None:
            raise SettingError("give the judges either as a list of models (model=[...]) or as "
                               "panel=[PanelMember ...], not both")
        settings = [ModelSettings(name, **{f: arguments[f] for f in fields}) for name in model]
        panel = [PanelMember(each, arguments.get("prompts_dir")) for each in settings]
        arguments.update(model=settings[0], panel=tuple(panel))
        return
    if panel is not None:
        if isinstance(panel, list | tuple) and panel and isinstance(panel[0], PanelMember):
            given = ["model"] * (model not in (None, EMBEDDED_MODEL)) + [
                name for name in ("api_base", *fields) if arguments.get(name) is not None]
            if given:
                raise SettingError(f"{', '.join(given)}: a panel names each judge's model and server "
                                   "(PanelMember.model); give them there")
            for name in ("api_base", *fields):
                arguments.pop(name, None)
            arguments.update(model=panel[0].model, panel=tuple(panel))
        elif isinstance(panel, list):
            arguments["panel"] = tuple(panel)


async def _evaluate(spec: EvalSpec, progress: JudgingProgress | None) -> Evaluation:
    """Run `spec`: resolve it once, load its inputs, and, holding the output folder from the first check to the
    last rename, judge, score, and write what it asks for."""
    from judge.formats.lock import output_lock
    from judge.run.evaluate import JudgingProgress
    from judge.run.evaluate import evaluate_async as run_evaluation
    from judge.run.outputs import write_outputs

    check("progress", progress, JudgingProgress | None)
    measures = select_measures(spec.outputs.measures)
    plan = spec.resolve()
    if progress is not None and progress.planned is not None:
        progress.planned(plan)
    out = spec.outputs.out
    sources = spec.inputs
    with ExitStack() as stack:
        inputs = _load_inputs(spec, stack)
        human = None
        if sources.human is not None:
            human = _humans("human", sources.human, sources.sample)
            from judge.run.prediction_powered import check_human

            # human judgments that do not fit are refused before any model call
            check_human(human, inputs.reports, sources.sample)
        if progress is not None and progress.loaded is not None:
            progress.loaded(inputs)
        # One run writes OUT at a time, to its last rename (judge.formats.lock); the finished files of an earlier run
        # stay as they are until write_outputs swaps the new ones in.
        stack.enter_context(output_lock(out, "eval") if out is not None else nullcontext())
        evaluation = await run_evaluation(inputs, plan, progress, out=out)
        evaluation.measures = measures
        # Baselines and estimates before the summary is written, so their diagnostics (the human files' own
        # warnings among them) reach run-summary.json.
        if spec.outputs.baselines:
            evaluation.baseline_results = _eval_baselines(inputs, sources.gold, out, evaluation)
        estimates = _estimates(evaluation.scores, evaluation.signature, human, evaluation.judgments, sources.sample,
                               sources.confidence, plan.judge.policy, inputs.banks,
                               evaluation.diagnostics) if human is not None else None
        if out is not None:
            write_outputs(evaluation, out)
        if estimates is not None:
            evaluation.estimates = _write_estimates(estimates, out) if out is not None else estimates
        if spec.outputs.view:  # while the document store is open: the pages show the cited documents
            from judge.run.prediction_powered import ppi_json
            from judge.view import write_view  # pulls in jinja2 and scipy only when asked for

            estimates = evaluation.estimates
            evaluation.view_index = write_view(
                evaluation.judgments, out / "view", requests=inputs.requests, banks=inputs.banks,  # type: ignore[operator]
                documents=inputs.documents,
                estimates=ppi_json(estimates.corrected, estimates.signature) if estimates else None).index
    return evaluation


def _load_inputs(spec: EvalSpec, stack: ExitStack) -> Inputs:
    """The spec's inputs, loaded and checked (closed with `stack`): objects as given, files read."""
    from judge.run.inputs import Inputs

    sources = spec.inputs
    reports = _given("reports", sources.reports, Report)
    requests = _given("requests", sources.requests, Request)
    if not isinstance(requests[0], Request) and len(requests) != 1:
        raise TypeError("requests must be one requests file or Request objects (or dicts)")
    docs = _given("docs", sources.docs, Document)
    nuggets = _given("nuggets", sources.nuggets, NuggetBank, optional=True)
    return stack.enter_context(Inputs.load(reports, requests, nuggets or None, docs,
                                           docstore_dir(spec.execution.cache),
                                           max_doc_bytes=spec.judge.passages.max_doc_bytes,
                                           shard=spec.execution.shard, out=spec.outputs.out))


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


def evaluate(reports: ReportInputs, *, requests: RequestInputs, docs: DocumentInputs,
             nuggets: NuggetInputs | None = None, model: str | Sequence[str] = EMBEDDED_MODEL,
             api_base: str | None = None, api_key: str | None = None, judge: JudgeSettings | None = None,
             cache: PathLike | None = DEFAULT_CACHE, out: PathLike | None = None, concurrency: int = 4,
             measures: Sequence[str] | None = None,
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
    arguments = {name: value for name, value in locals().items() if name not in ("options", "progress")}
    return run_sync(_evaluate(eval_spec({**arguments, **options}), progress))


async def evaluate_async(reports: ReportInputs, *, requests: RequestInputs, docs: DocumentInputs,
                         nuggets: NuggetInputs | None = None, model: str | Sequence[str] = EMBEDDED_MODEL,
                         api_base: str | None = None, api_key: str | None = None, judge: JudgeSettings | None = None,
                         cache: PathLike | None = DEFAULT_CACHE, out: PathLike | None = None, concurrency: int = 4,
                         measures: Sequence[str] | None = None, human: JudgmentInputs | None = None,
                         sample: SampleDesign = "reports", confidence: float = 0.95, view: bool = False,
                         baselines: bool = False, gold: ReportInputs | None = None,
                         progress: JudgingProgress | None = None, **options: Unpack[EvalOptions]) -> Evaluation:
    """`evaluate`, awaited (`await judge.evaluate_async(...)` in async code); the same arguments."""
    arguments = {name: value for name, value in locals().items() if name not in ("options", "progress")}
    return await _evaluate(eval_spec({**arguments, **options}), progress)

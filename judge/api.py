"""The Python API: every feature of the command line, callable from a script or a notebook cell.

    judge.evaluate(reports, requests=..., docs=..., nuggets=...)   judge reports, score them   (argue-judge eval)
    judge.score(judgments, nuggets=..., measures=[...])            metrics from judgments alone (argue-judge score)
    judge.calibrate(attributionbench=..., wice=..., nuggets=...)   agreement with human labels  (argue-judge calibrate)
    judge.html_view(judgments, out=...)                            the HTML pages               (argue-judge view)
    judge.run_baselines(reports, nuggets=..., gold=...)            EXAM, ROUGE, pa-BLEU, ...     (eval --with-baselines)
    judge.baseline(name, reports, ...)                             one baseline, its settings   (argue-judge baseline)
    judge.merge(shards, out=...)                                   shards into one run          (argue-judge merge)
    judge.read_judgments(path) / judge.write_judgments(path, js)   the judgments format, both ways (import/export)

Every call works inside a running event loop (a Jupyter cell) and outside one; async code awaits
`evaluate_async`, `calibrate_async`, ... instead. Inputs are paths (str or Path) or in-memory objects: the
package's own types (`judge.types.Report`, `Request`, `Document`, `NuggetBank`; `ReportJudgment`) or plain dicts
in the files' formats; objects are read by the same readers as files, so they are checked alike. Arguments are
checked by the rules the command line applies (declared once on the settings objects, judge.settings): a wrong
one raises ValueError or TypeError naming it. The defaults are the command line's, so a call and the command with
the same options judge alike (same thresholds, prompts, passages, cache).

Results carry one `signature` (what their numbers depend on) and convert to rows: `to_records()`, `to_pandas()`
(with pandas installed), `aggregates()`; in a notebook they draw their leaderboard. `measures=` keeps the named
measures (ir_measures' names: "F1", "SentencePrecision", "NuggetRecall(weighted=True)", aliases too); `human=`
adds the prediction-powered estimates from a human sample (docs/ppi.md).

`eval_config` and `calibration_config` build the run configuration of `evaluate` and `calibrate`; the commands
`argue-judge eval` and `argue-judge calibrate` are shells over `evaluate_with(EvalRequest)` and `calibrate`, so an
option cannot reach one path and miss the other (tests/test_api.py holds the configs of both paths equal, and
walks every command to the call behind it).

Every example below runs as a doctest in CI (tests/test_api.py), in a folder holding the bundled `examples/` and
`argue-out/`, the output of the README's first command. There the judge is `judge.testing.FakeEndpoint`, a local
stand-in for a hosted model that answers by cheap text rules, so the doctests check what the calls return, not
the embedded judge's verdicts. With a real model, drop the endpoint and pass `model=` as on the command line (the
default is the embedded judge).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.diagnostics import Diagnostics
from judge.errors import SettingError
from judge.event_loop import run_sync
from judge.formats.judgments import ReportJudgment
from judge.formats.judgments import write_judgments as _write_judgments
from judge.judging.judgments_reader import iter_judgments
from judge.labels import CitationPolicy
from judge.llm.cache.backends import DEFAULT_CACHE_DIR, docstore_dir
from judge.llm.embedded.weights import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.metrics.sampling import DESIGNS as SAMPLE_DESIGNS  # how a human sample was drawn
from judge.metrics.table import ScoreTable, select_measures
from judge.nuggets.api import (  # the nuggets floor's calls, public here with the rest
    accept_candidates,
    create_nuggets,
    create_nuggets_async,
    pool_nuggets,
    pool_nuggets_async,
)
from judge.settings import (
    CONFIDENCE,
    Bounds,
    Flag,
    InstanceOf,
    JudgeSettings,
    ModelSettings,
    Number,
    OneOf,
    check_rules,
)
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.baselines.suite import BaselineResult
    from judge.calibration.report import CalibrationResults
    from judge.calibration.sources import ItemSources, SampleSize
    from judge.calibration.suite import CalibrationConfig
    from judge.judging.signature import ScoreSignature
    from judge.metrics.corrected import CorrectedScores
    from judge.metrics.scoring import Scores
    from judge.run.evaluate import EvalConfig, JudgingProgress
    from judge.run.merge import Merged
    from judge.run.outputs import Evaluation
    from judge.view.render import ViewFiles

PathLike = str | Path
DEFAULT_CACHE = str(DEFAULT_CACHE_DIR)   # eval's and calibrate's --cache-dir default

# In the order the reference (docs/python.md, generated) lists them.
__all__ = ["evaluate", "evaluate_async", "score", "calibrate", "calibrate_async", "html_view", "run_baselines",
           "baseline", "merge", "read_judgments", "write_judgments", "cache_stats", "clear_cache", "export_cache",
           "import_cache", "evaluate_with", "evaluate_with_async", "EvalRequest", "ScoredJudgments", "HumanEstimates",
           "create_nuggets", "create_nuggets_async", "pool_nuggets", "pool_nuggets_async", "accept_candidates"]


# ---------------------------------------------------------------------------------------------------------------
# Inputs: paths or objects

def _paths(value: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [Path(value)]
    return [Path(v) for v in value]


def _check_path(argument: str, value: Any, *, many: bool = False, optional: bool = True) -> None:
    """TypeError naming `argument` unless `value` is a path (str or Path), with `many` a list of paths too."""
    if (value is None and optional) or isinstance(value, str | Path) or (many and _is_paths(value)):
        return
    wanted = "a path (str or Path)" + (" or a list of paths" if many else "") + (" or None" if optional else "")
    raise TypeError(f"{argument} must be {wanted}, not {type(value).__name__} {value!r:.60}")


def _check_input(argument: str, value: Any, kind: type, *, optional: bool = True) -> None:
    """TypeError naming `argument` unless `value` is paths, or `kind` objects or dicts (one or a list), checked
    before any work so that a wrong input never waits behind a slow one."""
    if value is None:
        if optional:
            return
        raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
    if _is_paths(value) or isinstance(value, kind | Mapping):
        return
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{argument} must be a path, paths, or {kind.__name__} objects (or dicts), "
                        f"not {type(value).__name__} {value!r:.60}")
    if isinstance(value, Sequence):
        for item in value:
            if not isinstance(item, kind | Mapping):
                raise TypeError(f"{argument}: {type(item).__name__} {item!r:.60} is neither a path nor a "
                                f"{kind.__name__} (or dict)")


def _is_paths(value: Any) -> bool:
    if isinstance(value, str | Path):
        return True
    return isinstance(value, Sequence) and bool(value) and all(isinstance(v, str | Path) for v in value)


def _report_record(report: Report | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(report, Mapping):
        return report
    metadata = {"run_id": report.run_id, "topic_id": report.request_id}
    if report.team_id is not None:
        metadata["team_id"] = report.team_id
    return {"metadata": metadata, "responses": [{"text": s.text, "citations": list(s.citations)}
                                                for s in report.sentences]}


def _request_record(request: Request | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(request, Mapping):
        return request
    record: dict[str, Any] = {"request_id": request.request_id, "title": request.title,
                              "background": request.background, "problem_statement": request.problem_statement,
                              "collection_ids": list(request.collection_ids)}
    if request.limit is not None:
        record["word_limit" if request.limit_unit == "words" else "limit"] = request.limit
    return record


def _document_record(document: Document | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(document, Mapping):
        return document
    return {"doc_id": document.doc_id, "title": document.title, "text": document.text}


def _bank_record(bank: NuggetBank | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(bank, Mapping):
        return bank
    return {"query_id": bank.request_id, "format_version": "v3", "nugget_bank": [
        {"question": n.question, "question_id": n.nugget_id, "aggregator_type": n.aggregator,
         "importance": n.importance, "absence": n.absence,
         "answers": {a.text: {"answer": a.text, "references": [{"doc_id": d} for d in a.doc_ids]} for a in n.answers}}
        for n in bank.nuggets]}


class _Materialised:
    """In-memory inputs written as the files their readers read (one JSONL file per kind, in a temporary folder
    that lives as long as the call): objects are checked exactly as files are, and errors name the argument."""

    def __init__(self, stack: ExitStack):
        self._stack = stack
        self._folder: Path | None = None

    def _write(self, name: str, records: Iterable[Mapping[str, Any]]) -> Path:
        if self._folder is None:
            self._folder = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="argue-api-")))
        path = self._folder / name
        with path.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return path

    def judgments(self, argument: str, records: Iterable[ReportJudgment]) -> Path:
        """Records written as a judgments file, by the format's own writer."""
        path = self._write(f"{argument}.jsonl", ())
        _write_judgments(path, records)
        return path

    def paths(self, argument: str, value: Any, record: Callable[[Any], Mapping[str, Any]], kind: type,
              *, optional: bool = False) -> list[Path]:
        """Paths as given, or objects (`kind` or dicts) written to `argument`.jsonl."""
        if value is None:
            if optional:
                return []
            raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
        if _is_paths(value):
            return _paths(value)
        if isinstance(value, kind | Mapping):
            value = [value]
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise TypeError(f"{argument} must be a path, paths, or {kind.__name__} objects (or dicts), "
                            f"not {type(value).__name__}")
        items = list(value)
        for item in items:
            if not isinstance(item, kind | Mapping):
                raise TypeError(f"{argument}: {type(item).__name__} {item!r:.60} is neither a path nor a "
                                f"{kind.__name__} (or dict)")
        return [self._write(f"{argument}.jsonl", (record(item) for item in items))]


def _judgment_records(argument: str, judgments: Any, banks: Mapping[str, NuggetBank] | None = None
                      ) -> list[ReportJudgment]:
    """Judgments files (ours or Auto-ARGUE's, told apart by their first record), records, or dicts."""
    from judge.adapters.autoargue import read_any_judgments

    if _is_paths(judgments):
        return list(read_any_judgments(_paths(judgments), banks or {}))
    if isinstance(judgments, ReportJudgment | Mapping):
        judgments = [judgments]
    if isinstance(judgments, str | bytes) or not isinstance(judgments, Iterable):
        raise TypeError(f"{argument} must be judgments files or ReportJudgment records, "
                        f"not {type(judgments).__name__}")
    records = []
    for item in judgments:
        if isinstance(item, Mapping):
            item = ReportJudgment.model_validate(dict(item))
        elif not isinstance(item, ReportJudgment):
            raise TypeError(f"{argument}: {type(item).__name__} is neither a path nor a ReportJudgment (or dict)")
        records.append(item)
    return records


def _banks(argument: str, nuggets: Any, stack: ExitStack) -> dict[str, NuggetBank]:
    from judge.formats import read_nugget_banks

    paths = _Materialised(stack).paths(argument, nuggets, _bank_record, NuggetBank, optional=True)
    return read_nugget_banks(paths) if paths else {}


# ---------------------------------------------------------------------------------------------------------------
# The checks the command line makes on its options, made on the arguments

_HUMAN_RULES = {"sample": OneOf(SAMPLE_DESIGNS), "confidence": Number(CONFIDENCE)}


@dataclass(frozen=True)
class _HumanOptions:
    sample: str
    confidence: float


def _check_human(human: Any, sample: str, confidence: float) -> None:
    """sample and confidence describe the human sample: checked by their rules, and refused (not ignored) when
    they differ from the defaults with no human sample to describe."""
    check_rules(_HumanOptions(sample, confidence), _HUMAN_RULES)
    if human is None and (sample != "reports" or confidence != 0.95):
        argument = "sample" if sample != "reports" else "confidence"
        raise SettingError(f"{argument}: it describes the human sample; give human= too, or leave it at its default")


def _check_judge(judge: JudgeSettings | None) -> None:
    InstanceOf((JudgeSettings,), optional=True).check("judge", judge)


# ---------------------------------------------------------------------------------------------------------------
# evaluate

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
class HumanEstimates:
    """Prediction-powered estimates of each run's scores from a human sample (`human=`; docs/ppi.md): `corrected`
    (judge.metrics.corrected.CorrectedScores), the `signature` extended by the sample, and the files written."""

    corrected: CorrectedScores
    signature: ScoreSignature
    paths: list[Path] = field(default_factory=list)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per run and measure (the rows of ppi.tsv), as ppi.json holds them."""
        from judge.run.prediction_powered import ppi_json

        return list(ppi_json(self.corrected, self.signature)["runs"])

    def to_pandas(self) -> Any:
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas (or use to_records())") from None
        return pandas.json_normalize(self.to_records())

    def _repr_html_(self) -> str:
        import html

        def cell(interval: dict[str, Any]) -> str:
            if interval["value"] is None:
                return "–"
            bounds = "" if interval["low"] is None else f" [{interval['low']:.3f}, {interval['high']:.3f}]"
            return f"{interval['value']:.3f}{bounds}"

        rows = "".join(f"<tr><td>{html.escape(r['run_id'])}</td><td>{html.escape(r['measure'])}</td>"
                       f"<td>{r['labelled']}/{r['reports']}</td><td>{cell(r['ppi'])}</td></tr>"
                       for r in self.to_records())
        return (f"<table><thead><tr><th>run_id</th><th>measure</th><th>n/N</th><th>PPI</th></tr></thead>"
                f"<tbody>{rows}</tbody></table><p><code>{html.escape(self.signature.short())}</code></p>")


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
    _check_human(request.human, request.sample, request.confidence)
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


def _human_paths(human: Any, files: _Materialised, argument: str = "human") -> list[Path]:
    if _is_paths(human):
        return _paths(human)
    return [files.judgments(argument, _judgment_records(argument, human))]


def _estimates(scores: Scores, signature: ScoreSignature, human: list[Path], judged: Any, sample: str,
               confidence: float, policy: CitationPolicy, banks: Mapping[str, NuggetBank] | None,
               diagnostics: Diagnostics) -> HumanEstimates:
    """The prediction-powered table; the human files' own warnings go to `diagnostics`."""
    from judge.run.prediction_powered import estimate_with_humans

    corrected, extended = estimate_with_humans(scores, signature, human, judged, sample, confidence,  # type: ignore[arg-type]
                                               policy, banks, diagnostics)
    return HumanEstimates(corrected, extended)


def _write_estimates(estimates: HumanEstimates, out: Path) -> HumanEstimates:
    """ppi.tsv, ppi-pairs.tsv and ppi.json in `out` (under the caller's lock on it)."""
    from judge.run.prediction_powered import write_ppi_files

    paths = list(write_ppi_files(estimates.corrected, estimates.signature, out).values())
    return HumanEstimates(estimates.corrected, estimates.signature, paths)


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
    run_fields = {"retry", "max_cost", "price_per_1k", "max_failed_fraction", "resume", "shard", "ray", "workers"}
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
    and `ray="local"`, `"auto"` or `"ray://HOST:PORT"` with `workers=N` to judge on Ray: docs/scale.md).

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


# ---------------------------------------------------------------------------------------------------------------
# score

@dataclass(frozen=True)
class ScoredJudgments(ScoreTable):
    """What `score` returns: the scores, the signature that says how they were made, the scoring notes, and with
    `human=` the prediction-powered estimates. As rows: `to_records()`, `to_pandas()`, `aggregates()`."""

    scores: Scores
    signature: ScoreSignature
    warnings: list[str] = field(default_factory=list)
    measures: tuple[str, ...] | None = None
    estimates: HumanEstimates | None = None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)  # the warnings with their sources
    summary: Path | None = None    # score-summary.json, with every warning, when `out` was given

    def __getitem__(self, run_id: str) -> Any:
        """One run's scores: `scored["run-cited"]["F1"]` is that run's mean F1."""
        return self.scores.runs[run_id]


def score(judgments: Any, *, nuggets: Any = None, policy: CitationPolicy = "all",
          measures: Sequence[str] | None = None, human: Any = None, sample: str = "reports",
          confidence: float = 0.95, out: PathLike | None = None) -> ScoredJudgments:
    """Every metric from judgments alone, as `argue-judge score` does: LLM judgments and human labels alike; never
    calls a model. `judgments`: files (ours or Auto-ARGUE's, told apart by their first record), ReportJudgment
    records or dicts. `nuggets`: the banks (paths or NuggetBank objects), which Auto-ARGUE's measures and Auto-ARGUE
    files need. `measures`: the measures the rows keep (ir_measures' way: names, aliases). `human`, `sample`,
    `confidence`: prediction-powered estimates (`scored.estimates`). `out`: also write scores.tsv and
    leaderboard.tsv (and the ppi files) there. The signature names the judge the records carry (an LLM judge's
    signature, or the assessors: `human:...`).

    >>> import judge
    >>> scored = judge.score("argue-out/judgments.jsonl", nuggets="examples/nuggets")
    >>> sorted(scored.scores.runs)
    ['run-cited', 'run-miscited', 'run-padded']
    >>> scored["run-cited"]["SentencePrecision"] > scored["run-miscited"]["SentencePrecision"]
    True
    >>> scored.signature.short().startswith("argue-judge:0.1.0|judge:openai/fake|")
    True
    >>> f1 = judge.score("argue-out/judgments.jsonl", nuggets="examples/nuggets", measures=["F1"])
    >>> sorted({row["measure"] for row in f1.to_records()})
    ['F1']
    """
    from judge.formats.sniff import naming_the_format
    from judge.labels import CITATION_POLICIES
    from judge.run.score import judge_label_of
    from judge.run.score import score as score_records

    OneOf(CITATION_POLICIES).check("policy", policy)
    chosen = select_measures(measures)
    _check_human(human, sample, confidence)
    _check_path("out", out)
    _check_input("judgments", judgments, ReportJudgment, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("human", human, ReportJudgment)
    with ExitStack() as stack:
        banks = _banks("nuggets", nuggets, stack)
        with naming_the_format("an argue-judge judgments file"):
            records = _judgment_records("judgments", judgments, banks)
        scores, signature, warnings = score_records(records, judge_label_of(records), policy, banks or None)
        diagnostics = Diagnostics()
        diagnostics.extend(warnings, "scores")
        estimates = None
        if human is not None:
            human_paths = _human_paths(human, _Materialised(stack))
            estimates = _estimates(scores, signature, human_paths, records, sample, confidence, policy,
                                   banks or None, diagnostics)
    summary = None
    if out is not None:
        from judge.formats.lock import output_lock
        from judge.run.outputs import write_scored

        with output_lock(Path(out), "score"):
            summary = write_scored(scores, signature, Path(out), diagnostics)[-1]
            if estimates is not None:
                estimates = _write_estimates(estimates, Path(out))
    return ScoredJudgments(scores, signature, diagnostics.messages(), chosen, estimates, diagnostics, summary)


# ---------------------------------------------------------------------------------------------------------------
# calibrate

@contextmanager
def calibration_config(model: ModelSettings, judge: JudgeSettings | None, sources: ItemSources, *,
                       cache: PathLike | None = DEFAULT_CACHE, sample: SampleSize | None = None, seed: int = 0,
                       n_boot: int = 1000, concurrency: int = 4, **run_options: Any) -> Iterator[CalibrationConfig]:
    """The run configuration of `calibrate` and of `argue-judge calibrate`, its decision cache open until the
    `with` block ends. `judge`: None for calibrate's default judging. `sources`: the data sets the items come from.
    `cache`: a directory or redis://..., None for none. `run_options`: the other fields of
    `judge.calibration.suite.CalibrationConfig` (against, exclude, attacks, fit_metric)."""
    from judge.calibration.suite import CalibrationConfig
    from judge.llm.cache.store import open_decision_cache

    _check_judge(judge)
    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        yield CalibrationConfig(model=model, judge=judge or JudgeSettings(), concurrency=concurrency,
                                cache=decision_cache, n_boot=n_boot, seed=seed, sample=sample,
                                wice_partial=sources.wice_partial if sources.wice else None, **run_options)
    finally:
        if decision_cache is not None:
            decision_cache.close()


CALIBRATED_POLICIES = ("quarantine", "flag")  # 'penalise' decides flagged sentences without asking the model


@dataclass
class CalibrationProgress:
    """Callbacks as calibration goes (the CLI hands in its progress bar): `start(total)` once the items are
    loaded, `item_done()` after each answer."""

    start: Callable[[int], None] = lambda total: None
    item_done: Callable[[], None] = lambda: None


def choose_attacks(names: str | Sequence[Any] | None, attacks_file: PathLike | None = None) -> tuple[Any, ...]:
    """Attack kinds by name, in the order given ("kind,kind", or a list; Attack objects are taken as they are).
    With `attacks_file`, the kinds of that file ('all': every one, in its order); without, the bundled kinds ('all')
    and the held-out ones ('unseen'), each also by name. ValueError on an unknown kind."""
    from judge.defence.injection import UNSEEN_ATTACKS_FILE, Attack, load_attacks

    if not isinstance(names, str) and names is not None and all(isinstance(n, Attack) for n in names):
        return tuple(names)  # chosen already (an empty sequence: no red team)
    if names is None:
        if attacks_file is not None:
            raise SettingError("an attacks file needs attack kinds (KIND[,KIND...] or 'all')")
        return ()
    sets = {"all": load_attacks(Path(attacks_file))} if attacks_file is not None else \
        {"all": load_attacks(), "unseen": load_attacks(UNSEEN_ATTACKS_FILE)}
    known = {kind: attack for kinds in sets.values() for kind, attack in kinds.items()}
    given = names.split(",") if isinstance(names, str) else list(names)
    # A set's name stands for its kinds, in the set's order: "unseen,assessor_note" is every held-out kind and one more.
    wanted = [kind for n in given if n.strip() for kind in (sets[n.strip()] if n.strip() in sets else [n.strip()])]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        raise SettingError(f"unknown attack kind(s) {', '.join(unknown) or '(none given)'}; choose "
                         f"{' or '.join(repr(s) for s in sets)} or some of {', '.join(known)}")
    return tuple(known[n] for n in dict.fromkeys(wanted))


def calibrate(*, attributionbench: PathLike | None = None, wice: PathLike | None = None, wice_partial: str = "strict",
              nuggets: PathLike | Sequence[PathLike] | None = None, docs: PathLike | Sequence[PathLike] | None = None,
              human: Any = None, judged: Any = None, sample: str | None = None, exclude: PathLike | None = None,
              seed: int = 0, model: str = EMBEDDED_MODEL, api_base: str | None = None, api_key: str | None = None,
              judge: JudgeSettings | None = None, against: PathLike | None = None,
              attacks: str | Sequence[str] | None = None, attacks_file: PathLike | None = None,
              fit_metric: str | None = None, cache: PathLike | None = DEFAULT_CACHE, n_boot: int = 1000,
              concurrency: int = 4, out: PathLike | None = None, plots: bool = False,
              progress: CalibrationProgress | None = None, **model_options: Any) -> CalibrationResults:
    """How far each judge decision agrees with human labels, as `argue-judge calibrate` does: AttributionBench and
    WiCE (supports_citation) and nugget banks with their documents (answers_nugget); `human` with `judged` (the
    judge's judgments of the same reports) compares them decision by decision and report by report.
    `wice_partial`: what WiCE's partially_supported is ('strict': not supported, 'exclude', 'separate'). `sample`:
    "40" or "attributionbench=200,wice=150". `exclude`: items to leave out (an items.jsonl or ids). `against`: an
    old prompt directory to compare with the judge's (McNemar). `attacks` (with `attacks_file`): the red team's
    attack kinds. `fit_metric`: fit a confidence threshold per decision maximising it ('kappa', ...). `out`: also
    write calibration.md/.html/.json (and with `plots` the figures, with `fit_metric` the thresholds file) there;
    `results.files` lists them. Safe inside a running event loop; `calibrate_async` is the awaitable twin.

    >>> import judge
    >>> from judge.testing import FakeEndpoint, smart_responder
    >>> with FakeEndpoint(smart_responder) as model:
    ...     results = judge.calibrate(nuggets="examples/nuggets", docs="examples/docs.jsonl", model="openai/fake",
    ...                               api_base=model.api_base, api_key="none", cache=None, n_boot=200)
    >>> agreement = results.decisions["answers_nugget"]
    >>> agreement.n > 0 and 0.0 <= agreement.accuracy <= 1.0
    True
    """
    from judge.calibration.redteam import attacked_count
    from judge.calibration.report import write_calibration_report
    from judge.calibration.report_confidence import THRESHOLDS_NAME
    from judge.calibration.sources import WICE_PARTIAL_POLICIES, Exclusion, ItemSources, SampleSize, load_items
    from judge.calibration.stats import FIT_METRICS
    from judge.calibration.suite import CalibrationConfig, write_thresholds
    from judge.calibration.suite import calibrate as run_calibration
    from judge.errors import InputError
    from judge.run.score import score as score_records

    OneOf(WICE_PARTIAL_POLICIES).check("wice_partial", wice_partial)
    OneOf(FIT_METRICS, optional=True).check("fit_metric", fit_metric)
    Flag().check("plots", plots)
    for name, value in (("concurrency", concurrency), ("n_boot", n_boot), ("seed", seed)):
        CalibrationConfig.RULES[name].check(name, value)  # now, not after the items are read
    for name, value in (("attributionbench", attributionbench), ("wice", wice), ("exclude", exclude),
                        ("against", against), ("attacks_file", attacks_file), ("cache", cache), ("out", out)):
        _check_path(name, value)
    _check_path("nuggets", nuggets, many=True)
    _check_path("docs", docs, many=True)
    InstanceOf((str,), optional=True).check("sample", sample)
    InstanceOf((str, list, tuple), optional=True).check("attacks", attacks)
    InstanceOf((CalibrationProgress,), optional=True).check("progress", progress)
    _check_input("human", human, ReportJudgment)
    _check_input("judged", judged, ReportJudgment)
    settings = ModelSettings(model, api_base, api_key, **model_options)
    _check_judge(judge)
    if judge is not None:
        OneOf(CALIBRATED_POLICIES).check("judge.on_injection", judge.on_injection)
    if (human is None) != (judged is None):
        raise SettingError("human and judged go together: the assessors' judgments and the judge's of the same reports")
    progress = progress or CalibrationProgress()
    diagnostics = Diagnostics()
    sources = ItemSources(Path(attributionbench) if attributionbench else None, Path(wice) if wice else None,
                          wice_partial,  # type: ignore[arg-type]
                          nuggets=tuple(_paths(nuggets)), docs=tuple(_paths(docs)), index_dir=docstore_dir(cache))
    chosen_attacks = choose_attacks(attacks, attacks_file)
    sample_size = SampleSize.parse(sample) if sample is not None else None
    exclusion = Exclusion.read(Path(exclude)) if exclude is not None else None
    items = load_items(sources, sample_size, seed, diagnostics, exclusion)
    human_records: list[ReportJudgment] = []
    judged_records: list[ReportJudgment] = []
    if human is not None:
        from judge.calibration.importers import read_paired_judgments

        with ExitStack() as stack:  # records are written to files and read back: checked as files are
            files = _Materialised(stack)
            human_records, judged_records, by_file = read_paired_judgments(
                _human_paths(human, files), _human_paths(judged, files, "judged"))
        for name, records in by_file.items():  # each file's own warnings, as `score FILE` gives them
            diagnostics.extend((f"{name}: {w}" for w in score_records(records, "calibration")[2]), "scores")
    if not items and not human_records:
        raise InputError("nothing to calibrate: give attributionbench=, wice=, nuggets= with docs=, or human= with "
                         "judged=")
    with calibration_config(settings, judge, sources, cache=cache, sample=sample_size, seed=seed, n_boot=n_boot,
                            concurrency=concurrency,
                            against=JudgeSettings(prompts_dir=Path(against)) if against else None,
                            exclude=exclusion, attacks=chosen_attacks, fit_metric=fit_metric) as config:
        progress.start(len(items) * (2 if against else 1) + attacked_count(items, chosen_attacks))
        results = run_calibration(items, config, human=human_records or None, judged=judged_records or None,
                                  score=lambda js: score_records(js, "calibration")[0].rows(),
                                  notes=diagnostics.messages(), on_item=progress.item_done)
    if out is not None:
        written = write_calibration_report(results, out, plots=plots)
        thresholds = write_thresholds(results, config, items, Path(out) / THRESHOLDS_NAME)
        results.files = [*written, *([thresholds] if thresholds else [])]
    return results


async def calibrate_async(**arguments: Any) -> CalibrationResults:
    """`calibrate`, awaited: the same keyword arguments. The calibration runs its own event loop in a worker thread
    (judge.event_loop.run_sync), so awaiting it leaves the caller's loop free."""
    import asyncio

    return await asyncio.to_thread(calibrate, **arguments)


# ---------------------------------------------------------------------------------------------------------------
# the HTML view, the baselines, merge

def html_view(judgments: Any, *, out: PathLike = "argue-view", nuggets: Any = None, requests: Any = None,
         docs: Any = None, against: Any = None, policy: CitationPolicy = "all",
         cache: PathLike | None = DEFAULT_CACHE) -> ViewFiles:
    """Static HTML pages of judgments (LLM judges or human assessors), as `argue-judge view` does: OUT/index.html
    (leaderboard, outcome histograms) and one page per report. `against`: judgments of the same reports by another
    judge or assessor (comparison pages). Paths or objects, as everywhere.

    >>> import judge
    >>> pages = judge.html_view("argue-out/judgments.jsonl", out="view", nuggets="examples/nuggets")
    >>> pages.index.name, len(pages.pages)
    ('index.html', 6)
    """
    from judge.formats import DocumentStore, read_requests
    from judge.labels import CITATION_POLICIES
    from judge.view import write_view

    OneOf(CITATION_POLICIES).check("policy", policy)
    _check_path("out", out, optional=False)
    _check_path("cache", cache)
    for argument, value, kind in (("judgments", judgments, ReportJudgment), ("nuggets", nuggets, NuggetBank),
                                  ("requests", requests, Request), ("docs", docs, Document),
                                  ("against", against, ReportJudgment)):
        _check_input(argument, value, kind, optional=argument != "judgments")
    with ExitStack() as stack:
        files = _Materialised(stack)
        banks = _banks("nuggets", nuggets, stack)
        records = _judgment_records("judgments", judgments, banks)
        other = _judgment_records("against", against, banks) if against is not None else None
        request_paths = files.paths("requests", requests, _request_record, Request, optional=True)
        doc_paths = files.paths("docs", docs, _document_record, Document, optional=True)
        store = stack.enter_context(DocumentStore.open(doc_paths, docstore_dir(cache))) if doc_paths else None
        labels = _side_labels(records, judgments, other or [], against)
        return write_view(records, out, requests=read_requests(request_paths[0]) if request_paths else None,
                          banks=banks or None, documents=store, against=other, labels=labels, policy=policy)


def _side_labels(a: Sequence[ReportJudgment], a_given: Any, b: Sequence[ReportJudgment], b_given: Any
                 ) -> tuple[str, str]:
    """Name each side by its assessor when it has one, else by its file names; never the same name twice."""
    def label(records: Sequence[ReportJudgment], given: Any, fallback: str) -> tuple[str, str]:
        paths = _paths(given) if _is_paths(given) else []
        names = ", ".join(p.name for p in paths) or fallback
        assessors = {j.assessor for j in records}
        return (assessors.pop() if len(assessors) == 1 else names), ", ".join(str(p) for p in paths) or fallback

    (first, first_where), (second, second_where) = label(a, a_given, "judgments"), label(b, b_given, "against")
    if first == second:
        first, second = f"{first} ({first_where})", f"{second} ({second_where})"
    return first, second


@dataclass(frozen=True)
class BaselineScores(ScoreTable):
    """One baseline's scores (EXAM, ROUGE, pa-BLEU, pa-METEOR): rows, signature, and its headline measure."""

    name: str
    rows: list[Any]
    signature: str
    headline: str
    measures: tuple[str, ...] | None = None   # the leaderboard's columns

    @property
    def scores(self) -> Any:
        return _Rows(self.rows)

    def to_records(self, *, aggregate: bool = False) -> list[dict[str, Any]]:
        """Every row of NAME.scores.tsv (all its measures), or the `all` rows alone."""
        rows = self.scores.aggregate_rows() if aggregate else self.rows
        return [{"run_id": r.run_id, "request_id": r.request_id, "measure": r.metric, "value": r.value}
                for r in rows]


@dataclass(frozen=True)
class _Rows:
    all_rows: list[Any]

    def iter_rows(self) -> Iterator[Any]:
        return iter(self.all_rows)

    def aggregate_rows(self) -> list[Any]:
        from judge.formats.scores import ALL

        return [r for r in self.all_rows if r.request_id == ALL]


def run_baselines(reports: Any, *, nuggets: Any = None, gold: Any = None, out: PathLike | None = None
              ) -> list[BaselineScores]:
    """Score reports with the baselines, as `argue-judge baseline` and `eval --with-baselines` do: EXAM from the
    nugget banks, and with `gold` reports ROUGE, pa-BLEU and pa-METEOR. A baseline whose extra is not installed
    is left out with a warning (judge.baselines.BaselineWarning). `out`: also write OUT/<name>.scores.tsv.

    >>> import judge, warnings
    >>> with warnings.catch_warnings():   # EXAM is skipped without nugget banks, and says so
    ...     warnings.simplefilter("ignore")
    ...     scored = judge.run_baselines("examples/reports", gold="examples/gold")
    >>> [b.name for b in scored]
    ['rouge', 'pa-bleu', 'pa-meteor']
    >>> sorted(scored[1].aggregates())
    ['run-cited', 'run-miscited', 'run-padded']
    """
    import warnings

    from judge.baselines.suite import run_baselines as run_suite

    _check_path("out", out)
    from judge.formats import read_reports
    from judge.formats.scores import write_scores

    with ExitStack() as stack:
        files = _Materialised(stack)
        report_list = read_reports(files.paths("reports", reports, _report_record, Report))
        banks = _banks("nuggets", nuggets, stack)
        gold_paths = files.paths("gold", gold, _report_record, Report, optional=True)
        results, notes = run_suite(report_list, banks, read_reports(gold_paths) if gold_paths else None)
    for note in notes:
        from judge.baselines import BaselineWarning

        warnings.warn(note, BaselineWarning, stacklevel=2)
    if out is not None:
        for result in results:
            write_scores(Path(out) / f"{result.name}.scores.tsv", result.rows, str(result.signature))
    return [BaselineScores(r.name, list(r.rows), r.signature, r.headline,
                           tuple(BASELINE_COLUMNS.get(r.name, [r.headline]))) for r in results]


# One baseline by name, with the settings its command offers (argue-judge baseline NAME --help); their checks are
# the command's: a bad choice or a number out of range is a ValueError naming it.
BASELINE_SETTINGS: dict[str, dict[str, Any]] = {
    "exam": {"qa": "embedding", "k": 3, "match": "f1", "f1_threshold": 0.5, "null_threshold": 0.0},
    "rouge": {"multi": "max", "stem": True, "stopwords": True},
    "pa-bleu": {"smooth": "exp", "smooth_value": None},
    "pa-meteor": {},
}
BASELINE_RULES: dict[str, Any] = {
    "k": Number(Bounds(1, 1000), integer=True), "match": OneOf(("f1", "exact")),
    "f1_threshold": Number(Bounds(0, 1, low_open=True)), "null_threshold": Number(Bounds(-1000, 1000)),
    "multi": OneOf(("max", "mean")), "stem": Flag(), "stopwords": Flag(),
    "smooth": OneOf(("exp", "floor", "add-k", "none")), "smooth_value": Number(Bounds(0, 100), optional=True),
    "qa": InstanceOf((str,)),
}
# What each baseline's leaderboard shows (its TSV holds more: precision, recall).
BASELINE_COLUMNS = {"exam": ["EXAM"], "rouge": ["ROUGE-1-F", "ROUGE-2-F", "ROUGE-SU4-F"],
                    "pa-bleu": ["pa-BLEU", "BLEU"], "pa-meteor": ["pa-METEOR", "METEOR"]}


def baseline(name: str, reports: Any, *, nuggets: Any = None, gold: Any = None, out: PathLike | None = None,
             **settings: Any) -> BaselineScores:
    """One baseline with its own settings, as `argue-judge baseline NAME` does: 'exam' (needs `nuggets`; `gold`
    adds n-EXAM; settings qa, k, match, f1_threshold, null_threshold), 'rouge' (multi, stem, stopwords), 'pa-bleu'
    (smooth, smooth_value), 'pa-meteor'; the last three need `gold`. `out`: also write OUT/NAME.scores.tsv."""
    OneOf(tuple(BASELINE_SETTINGS)).check("name", name)
    unknown = set(settings) - set(BASELINE_SETTINGS[name])
    if unknown:
        raise TypeError(f"baseline {name!r} has no setting {', '.join(sorted(unknown))}; its settings: "
                        f"{', '.join(BASELINE_SETTINGS[name]) or 'none'}")
    _check_path("out", out)
    _check_input("reports", reports, Report, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("gold", gold, Report)
    chosen = {**BASELINE_SETTINGS[name], **settings}
    for key, value in chosen.items():
        BASELINE_RULES[key].check(key, value)
    from judge.formats import read_reports
    from judge.formats.scores import write_scores

    with ExitStack() as stack:
        files = _Materialised(stack)
        runs = read_reports(files.paths("reports", reports, _report_record, Report))
        gold_paths = files.paths("gold", gold, _report_record, Report, optional=name == "exam")
        gold_reports = read_reports(gold_paths) if gold_paths else None
        banks = _banks("nuggets", nuggets, stack)
        if name == "exam" and not banks:
            raise TypeError("baseline 'exam' needs nuggets= (the banks whose questions the reader answers)")
        rows, signature, columns = _run_baseline(name, runs, banks, gold_reports, chosen)
    if out is not None:
        write_scores(Path(out) / f"{name}.scores.tsv", rows, signature)
    return BaselineScores(name, rows, signature, columns[0], tuple(columns))


def _run_baseline(name: str, runs: list[Report], banks: dict[str, NuggetBank], gold: list[Report] | None,
                  chosen: dict[str, Any]) -> tuple[list[Any], str, list[str]]:
    if name == "exam":
        from judge.baselines.answers import AnswerMatcher
        from judge.baselines.exam import N_EXAM, exam_scores, exam_signature
        from judge.baselines.readers import load_qa

        matcher = AnswerMatcher(chosen["match"], chosen["f1_threshold"])
        reader = load_qa(chosen["qa"], k=chosen["k"], matcher=matcher, null_threshold=chosen["null_threshold"])
        rows = exam_scores(runs, banks, reader, gold=gold, matcher=matcher)
        return rows, exam_signature(reader, matcher, gold=gold is not None), \
            ["EXAM"] + ([N_EXAM] if gold is not None else [])
    assert gold is not None  # files.paths refused a missing gold for these
    if name == "rouge":
        from judge.baselines.rouge import rouge_scores, rouge_signature

        rows = rouge_scores(runs, gold, multi=chosen["multi"], stem=chosen["stem"], stopwords=chosen["stopwords"])
        return rows, rouge_signature(chosen["stem"], chosen["stopwords"], chosen["multi"]), BASELINE_COLUMNS[name]
    from judge.baselines.consensus import pa_bleu_scores, pa_bleu_signature, pa_meteor_scores, pa_meteor_signature

    if name == "pa-bleu":
        rows = pa_bleu_scores(runs, gold, chosen["smooth"], chosen["smooth_value"])
        return rows, pa_bleu_signature(chosen["smooth"], chosen["smooth_value"]), BASELINE_COLUMNS[name]
    return pa_meteor_scores(runs, gold), pa_meteor_signature(), BASELINE_COLUMNS[name]


def merge(shards: Sequence[PathLike], *, out: PathLike = "argue-out") -> Merged:
    """The output folders of `eval --shard I/N` runs combined into exactly the files a single run writes, as
    `argue-judge merge` does."""
    from judge.run.merge import merge_outputs

    if isinstance(shards, str | Path) or not _is_paths(shards):
        raise TypeError(f"shards must be a list of output folders (one per shard), not {shards!r:.60}")
    _check_path("out", out, optional=False)
    return merge_outputs([Path(s) for s in shards], Path(out))


# ---------------------------------------------------------------------------------------------------------------
# the decision cache (argue-judge cache stats|clear|export|import)

@contextmanager
def _cache_failures(target: PathLike, *, writing: bool) -> Iterator[None]:
    """A store that fails mid-call (a lost Redis connection, a locked or damaged database): OutputError when the
    call was writing to it, ConfigurationError (an unreadable cache) when reading."""
    from judge.errors import ConfigurationError, OutputError
    from judge.llm.cache.backends import CacheBackendError

    try:
        yield
    except CacheBackendError as exc:
        if writing:
            raise OutputError(f"cannot write the decision cache at {target}: {exc}") from exc
        raise ConfigurationError(f"cannot read the decision cache at {target}: {exc}") from exc


def _cache_target(cache: PathLike) -> str | Path:
    """A URL as given; a directory only when it holds a cache (opening a mistyped path would create one)."""
    _check_path("cache", cache, optional=False)
    from judge.llm.cache.backends import is_url
    from judge.llm.cache.store import existing_cache_directory

    return str(cache) if is_url(str(cache)) else existing_cache_directory(Path(cache))


def cache_stats(cache: PathLike = DEFAULT_CACHE) -> dict[str, Any]:
    """How many decisions a cache (a directory or redis://...) holds and how much space they use:
    {"location", "entries", "bytes"} (bytes None where the store cannot say)."""
    from judge.llm.cache.store import open_decision_cache

    with _cache_failures(cache, writing=False):
        store = open_decision_cache(_cache_target(cache))
        try:
            return dict(store.stats())
        finally:
            store.close()


def clear_cache(cache: PathLike = DEFAULT_CACHE) -> int | None:
    """Delete every cached decision; the number removed (None: an unreadable database was removed whole)."""
    from judge.llm.cache.backends import is_url
    from judge.llm.cache.store import clear_cache_directory, existing_cache_directory, open_decision_cache

    _check_path("cache", cache, optional=False)
    with _cache_failures(cache, writing=True):
        if is_url(str(cache)):
            store = open_decision_cache(str(cache))
            try:
                return store.clear()
            finally:
                store.close()
        # a directory: this also cures a database that cannot be opened (DecisionCache's error says so)
        return clear_cache_directory(existing_cache_directory(Path(cache)))


def export_cache(cache: PathLike = DEFAULT_CACHE, out: PathLike | None = None) -> Iterator[str] | int:
    """Every cached decision as JSONL lines (key, value, checksum; a header first), in key order: into the file
    `out` (replaced when complete; returns the count), or with no `out` as the lines themselves."""
    from judge.formats.atomic import atomic_path
    from judge.llm.cache.backends import open_backend
    from judge.llm.cache.transfer import export_entries

    _check_path("cache", cache, optional=False)
    _check_path("out", out)
    if out is None:
        def lines() -> Iterator[str]:
            with _cache_failures(cache, writing=False):
                source = open_backend(_cache_target(cache))
                try:
                    yield from export_entries(source)
                finally:
                    source.close()
        return lines()
    with _cache_failures(cache, writing=False):
        source = open_backend(_cache_target(cache))
        try:
            with atomic_path(Path(out)) as temp, temp.open("w", encoding="utf-8") as handle:
                return sum(handle.write(line) > 0 for line in export_entries(source)) - 1  # minus the header
        finally:
            source.close()


def import_cache(file: PathLike, cache: PathLike = DEFAULT_CACHE, *, overwrite: bool = False) -> Any:
    """Add the decisions of a `cache export` file to a cache; counts of added, unchanged, replaced (with
    `overwrite`) or conflicting entries kept."""
    from judge.formats._jsonl import decode_utf8
    from judge.llm.cache.backends import open_backend
    from judge.llm.cache.transfer import import_entries

    Flag().check("overwrite", overwrite)
    _check_path("file", file, optional=False)
    _check_path("cache", cache, optional=False)
    with _cache_failures(cache, writing=True):
        destination = open_backend(str(cache))
        try:
            with Path(file).open("rb") as lines:
                text = (decode_utf8(line, str(file), number) for number, line in enumerate(lines, start=1))
                return import_entries(destination, text, str(file), overwrite=overwrite)
        finally:
            destination.close()


# ---------------------------------------------------------------------------------------------------------------
# the judgments format

def read_judgments(path: PathLike, *, nuggets: Any = None, format: str | None = None) -> list[ReportJudgment]:
    """Every record of a judgments file (JSONL, .gz too), checked line by line: a bad line raises InputError
    naming the file and line. `format`: "argue-judge" (ours), "auto-argue" (Auto-ARGUE's, as `import auto-argue`;
    it needs `nuggets`), or None: ours, or with `nuggets` either, told apart by the first record.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> len(judgments), judgments[0].run_id, judgments[0].request_id
    (6, 'run-cited', 'ex-101')
    >>> [int(s.outcome) for s in judgments[0].sentences][:3]   # ARGUE outcomes #1..#8
    [4, 3, 3]
    """
    OneOf(("argue-judge", "auto-argue"), optional=True).check("format", format)
    _check_path("path", path, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    if format == "argue-judge" or (format is None and nuggets is None):
        return list(iter_judgments(path))
    if nuggets is None:
        raise SettingError("format='auto-argue' needs nuggets= (Auto-ARGUE names matched nuggets by question text)")
    with ExitStack() as stack:
        banks = _banks("nuggets", nuggets, stack)
        if format == "auto-argue":
            from judge.adapters.autoargue import read_auto_argue

            return read_auto_argue(Path(path), banks)
        return _judgment_records("path", path, banks)


def write_judgments(path: PathLike, judgments: Iterable[ReportJudgment], *, format: str = "argue-judge",
                    nuggets: Any = None, docs: Any = None, cache: PathLike | None = DEFAULT_CACHE) -> int:
    """Write records as a judgments file (one JSON object a line, the format `read_judgments` and every command
    read), replacing it; returns how many records were written. `format="auto-argue"` writes Auto-ARGUE's format
    instead (as `export auto-argue`): it needs the `nuggets`, and `docs` fill each citation's text.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> cited = [j for j in judgments if j.run_id == "run-cited"]
    >>> judge.write_judgments("run-cited.jsonl", cited)
    2
    >>> judge.read_judgments("run-cited.jsonl") == cited
    True
    """
    OneOf(("argue-judge", "auto-argue")).check("format", format)
    _check_path("path", path, optional=False)
    _check_path("cache", cache)
    if isinstance(judgments, str | bytes) or not isinstance(judgments, Iterable):
        raise TypeError(f"judgments must be ReportJudgment records, not {type(judgments).__name__}")
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("docs", docs, Document)
    records = list(judgments)
    if format == "argue-judge":
        _write_judgments(Path(path), records)
        return len(records)
    from judge.adapters.autoargue import write_auto_argue
    from judge.formats import DocumentStore

    if nuggets is None:
        raise SettingError("format='auto-argue' needs nuggets= (the banks Auto-ARGUE names nuggets from)")
    with ExitStack() as stack:
        banks = _banks("nuggets", nuggets, stack)
        doc_paths = _Materialised(stack).paths("docs", docs, _document_record, Document, optional=True)
        if not doc_paths:
            return write_auto_argue(Path(path), records, banks)
        store = stack.enter_context(DocumentStore.open(doc_paths, docstore_dir(cache)))

        def text(doc_id: str) -> str:
            document = store.get(doc_id)
            if document is None:
                return ""
            return f"Title: {document.title}\n\nContent: {document.text}" if document.title else document.text

        return write_auto_argue(Path(path), records, banks, text)

"""The Python API: the five calls a notebook needs, each the library path its command line takes.

    judge.evaluate(reports, requests=..., docs=..., nuggets=...)   judge reports, score them   (argue-judge eval)
    judge.score(judgments, nuggets=...)                            metrics from judgments alone (argue-judge score)
    judge.calibrate(attributionbench=..., wice=..., nuggets=...)   agreement with human labels  (argue-judge calibrate)
    judge.read_judgments(path) / judge.write_judgments(path, js)   the judgments format, both ways

Arguments are paths (str or Path) and plain values; the defaults are the command line's, so a call and the
command with the same options judge alike (same thresholds, prompts, passages, cache). Each call returns the
library's own objects (`Evaluation`, `ScoredJudgments`, `CalibrationResults`, `ReportJudgment`), whose fields the
docs describe. `score`, `read_judgments` and `write_judgments` never import a model client.

`eval_config` and `calibration_config` build the run configuration of `evaluate` and `calibrate`, and the commands
`argue-judge eval` and `argue-judge calibrate` build theirs with the same two functions, so an option cannot reach
one path and miss the other (tests/test_api.py holds the configs of both paths equal).

Every example below runs as a doctest in CI (tests/test_api.py), in a folder holding the bundled `examples/` and
`argue-out/`, the output of the README's first command. There the judge is `judge.testing.FakeEndpoint`, a local
stand-in for a hosted model that answers by cheap text rules, so the doctests check what the calls return, not
the embedded judge's verdicts. With a real model, drop the endpoint and pass `model=` as on the command line (the
default is the embedded judge).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.formats.judgments import ReportJudgment
from judge.formats.judgments import write_judgments as _write_judgments
from judge.judging.judgments_reader import iter_judgments
from judge.labels import CitationPolicy
from judge.llm.cache_backends import DEFAULT_CACHE_DIR, local_directory
from judge.llm.embedded import EMBEDDED_MODEL  # the embedded judge's name; imports no model client
from judge.nuggets.api import (  # noqa: F401  (re-exported: judge.create_nuggets ...)
    accept_candidates,
    create_nuggets,
    create_nuggets_async,
    pool_nuggets,
    pool_nuggets_async,
)
from judge.settings import JudgeSettings, ModelSettings

if TYPE_CHECKING:  # the model client loads only when a call judges something
    from judge.calibration.report import CalibrationResults
    from judge.calibration.sources import ItemSources, SampleSize
    from judge.calibration.suite import CalibrationConfig
    from judge.judging.signature import ScoreSignature
    from judge.metrics.scoring import Scores
    from judge.run.evaluate import EvalConfig
    from judge.run.outputs import Evaluation

PathLike = str | Path
DEFAULT_CACHE = str(DEFAULT_CACHE_DIR)   # eval's and calibrate's --cache-dir default

# In the order the reference (docs/python.md, generated) lists them.
__all__ = ["evaluate", "score", "calibrate", "read_judgments", "write_judgments", "ScoredJudgments"]


def _paths(value: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [Path(value)]
    return [Path(v) for v in value]


def docstore_dir(cache: PathLike | None) -> Path:
    """The document index of a run with this decision cache: beside the cache (with none, or a Redis one, beside the
    default cache directory)."""
    return local_directory(cache if cache is not None else DEFAULT_CACHE) / "docstore"


def eval_config(model: ModelSettings, judge: JudgeSettings | None = None, *, cache: PathLike | None = DEFAULT_CACHE,
                concurrency: int = 4, **run_options: Any) -> EvalConfig:
    """The run configuration of `evaluate` and of `argue-judge eval`. `judge`: None for eval's default judging.
    `cache`: the decision cache (a directory or redis://...), None for none. `run_options`: the other fields of
    `judge.run.evaluate.EvalConfig` (retry, max_cost, price_per_1k, max_failed_fraction, shard, resume)."""
    from judge.run.evaluate import EvalConfig

    return EvalConfig(model=model, judge=judge or JudgeSettings(), concurrency=concurrency,
                      cache_dir=None if cache is None else str(cache), **run_options)


@contextmanager
def calibration_config(model: ModelSettings, judge: JudgeSettings | None, sources: ItemSources, *,
                       cache: PathLike | None = DEFAULT_CACHE, sample: SampleSize | None = None, seed: int = 0,
                       n_boot: int = 1000, concurrency: int = 4, **run_options: Any) -> Iterator[CalibrationConfig]:
    """The run configuration of `calibrate` and of `argue-judge calibrate`, its decision cache open until the
    `with` block ends. `judge`: None for calibrate's default judging. `sources`: the data sets the items come from.
    `cache`: a directory or redis://..., None for none. `run_options`: the other fields of
    `judge.calibration.suite.CalibrationConfig` (against, exclude, attacks, fit_metric)."""
    from judge.calibration.suite import CalibrationConfig
    from judge.llm.cache import open_decision_cache

    decision_cache = open_decision_cache(cache) if cache is not None else None
    try:
        yield CalibrationConfig(model=model, judge=judge or JudgeSettings(), concurrency=concurrency,
                                cache=decision_cache, n_boot=n_boot, seed=seed, sample=sample,
                                wice_partial=sources.wice_partial if sources.wice else None, **run_options)
    finally:
        if decision_cache is not None:
            decision_cache.close()


def evaluate(reports: PathLike | Sequence[PathLike], *, requests: PathLike, docs: PathLike | Sequence[PathLike],
             nuggets: PathLike | Sequence[PathLike] | None = None, model: str = EMBEDDED_MODEL,
             api_base: str | None = None, api_key: str | None = None, judge: JudgeSettings | None = None,
             cache: PathLike | None = DEFAULT_CACHE, out: PathLike | None = None, concurrency: int = 4,
             **model_options: Any) -> Evaluation:
    """Judge every report sentence by sentence and score the judgments, as `argue-judge eval` does.

    `reports`: report files or directories of *.jsonl; `requests`, `docs`, `nuggets`: as eval's options.
    `judge`: judging choices (citation policy, passages, injection policy, thresholds); the default is eval's.
    `cache`: the decision cache (a directory or redis://...), None for none. `out`: also write eval's five files
    there. `model_options`: the other fields of `judge.settings.ModelSettings` (temperature, seed, max_tokens,
    timeout, threads, kernels, logprobs).

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
    >>> evaluation.failure is None   # why the run failed as a whole, if it did
    True
    """
    from judge.run.evaluate import evaluate as run_evaluation
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs

    config = eval_config(ModelSettings(model, api_base, api_key, **model_options), judge, cache=cache,
                         concurrency=concurrency)
    with Inputs.load(_paths(reports), requests, _paths(nuggets) or None, _paths(docs), docstore_dir(cache)) as inputs:
        evaluation = run_evaluation(inputs, config, out=Path(out) if out is not None else None)
        if out is not None:
            write_outputs(evaluation, Path(out))
    return evaluation


@dataclass(frozen=True)
class ScoredJudgments:
    """What `score` returns: the scores, the signature that says how they were made, and the scoring notes."""

    scores: Scores
    signature: ScoreSignature
    warnings: list[str] = field(default_factory=list)

    def __getitem__(self, run_id: str) -> Any:
        """One run's scores: `scored["run-cited"]["F1"]` is that run's mean F1."""
        return self.scores.runs[run_id]


def score(judgments: PathLike | Sequence[PathLike] | Iterable[ReportJudgment], *,
          nuggets: PathLike | Sequence[PathLike] | None = None, policy: CitationPolicy = "all"
          ) -> ScoredJudgments:
    """Every metric from judgments alone, as `argue-judge score` does: LLM judgments and human labels alike; never
    calls a model. `judgments`: files (ours or Auto-ARGUE's, told apart by their first record) or records.
    `nuggets`: the banks, which Auto-ARGUE's measures and Auto-ARGUE files need. The signature names the judge
    the records carry (an LLM judge's signature, or the assessors: `human:...`).

    >>> import judge
    >>> scored = judge.score("argue-out/judgments.jsonl", nuggets="examples/nuggets")
    >>> sorted(scored.scores.runs)
    ['run-cited', 'run-miscited', 'run-padded']
    >>> scored["run-cited"]["SentencePrecision"] > scored["run-miscited"]["SentencePrecision"]
    True
    >>> scored.signature.short().startswith("argue-judge:0.1.0|judge:openai/fake|")
    True
    """
    from judge.adapters.autoargue import read_any_judgments
    from judge.formats import read_nugget_banks
    from judge.run.score import judge_of
    from judge.run.score import score as score_records

    banks = read_nugget_banks(_paths(nuggets)) if nuggets is not None else {}
    if isinstance(judgments, str | Path) or (isinstance(judgments, Sequence) and judgments
                                             and isinstance(judgments[0], str | Path)):
        records: Iterable[ReportJudgment] = read_any_judgments(_paths(judgments), banks)  # type: ignore[arg-type]
    else:
        records = list(judgments)  # type: ignore[arg-type]
    scores, signature, warnings = score_records(records, judge_of(records), policy, banks or None)
    return ScoredJudgments(scores, signature, warnings)


def calibrate(*, attributionbench: PathLike | None = None, wice: PathLike | None = None, wice_partial: str = "strict",
              nuggets: PathLike | Sequence[PathLike] | None = None, docs: PathLike | Sequence[PathLike] | None = None,
              sample: str | None = None, seed: int = 0, model: str = EMBEDDED_MODEL, api_base: str | None = None,
              api_key: str | None = None, judge: JudgeSettings | None = None, cache: PathLike | None = DEFAULT_CACHE,
              n_boot: int = 1000, concurrency: int = 4, out: PathLike | None = None,
              **model_options: Any) -> CalibrationResults:
    """How far each judge decision agrees with human labels, as `argue-judge calibrate` does: AttributionBench and
    WiCE (supports_citation) and nugget banks with their documents (answers_nugget). `wice_partial`: as
    --wice-partial, what WiCE's partially_supported is ('strict': not supported, 'exclude', 'separate'). `sample`: as
    --sample ("40", "attributionbench=200,wice=150"). `out`: also write calibration.md/.html/.json there (no plots).

    >>> import judge
    >>> from judge.testing import FakeEndpoint, smart_responder
    >>> with FakeEndpoint(smart_responder) as model:
    ...     results = judge.calibrate(nuggets="examples/nuggets", docs="examples/docs.jsonl", model="openai/fake",
    ...                               api_base=model.api_base, api_key="none", cache=None, n_boot=200)
    >>> agreement = results.decisions["answers_nugget"]
    >>> agreement.n > 0 and 0.0 <= agreement.accuracy <= 1.0
    True
    """
    from judge.calibration.report import write_calibration_report
    from judge.calibration.sources import ItemSources, SampleSize, load_items
    from judge.calibration.suite import calibrate as run_calibration
    from judge.diagnostics import Diagnostics
    from judge.errors import InputError

    diagnostics = Diagnostics()
    sources = ItemSources(Path(attributionbench) if attributionbench else None, Path(wice) if wice else None,
                          wice_partial,  # type: ignore[arg-type]  (load_items refuses another value in one line)
                          nuggets=tuple(_paths(nuggets)), docs=tuple(_paths(docs)), index_dir=docstore_dir(cache))
    sample_size = SampleSize.parse(sample) if sample is not None else None
    items = load_items(sources, sample_size, seed, diagnostics)
    if not items:
        raise InputError("nothing to calibrate: give attributionbench=, wice= or nuggets= with docs=")
    with calibration_config(ModelSettings(model, api_base, api_key, **model_options), judge, sources, cache=cache,
                            sample=sample_size, seed=seed, n_boot=n_boot, concurrency=concurrency) as config:
        results = run_calibration(items, config, notes=diagnostics.messages())
    if out is not None:
        write_calibration_report(results, out, plots=False)
    return results


def read_judgments(path: PathLike) -> list[ReportJudgment]:
    """Every record of a judgments file (JSONL, .gz too), checked line by line: a bad line raises InputError
    naming the file and line.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> len(judgments), judgments[0].run_id, judgments[0].request_id
    (6, 'run-cited', 'ex-101')
    >>> [int(s.outcome) for s in judgments[0].sentences][:3]   # ARGUE outcomes #1..#8
    [4, 3, 3]
    """
    return list(iter_judgments(path))


def write_judgments(path: PathLike, judgments: Iterable[ReportJudgment]) -> None:
    """Write records as a judgments file (one JSON object a line, the format `read_judgments` and every command
    read), replacing it.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> cited = [j for j in judgments if j.run_id == "run-cited"]
    >>> judge.write_judgments("run-cited.jsonl", cited)
    >>> judge.read_judgments("run-cited.jsonl") == cited
    True
    """
    _write_judgments(Path(path), judgments)

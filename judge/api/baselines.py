"""The baselines (EXAM, ROUGE, pa-BLEU, pa-METEOR): `run_baselines` as `eval --with-baselines` runs them, and
`baseline`, one with its own settings, as `argue-judge baseline NAME` does."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Strict

from judge.api._inputs import (
    NuggetInputs,
    PathLike,
    ReportInputs,
    _banks,
    _check_input,
    _check_path,
    _reports,
)
from judge.errors import ConfigurationError
from judge.metrics.table import ScoreTable
from judge.settings import Bounds, Flag, Text, check
from judge.types import NuggetBank, Report


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


def run_baselines(reports: ReportInputs, *, nuggets: NuggetInputs | None = None, gold: ReportInputs | None = None,
                  out: PathLike | None = None) -> list[BaselineScores]:
    """Score reports with the baselines, as `argue-judge baseline` and `eval --with-baselines` do: EXAM from the
    nugget banks, and with `gold` reports ROUGE, pa-BLEU and pa-METEOR. A baseline whose extra is not installed
    ([qa] for EXAM, [rouge] for ROUGE) is left out with a warning (judge.baselines.BaselineWarning); with neither
    `nuggets` nor `gold` a TypeError, and when every baseline asked for is left out a ConfigurationError naming the
    extras. `out`: also write OUT/<name>.scores.tsv.

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
    _check_input("reports", reports, Report, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("gold", gold, Report)
    if nuggets is None and gold is None:
        raise TypeError("run_baselines needs nuggets= (EXAM) or gold= (ROUGE, pa-BLEU, pa-METEOR): with neither, "
                        "no baseline can score the reports")
    from judge.baselines import BaselineWarning
    from judge.formats.scores import write_scores

    report_list = _reports("reports", reports) or []
    banks = _banks("nuggets", nuggets)
    results, notes = run_suite(report_list, banks, _reports("gold", gold, optional=True))
    if not results:  # every baseline asked for was left out: an empty list would pass for a result
        raise ConfigurationError("no baseline could run: " + "; ".join(notes))
    for note in notes:
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
_K, _F1, _NULL, _SMOOTH = Bounds(1, 1000), Bounds(0, 1, low_open=True), Bounds(-1000, 1000), Bounds(0, 100)
BASELINE_RULES: dict[str, Any] = {  # each setting's declared kind (judge.settings)
    "k": Annotated[int, Strict(), _K.constraint(), _K], "match": Literal["f1", "exact"],
    "f1_threshold": Annotated[float, Strict(), _F1.constraint(), _F1],
    "null_threshold": Annotated[float, Strict(), _NULL.constraint(), _NULL],
    "multi": Literal["max", "mean"], "stem": Flag, "stopwords": Flag,
    "smooth": Literal["exp", "floor", "add-k", "none"],
    "smooth_value": Annotated[float, Strict(), _SMOOTH.constraint(), _SMOOTH] | None, "qa": Text,
}
# What each baseline's leaderboard shows (its TSV holds more: precision, recall).
BASELINE_COLUMNS = {"exam": ["EXAM"], "rouge": ["ROUGE-1-F", "ROUGE-2-F", "ROUGE-SU4-F"],
                    "pa-bleu": ["pa-BLEU", "BLEU"], "pa-meteor": ["pa-METEOR", "METEOR"]}


def baseline(name: str, reports: ReportInputs, *, nuggets: NuggetInputs | None = None,
             gold: ReportInputs | None = None, out: PathLike | None = None, **settings: Any) -> BaselineScores:
    """One baseline with its own settings, as `argue-judge baseline NAME` does: 'exam' (needs `nuggets`; `gold`
    adds n-EXAM; settings qa, k, match, f1_threshold, null_threshold), 'rouge' (multi, stem, stopwords), 'pa-bleu'
    (smooth, smooth_value), 'pa-meteor'; the last three need `gold`. `out`: also write OUT/NAME.scores.tsv."""
    check("name", name, Literal[tuple(BASELINE_SETTINGS)])
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
        check(key, value, BASELINE_RULES[key])
    from judge.formats.scores import write_scores

    runs = _reports("reports", reports) or []
    gold_reports = _reports("gold", gold, optional=name == "exam")
    banks = _banks("nuggets", nuggets)
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

"""Scoring judgments: every registered measure per report, then run aggregates derived from the statistics.

Nothing here names a measure: per report each measure gives its statistics and value; on a run's `all` rows a
ratio measure gives its macro mean (plain name) and its micro value (`micro=True`, pooled statistics), a
harmonic measure the combination of its parts' micro values, a count its sum.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from judge.errors import InputError
from judge.formats.judgments import ReportJudgment
from judge.formats.scores import ALL, ScoreRow
from judge.metrics.facts import ReportFacts
from judge.metrics.measure import MEASURES, Harmonic, Measure, Ratio, Stats, aggregate_measures, parse_measure
from judge.types import NuggetBank


@dataclass(frozen=True, slots=True)
class ReportScores:
    """The scores of one report: `values` maps canonical measure names to values (every measure in MEASURES);
    `stats` holds each measure's sufficient statistics (None: undefined for this report).

    A run keeps one of these per report until its aggregates are computed, so both are stored packed in MEASURES
    order (about 2 KB a report where two dicts took 5.5 KB) and unpacked when asked for."""

    run_id: str
    request_id: str
    packed_values: array[float] = field(repr=False)
    # Two slots per measure (numerator, denominator; a count uses the first) and each measure's arity (0: None).
    packed_stats: array[float] = field(repr=False)
    arities: bytes = field(repr=False)
    names: tuple[str, ...] = field(repr=False)  # MEASURES' names when the report was scored, shared by all
    precision_undefined: bool
    recall_undefined: bool
    earned: frozenset[str]                   # ids of the nuggets earned (ARGUE)
    unknown_nugget_ids: int                  # EarnedAnswers naming a nugget not in the bank (ignored)
    unknown_answers: int                     # EarnedAnswers naming an answer not in the nugget's list (ignored)
    warnings: tuple[str, ...]

    @property
    def values(self) -> dict[str, float]:
        return dict(zip(self.names, self.packed_values, strict=True))

    @property
    def stats(self) -> dict[str, Stats | None]:
        return {name: self.stats_at(i) for i, name in enumerate(self.names)}

    def stats_at(self, position: int) -> Stats | None:
        arity = self.arities[position]
        return tuple(self.packed_stats[2 * position:2 * position + arity]) if arity else None

    def __getitem__(self, measure: Measure | str) -> float:
        name = parse_measure(measure).name
        if name not in self.names:
            raise KeyError(name)
        return self.packed_values[self.names.index(name)]

    def rows(self) -> list[ScoreRow]:
        return [ScoreRow(self.run_id, self.request_id, name, value)
                for name, value in zip(self.names, self.packed_values, strict=True)]


_NAMES: dict[int, tuple[str, ...]] = {}  # by the number of registered measures (registering adds, never removes)


def _measure_names() -> tuple[str, ...]:
    if len(MEASURES) not in _NAMES:
        _NAMES[len(MEASURES)] = tuple(m.name for m in MEASURES)
    return _NAMES[len(MEASURES)]


def bank_of(judgment: ReportJudgment) -> NuggetBank | None:
    """The request's bank as the judgments record carries it, when it carries the answers' references."""
    nuggets = judgment.nuggets
    if not nuggets or any(n.references is None for n in nuggets):
        return None
    return NuggetBank(request_id=judgment.request_id, nuggets=tuple(n.nugget() for n in nuggets))


def score_report(judgment: ReportJudgment, bank: NuggetBank | None = None) -> ReportScores:
    """Every measure of MEASURES for one report, with its flags and warnings. `bank` (the request's nugget bank
    with answer references) is what Auto-ARGUE's nugget and relevance measures need."""
    facts = ReportFacts(judgment, bank if bank is not None else bank_of(judgment))
    values: dict[str, float] = {}
    packed_stats = array("d")
    arities = bytearray()
    for measure in MEASURES:
        stats: Stats | None = None
        if isinstance(measure, Harmonic):
            first, second = measure.parts()
            values[measure.name] = measure.combine(values[first.name], values[second.name])
        else:
            stats = measure.stats(facts)
            values[measure.name] = measure.value(stats)
        if stats is not None and len(stats) > 2:
            raise ValueError(f"{measure}: statistics of more than two numbers are not supported")
        arities.append(len(stats) if stats is not None else 0)
        packed_stats.extend((*(stats or ()), *(math.nan,) * (2 - len(stats or ()))))
    recall = facts.recall_parts(weighted=False)
    return ReportScores(
        run_id=judgment.run_id, request_id=judgment.request_id, packed_values=array("d", values.values()),
        packed_stats=packed_stats, arities=bytes(arities), names=_measure_names(),
        precision_undefined=facts.precision_undefined, recall_undefined=recall is None or recall[1] == 0,
        earned=frozenset(facts.earned), unknown_nugget_ids=facts.unknown_nugget_ids,
        unknown_answers=facts.unknown_answers, warnings=tuple(facts.warnings))


def _macro(values: Iterable[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return math.fsum(kept) / len(kept) if kept else math.nan


def _pooled(measure: Ratio, reports: list[ReportScores]) -> tuple[float, float] | None:
    key = measure(micro=False).name   # reports hold the statistics under the plain name
    if not reports or key not in reports[0].names:
        return None
    position = reports[0].names.index(key)
    present = [stats for r in reports if (stats := r.stats_at(position)) is not None]
    if not present:
        return None
    return math.fsum(s[0] for s in present), math.fsum(s[1] for s in present)  # type: ignore[index]


def _micro(measure: Measure, reports: list[ReportScores]) -> float:
    if isinstance(measure, Harmonic):
        first, second = measure.parts()
        return measure.combine(_micro(first, reports), _micro(second, reports))
    if isinstance(measure, Ratio):
        return measure.value(_pooled(measure, reports))
    raise TypeError(f"{measure} has no micro aggregate (only ratio and harmonic measures do)")


@dataclass(frozen=True)
class RunScores:
    """One run: per-report scores (by request id, sorted) beside the aggregates (keys: aggregate_measures())."""

    run_id: str
    reports: dict[str, ReportScores]
    aggregates: dict[str, float]
    warnings: tuple[str, ...]

    def __getitem__(self, measure: Measure | str) -> float:
        """An aggregate: plain ratio measure = macro, `micro=True` = micro, count = sum."""
        return self.aggregates[parse_measure(measure).name]

    def rows(self) -> list[ScoreRow]:
        """Per-request rows (request ids sorted, measures in MEASURES order), then the `all` rows."""
        rows = [row for request_id in sorted(self.reports) for row in self.reports[request_id].rows()]
        return rows + self.aggregate_rows()

    def aggregate_rows(self) -> list[ScoreRow]:
        """The `all` rows alone (what leaderboards read)."""
        return [ScoreRow(self.run_id, ALL, name, value) for name, value in self.aggregates.items()]


def _score_run(run_id: str, reports: list[ReportScores]) -> RunScores:
    by_request = {r.request_id: r for r in sorted(reports, key=lambda r: r.request_id)}
    rs = list(by_request.values())
    warnings = [w for r in rs for w in r.warnings]
    aggregates: dict[str, float] = {}
    names = rs[0].names if rs else ()
    for measure in aggregate_measures():
        column = [r.packed_values[names.index(measure.name)] for r in rs] if not measure.micro else []
        if not measure.RATIO:
            kept = [v for v in column if not math.isnan(v)]
            aggregates[measure.name] = math.fsum(kept) if kept else math.nan
        elif not measure.micro:
            aggregates[measure.name] = _macro(column)
        else:
            aggregates[measure.name] = _micro(measure, rs)
            if isinstance(measure, Ratio) and measure.EMPTY_NOTE:
                pooled = _pooled(measure, rs)
                if pooled is not None and pooled[1] == 0:
                    warnings.append(f"run {run_id}: {measure.EMPTY_NOTE}, scored {measure.EMPTY}")
    undefined = sum(r.recall_undefined for r in rs)
    if undefined:
        warnings.append(f"run {run_id}: recall undefined for {undefined} of {len(rs)} report(s); "
                        "left out of recall and F1 means")
    return RunScores(run_id=run_id, reports=by_request, aggregates=aggregates, warnings=tuple(warnings))


@dataclass(frozen=True)
class Scores:
    """Scores of every run (sorted by run id) and all their warnings, in row order."""

    runs: dict[str, RunScores]
    notes: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        return [w for run in self.runs.values() for w in run.warnings] + list(self.notes)

    def rows(self) -> list[ScoreRow]:
        """Rows for the scores TSV: per run (sorted), per-request rows then `all` rows; see RunScores.rows."""
        return list(self.iter_rows())

    def iter_rows(self) -> Iterator[ScoreRow]:
        """The rows of `rows()`, made one run at a time (a TREC-size run has tens of thousands per run set)."""
        for run in self.runs.values():
            yield from run.rows()

    def aggregate_rows(self) -> list[ScoreRow]:
        """Every run's `all` rows (what leaderboards read)."""
        return [row for run in self.runs.values() for row in run.aggregate_rows()]

    def __iter__(self) -> Iterator[RunScores]:
        return iter(self.runs.values())


def score_judgments(judgments: Iterable[ReportJudgment], banks: Mapping[str, NuggetBank] | None = None
                    ) -> Scores:
    """Score judgments records, grouped by run_id; `banks` (by request id) give Auto-ARGUE's measures the
    answer references. Raises InputError on a duplicate (run, request) or a request id equal to `all`."""
    by_run: dict[str, list[ReportScores]] = defaultdict(list)
    seen: set[tuple[str, str]] = set()
    missing_banks: set[str] = set()
    for judgment in judgments:
        if judgment.key in seen:
            raise InputError(f"two judgments for run {judgment.run_id} request {judgment.request_id}")
        if judgment.request_id == ALL:
            raise InputError(f"run {judgment.run_id}: request id {ALL!r} is reserved for aggregate rows")
        seen.add(judgment.key)
        bank = (banks or {}).get(judgment.request_id)
        if bank is None and judgment.nuggets is not None and bank_of(judgment) is None:
            missing_banks.add(judgment.request_id)
        by_run[judgment.run_id].append(score_report(judgment, bank))
    notes = ()
    if missing_banks:
        notes = (f"no nugget bank with answer references for request(s) {', '.join(sorted(missing_banks))}: "
                 "autoargue.citation_relevance, autoargue.nuggets and autoargue.nugget_coverage are NaN; these "
                 "judgments do not carry the answers' documents, so score them with `argue-judge score JUDGMENTS "
                 "--nuggets DIR`",)
    return Scores(runs={run_id: _score_run(run_id, by_run[run_id]) for run_id in sorted(by_run)}, notes=notes)

"""Runs' ARGUE scores corrected by a human sample (prediction-powered inference), their paired differences and
a ranking with ties.

The unit is a report: a run's leaderboard value of a ratio measure is the MACRO mean of its per-report values
(judge.metrics.scoring), so PPI for a mean applies to it exactly. That includes F1: the leaderboard's F1 is the
mean of per-report F1, so each report's F1 is the unit and no delta method is needed (micro aggregates, ratios
of pooled totals, are not estimated here). A pair of runs is compared by the difference of their estimates, each
from all its labelled reports, with the covariance the requests labelled for both induce
(judge.metrics.ppi.ppi_difference); under a weighted sample (each report drawn on its own, Poisson-like) the two
runs' labels are independent and the covariance is 0. The ranking gives a run rank 1 + the number of runs whose
difference from it is distinguishable in their favour (the rule of LMSYS Chatbot Arena's leaderboard), so
indistinguishable runs share a rank.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from judge.metrics.argue import F1, NuggetRecall, SentencePrecision
from judge.metrics.measure import Measure
from judge.metrics.ppi import OK, Estimate, ppi_difference, ppi_mean
from judge.metrics.sampling import Inclusion, WeightedInclusion
from judge.metrics.scoring import RunScores, Scores

# The ARGUE measures a leaderboard reports, in its order (F1 first: what it is sorted by).
PPI_MEASURES: tuple[Measure, ...] = (F1, SentencePrecision, NuggetRecall, NuggetRecall(weighted=True),
                                     F1(weighted=True))


@dataclass(frozen=True)
class RunEstimate:
    run_id: str
    measure: str
    estimate: Estimate
    rank: int | None = None   # None: not estimable


@dataclass(frozen=True)
class PairEstimate:
    """run_a's score minus run_b's, each estimated from all its labelled reports; `units` counts the requests
    both runs answered, `labelled` the labelled reports of the two runs together."""

    measure: str
    run_a: str
    run_b: str
    estimate: Estimate

    @property
    def distinguishable(self) -> bool:
        return self.estimate.ppi.excludes_zero()


@dataclass(frozen=True)
class CorrectedScores:
    runs: tuple[RunEstimate, ...]
    pairs: tuple[PairEstimate, ...]
    design: str
    confidence: float
    notes: tuple[str, ...] = field(default=())

    def of_measure(self, measure: Measure | str) -> list[RunEstimate]:
        """One measure's run estimates, best PPI value first (not estimable last)."""
        name = str(measure)
        return sorted((r for r in self.runs if r.measure == name), key=lambda r: (_order(r.estimate), r.run_id))

    def distinguishable(self, measure: Measure | str) -> list[PairEstimate]:
        return [p for p in self.pairs if p.measure == str(measure) and p.distinguishable]


def _order(estimate: Estimate) -> float:
    return -estimate.ppi.value if estimate.estimable and math.isfinite(estimate.ppi.value) else math.inf


def correct_scores(judge: Scores, human: Scores, inclusion: Inclusion | WeightedInclusion, confidence: float = 0.95,
                   measures: Sequence[Measure] = PPI_MEASURES) -> CorrectedScores:
    """Every run and pair of runs of `judge`, for each measure, corrected by the reports `human` scored."""
    notes: list[str] = []
    runs: list[RunEstimate] = []
    pairs: list[PairEstimate] = []
    doubtful: dict[tuple[str, str], list[str]] = {}     # (run, status) -> measures: one warning line in all
    for measure in measures:
        name = measure.name
        values = {run.run_id: _values(run, human.runs.get(run.run_id), name, notes) for run in judge}
        estimates = {}
        for run_id, (f, y) in values.items():
            requests = sorted(f)
            estimates[run_id] = ppi_mean(
                [f[r] for r in requests], [y.get(r, math.nan) for r in requests],
                [inclusion.of(run_id, r) for r in requests], confidence)
        measure_pairs = []
        for a, b in combinations(sorted(values), 2):
            (fa, ya), (fb, yb) = values[a], values[b]
            common = sorted(set(fa) & set(fb))
            if not common:
                continue
            ra, rb = sorted(fa), sorted(fb)
            index_a, index_b = {r: i for i, r in enumerate(ra)}, {r: i for i, r in enumerate(rb)}
            measure_pairs.append(PairEstimate(name, a, b, ppi_difference(
                [fa[r] for r in ra], [ya.get(r, math.nan) for r in ra],
                [fb[r] for r in rb], [yb.get(r, math.nan) for r in rb],
                [index_a[r] for r in common], [index_b[r] for r in common],
                [inclusion.of(a, r) for r in ra], [inclusion.of(b, r) for r in rb], confidence,
                paired=inclusion.design != "weighted")))
        ranks = _ranks(estimates, measure_pairs)
        runs += [RunEstimate(run_id, name, estimates[run_id], ranks.get(run_id)) for run_id in sorted(estimates)]
        pairs += measure_pairs
        missing = [run_id for run_id, e in estimates.items() if not e.estimable]
        if missing:
            notes.append(f"{name}: not estimable for run(s) {', '.join(missing)} (no human-judged report with a "
                         "value); the judge's number alone says nothing of its error")
        for run_id, e in sorted(estimates.items()):
            if e.estimable and e.status != OK:
                doubtful.setdefault((run_id, e.status), []).append(name)
    if doubtful:
        notes.append("interval not to be trusted for " + "; ".join(
            f"{run_id} ({status}; {', '.join(names)})" for (run_id, status), names in doubtful.items()))
    return CorrectedScores(tuple(runs), tuple(pairs), inclusion.describe(), confidence, tuple(dict.fromkeys(notes)))


def _values(run: RunScores, human: RunScores | None, name: str, notes: list[str]
            ) -> tuple[dict[str, float], dict[str, float]]:
    """(judge value by request, human value by request) of one run's reports where the judge's value is defined
    (a NaN report, e.g. recall without a nugget bank, is outside the macro mean and so outside the target)."""
    judge_values = {r: v for r, rep in run.reports.items() if math.isfinite(v := rep[name])}
    human_values: dict[str, float] = {}
    undefined = 0
    for request, report in (human.reports.items() if human else ()):
        if request in judge_values:
            value = report[name]
            if math.isfinite(value):
                human_values[request] = value
            else:
                undefined += 1
    if undefined:
        notes.append(f"{name}: run {run.run_id}: {undefined} human-judged report(s) have no human value where the "
                     "judge has one (e.g. no nugget bank in the human record); treated as not labelled")
    return judge_values, human_values


def _ranks(estimates: dict[str, Estimate], pairs: Sequence[PairEstimate]) -> dict[str, int]:
    """1 + the number of runs distinguishably better; None for a run that is not estimable."""
    better = {run_id: 0 for run_id, e in estimates.items() if e.estimable}
    for pair in pairs:
        if pair.run_a in better and pair.run_b in better and pair.distinguishable:
            loser = pair.run_b if pair.estimate.ppi.value > 0 else pair.run_a
            better[loser] += 1
    return {run_id: 1 + count for run_id, count in better.items()}


"""How far the judges of a panel agree with each other, per decision, from the judgments alone.

A panel's record (judge.judging.panel) keeps each judge's own record in its `panel` list; each judge's label for
the decision is its verdict: yes or no (for answers_nugget and absence_nugget, whether it named any answer), and
none where it could not decide (it said "cannot judge" or failed), which is a missing value.

- `fleiss_kappa` (Fleiss 1971): over the decisions every judge gave a verdict on.
- `krippendorff_alpha`, nominal (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"): over every
  decision at least two judges gave a verdict on; missing values are allowed.
- `pairwise`: Cohen's κ of each pair of judges, over the decisions both gave a verdict on.
A figure the data cannot give (no decision to compare, every judge giving one verdict throughout) is undefined,
with its reason (judge.metrics.undefined). May import numpy, the judgments format and judge.metrics.undefined;
never a model client.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from itertools import combinations

import numpy as np
from pydantic import BaseModel, Field

from judge.formats.judgments import ReportJudgment
from judge.metrics.kappa import kappa
from judge.metrics.undefined import Reasons, Statistics, Undefined, require

# A judge's label of one decision (a unit): any hashable value, None where the judge gave none.
Unit = Sequence[Hashable | None]

NO_COMPLETE = "no decision every judge gave a verdict on"
NO_PAIRABLE = "no decision two judges gave a verdict on"
NO_BOTH = "no decision both judges gave a verdict on"
ONE_VALUE = "every verdict the same"


def _categories(units: Iterable[Unit]) -> list[Hashable]:
    return sorted({v for u in units for v in u if v is not None}, key=repr)


def fleiss_kappa(units: Sequence[Unit]) -> float:
    """Fleiss' κ over the units every rater labelled (each unit: one label per rater, in the same rater order).
    Undefined without such a unit, or when every label is the same (chance agreement is then 1)."""
    complete = [u for u in units if all(v is not None for v in u)]
    require(bool(complete), NO_COMPLETE)
    raters = len(complete[0])
    require(raters >= 2, "fewer than two judges")
    categories = _categories(complete)
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(complete), len(categories)))
    for row, unit in enumerate(complete):
        for value in unit:
            counts[row, index[value]] += 1
    per_unit = ((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1))
    shares = counts.sum(axis=0) / (len(complete) * raters)
    chance = float((shares * shares).sum())
    require(chance < 1.0, ONE_VALUE)
    return float((per_unit.mean() - chance) / (1.0 - chance))


def krippendorff_alpha_nominal(units: Sequence[Unit]) -> float:
    """Krippendorff's α for nominal labels; a unit counts when at least two raters labelled it. Undefined without
    such a unit, or when every pairable label is the same (no expected disagreement)."""
    pairable = [[v for v in u if v is not None] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    require(bool(pairable), NO_PAIRABLE)
    categories = _categories(pairable)
    index = {c: i for i, c in enumerate(categories)}
    coincidences = np.zeros((len(categories), len(categories)))
    for unit in pairable:
        weight = 1.0 / (len(unit) - 1)
        for a in range(len(unit)):
            for b in range(len(unit)):
                if a != b:
                    coincidences[index[unit[a]], index[unit[b]]] += weight
    marginals = coincidences.sum(axis=1)
    total = marginals.sum()
    observed = coincidences.sum() - np.trace(coincidences)
    expected = (marginals.sum() ** 2 - (marginals * marginals).sum()) / (total - 1.0)
    require(expected > 0, ONE_VALUE)
    return float(1.0 - observed / expected)


def cohen_kappa_pair(first: Sequence[Hashable | None], second: Sequence[Hashable | None]) -> tuple[float, int]:
    """Cohen's κ of two raters over the units both labelled, and how many those are."""
    pairs = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    require(bool(pairs), NO_BOTH)
    categories = _categories([[a, b] for a, b in pairs])
    index = {c: i for i, c in enumerate(categories)}
    matrix = np.zeros((len(categories), len(categories)))
    for a, b in pairs:
        matrix[index[a], index[b]] += 1
    return kappa(matrix, empty=NO_BOTH, one_class=ONE_VALUE), len(pairs)


class PairAgreement(Statistics):
    """Cohen's κ of two judges of the panel, over the `n` decisions both gave a verdict on."""

    judges: tuple[str, str]
    n: int
    kappa: float | None


class JudgeAgreement(Statistics):
    """The agreement among a panel's judges on one decision. `decisions`: the panel's records of it; `complete`:
    those every judge gave a verdict on; `split`: those where the verdicts given were not all the same."""

    judges: list[str]
    decisions: int
    complete: int
    split: int
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    pairwise: list[PairAgreement] = Field(default_factory=list)


def agreement_of(judges: Sequence[str], units: Sequence[Unit]) -> JudgeAgreement:
    """The agreement among `judges` over `units` (each: one label per judge, in the order of `judges`)."""
    reasons = Reasons()
    fleiss = reasons.value("fleiss_kappa", fleiss_kappa, units)
    alpha = reasons.value("krippendorff_alpha", krippendorff_alpha_nominal, units)
    pairwise = []
    for a, b in combinations(range(len(judges)), 2):
        try:
            kappa, n = cohen_kappa_pair([u[a] for u in units], [u[b] for u in units])
            pairwise.append(PairAgreement(judges=(judges[a], judges[b]), n=n, kappa=kappa))
        except Undefined as exc:
            n = sum(u[a] is not None and u[b] is not None for u in units)
            pairwise.append(PairAgreement(judges=(judges[a], judges[b]), n=n, kappa=None,
                                          undefined={"kappa": exc.reason}))
    complete = sum(all(v is not None for v in u) for u in units)
    split = sum(len({v for v in u if v is not None}) > 1 for u in units)
    return JudgeAgreement(judges=list(judges), decisions=len(units), complete=complete, split=split,
                          fleiss_kappa=fleiss, krippendorff_alpha=alpha, pairwise=pairwise, undefined=dict(reasons))


class PanelSummary(BaseModel):
    """What run-summary.json says of a panel (its `run.panel`): the panel's judges and vote as its records name
    them, and the agreement among the judges per decision."""

    judge: str
    judges: list[str]
    agreement: dict[str, JudgeAgreement]


def panel_agreement(judgments: Iterable[ReportJudgment]) -> PanelSummary | None:
    """The agreement among the panel's judges per decision, from the judgments' panel records; None when no record
    was decided by a panel. Records of another panel than the first one met (a resumed run judged with other
    judges) are left out: their judges are not these."""
    units: dict[str, list[list[bool | None]]] = {}
    judges: list[str] | None = None
    name = ""
    for judgment in judgments:
        for sentence in judgment.sentences:
            for record in sentence.decisions:
                if not record.panel:
                    continue
                names = [r.judge for r in record.panel]
                if judges is None:
                    judges, name = names, record.judge
                if names != judges:
                    continue
                units.setdefault(record.decision, []).append([r.verdict for r in record.panel])
    if judges is None:
        return None
    return PanelSummary(judge=name, judges=judges,
                        agreement={d: agreement_of(judges, u) for d, u in sorted(units.items())})

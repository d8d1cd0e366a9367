"""Run level: do the judge and the humans find the same significant differences between pairs of runs?

Paired t-test and Wilcoxon signed-rank per pair of runs on both sides; a 3x3 win/loss/tie agreement table.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats as sps

from judge.calibration.stats.correlation import finite_or_none
from judge.calibration.stats.undefined import Reasons, Statistics

Verdict = Literal["win", "loss", "tie"]
VERDICTS: tuple[Verdict, ...] = ("win", "loss", "tie")


class PairOutcome(Statistics):
    """Run a against run b (a < b by id), on the requests both runs have in both tables. A p-value is undefined
    where its test has nothing to test (fewer than 2 requests, every difference zero); the verdict is then a tie."""

    run_a: str
    run_b: str
    n_requests: int
    judge_ttest: Verdict
    human_ttest: Verdict
    judge_wilcoxon: Verdict
    human_wilcoxon: Verdict
    judge_ttest_p: float | None
    human_ttest_p: float | None
    judge_wilcoxon_p: float | None
    human_wilcoxon_p: float | None


class SignificanceAgreement(Statistics):
    """3x3 table: rows = human verdict, columns = judge verdict, both in order win, loss, tie. A pair with too
    few shared requests for the test is left out (counted in `untested`): its "tie" would be no verdict, and
    would count as agreement."""

    test: str
    n_pairs: int = Field(description="pairs in the table")
    agreement: float | None
    table: list[list[int]]
    untested: int = Field(default=0, description="pairs with too few shared requests to test, left out")


class PairwiseAgreement(BaseModel):
    alpha: float
    zero_method: str
    n_runs: int
    ttest: SignificanceAgreement
    wilcoxon: SignificanceAgreement
    pairs: list[PairOutcome]


def least_requests(test: str, alpha: float) -> int:
    """Requests a pair needs in common for `test` to be able to find a difference at `alpha`; with fewer its "tie"
    is no verdict. The t-test: 2. Wilcoxon's exact test: the smallest n whose most lopsided outcome, p = 2 / 2^n,
    is below alpha (6 at 0.05)."""
    if test == "ttest":
        return 2
    n = 1
    while 2 * 0.5 ** n >= alpha:
        n += 1
    return n


def _no_test(d: np.ndarray, least: int, alpha: float) -> str | None:
    """Why a paired test of the differences `d` has nothing to test, None when it has."""
    if d.size < least:
        return f"fewer than {least} requests both runs have in both tables (no p < {alpha:g} is possible)"
    return None if np.any(d) else "every difference is zero"


def _ttest_verdict(d: np.ndarray, alpha: float) -> tuple[Verdict, float | None, str | None]:
    if (reason := _no_test(d, least_requests("ttest", alpha), alpha)) is not None:
        return "tie", None, reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.ttest_rel(d, np.zeros_like(d))
    p = finite_or_none(res.pvalue)
    if p is None and np.ptp(d) == 0:
        p = 0.0  # constant non-zero difference on every request: as decisive as it gets (t = +-inf)
    if p is None or p >= alpha:
        return "tie", p, None if p is not None else "scipy returned no finite p-value"
    return ("win" if d.mean() > 0 else "loss"), p, None


def _wilcoxon_verdict(d: np.ndarray, alpha: float, zero_method: str) -> tuple[Verdict, float | None, str | None]:
    if (reason := _no_test(d, least_requests("wilcoxon", alpha), alpha)) is not None:
        return "tie", None, reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = sps.wilcoxon(d, zero_method=zero_method)
        except ValueError as exc:
            return "tie", None, f"scipy refused the test: {exc}"
    p = finite_or_none(res.pvalue)
    if p is None or p >= alpha:
        return "tie", p, None if p is not None else "scipy returned no finite p-value"
    nz = d[d != 0] if zero_method == "wilcox" else d
    ranks = sps.rankdata(np.abs(nz))
    signed = float((ranks * np.sign(nz)).sum())
    if signed == 0:
        return "tie", p, None
    return ("win" if signed > 0 else "loss"), p, None


def _table(pairs: list[PairOutcome], test: str, alpha: float) -> SignificanceAgreement:
    table = [[0, 0, 0] for _ in range(3)]
    least = least_requests(test, alpha)
    tested = [p for p in pairs if p.n_requests >= least]
    for p in tested:
        h, j = getattr(p, f"human_{test}"), getattr(p, f"judge_{test}")
        table[VERDICTS.index(h)][VERDICTS.index(j)] += 1
    n = len(tested)
    agree = sum(table[i][i] for i in range(3))
    why = {} if n else {"agreement": "no pair of runs" if not pairs else
                        f"no pair of runs shares the {least} requests the test needs"}
    return SignificanceAgreement(test=test, n_pairs=n, agreement=agree / n if n else None, table=table,
                                 untested=len(pairs) - n, undefined=why)


def pairwise_significance_agreement(
    judge: Mapping[str, Mapping[str, float]],
    human: Mapping[str, Mapping[str, float]],
    *,
    alpha: float = 0.05,
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
) -> PairwiseAgreement:
    """For every pair of runs (a < b by id, runs in both tables), test a against b on per-request scores for the
    judge and for the humans, and compare the verdicts.

    Pairing: the requests where both runs have a non-NaN value in both the judge and the human table, so both
    sides test on the same requests. Verdict per test: "win" (a significantly better: p < alpha, positive
    direction), "loss" (significantly worse) or "tie".
    - paired t-test: scipy.stats.ttest_rel (two-sided); direction = sign of the mean difference a - b. All
      differences zero = tie; a constant non-zero difference counts as p = 0; fewer than 2 requests: no test (the
      pair's verdict reads "tie" with an undefined p, and the pair is left out of the table, `untested`).
    - Wilcoxon signed-rank: scipy.stats.wilcoxon (two-sided) with `zero_method` ("wilcox", default: zero
      differences are discarded before ranking); all differences zero = tie; direction = sign of the sum of
      signed ranks; fewer requests than `least_requests` (6 at alpha 0.05): no test, as for the t-test.
    Agreement rate = share of pairs with the same verdict; the 3x3 table has rows = human, columns = judge.
    """
    runs = sorted(set(judge) & set(human))
    pairs: list[PairOutcome] = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            reqs = sorted(set(judge[a]) & set(judge[b]) & set(human[a]) & set(human[b]))
            reqs = [q for q in reqs if not any(math.isnan(t[r][q]) for t in (judge, human) for r in (a, b))]
            dj = np.array([judge[a][q] - judge[b][q] for q in reqs], dtype=float)
            dh = np.array([human[a][q] - human[b][q] for q in reqs], dtype=float)
            why = Reasons()
            verdicts: dict[str, Verdict] = {}
            values: dict[str, float | None] = {}
            for side, d in (("judge", dj), ("human", dh)):
                for test, (verdict, p, reason) in (("ttest", _ttest_verdict(d, alpha)),
                                                   ("wilcoxon", _wilcoxon_verdict(d, alpha, zero_method))):
                    verdicts[f"{side}_{test}"], values[f"{side}_{test}_p"] = verdict, p
                    if reason is not None:
                        why.mark(reason, f"{side}_{test}_p")
            pairs.append(PairOutcome(run_a=a, run_b=b, n_requests=len(reqs), undefined=why, **verdicts, **values))
    return PairwiseAgreement(alpha=alpha, zero_method=zero_method, n_runs=len(runs),
                             ttest=_table(pairs, "ttest", alpha), wilcoxon=_table(pairs, "wilcoxon", alpha),
                             pairs=pairs)

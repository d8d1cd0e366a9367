"""Run level: leaderboard correlation with EXAM-style ties (runs within one standard error count as tied)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, Field

from judge.calibration.stats.correlation import correlate


class RunScore(NamedTuple):
    mean: float
    se: float


def run_summaries(per_request: Mapping[str, Mapping[str, float]]) -> dict[str, RunScore]:
    """Per run: mean over requests and its standard error, SE = sample std (ddof=1) / sqrt(n); NaN values are
    left out; SE is 0 with a single request and the run is dropped with none.

    Takes the shape of `judge.formats.scores.per_request`: {run_id: {request_id: value}}.
    """
    out: dict[str, RunScore] = {}
    for run in sorted(per_request):
        values = np.array([v for v in per_request[run].values() if not math.isnan(v)], dtype=float)
        if values.size == 0:
            continue
        se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else 0.0
        out[run] = RunScore(float(values.mean()), se)
    return out


def within_one_se(a: RunScore, b: RunScore) -> bool:
    """The tie relation: |mean_a - mean_b| <= max(se_a, se_b)."""
    return abs(a.mean - b.mean) <= max(a.se, b.se)


def tie_groups(board: Mapping[str, RunScore]) -> list[list[str]]:
    """Tied groups of a leaderboard, best first: the connected components of the `within_one_se` graph.

    Sorted by mean (descending, then run id), every component is a contiguous stretch: if runs a > b > c (by
    mean) and a ~ c, then |a-b| < |a-c| <= max(se_a, se_c), so b ~ a (when se_a is the max) or b ~ c (else).
    Runs within a group are listed in score order.
    """
    runs = sorted(board, key=lambda r: (-board[r].mean, r))
    parent = {r: r for r in runs}

    def find(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if within_one_se(board[a], board[b]):
                parent[find(b)] = find(a)
    groups: dict[str, list[str]] = {}
    for r in runs:
        groups.setdefault(find(r), []).append(r)
    return sorted(groups.values(), key=lambda g: runs.index(g[0]))


class RunPoint(BaseModel):
    run_id: str
    judge_mean: float
    judge_se: float
    human_mean: float
    human_se: float


TieMode = Literal["pairwise", "components"]


class LeaderboardCorrelation(BaseModel):
    """Judge vs human leaderboard agreement, with and without tie handling."""

    n_runs: int
    missing_runs: list[str] = Field(description="runs on one leaderboard only (left out)")
    tie_mode: TieMode
    repetitions: int
    seed: int | None
    kendall_tau_mean: float | None
    kendall_tau_std: float | None
    spearman_rho_mean: float | None
    spearman_rho_std: float | None
    kendall_tau_b_raw: float | None = Field(description="tau-b on the means, no SE ties")
    spearman_rho_raw: float | None
    judge_tied_pairs: int = Field(description="pairs of runs within one SE on the judge leaderboard")
    human_tied_pairs: int
    judge_tie_groups: list[list[str]] = Field(description="connected components of the tie relation, best first")
    human_tie_groups: list[list[str]]
    runs: list[RunPoint]


def _clearly_above(board: Mapping[str, RunScore], runs: list[str]) -> np.ndarray:
    """above[i, j]: run i is better than run j by more than one SE (mean_i - mean_j > max(se_i, se_j))."""
    mean = np.array([board[r].mean for r in runs])
    se = np.array([board[r].se for r in runs])
    return (mean[:, None] - mean[None, :]) > np.maximum(se[:, None], se[None, :])


def _random_extension(above: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Ranks (0 = best) of a random linear extension of the strict order `above` (random topological sort:
    at each step pick uniformly among the unplaced runs that no unplaced run is clearly above)."""
    n = len(above)
    indegree = above.sum(axis=0).astype(np.int64)
    placed = np.zeros(n, dtype=bool)
    ranks = np.empty(n, dtype=float)
    for pos in range(n):
        available = np.flatnonzero((indegree == 0) & ~placed)
        pick = available[rng.integers(len(available))] if len(available) > 1 else available[0]
        ranks[pick] = pos
        placed[pick] = True
        indegree -= above[pick]
    return ranks


def _shuffled_groups(groups: list[list[str]], order: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    """Ranks (0 = best) of the runs in `order` (run -> position), groups kept in order, shuffled within."""
    ranks = np.empty(len(order), dtype=float)
    pos = 0
    for group in groups:
        shuffled = [group[i] for i in rng.permutation(len(group))] if len(group) > 1 else group
        for run in shuffled:
            ranks[order[run]] = pos
            pos += 1
    return ranks


def leaderboard_correlation(
    judge: Mapping[str, RunScore | tuple[float, float]],
    human: Mapping[str, RunScore | tuple[float, float]],
    *,
    repetitions: int = 1000,
    seed: int | None = 0,
    tie_mode: TieMode = "pairwise",
) -> LeaderboardCorrelation:
    """Kendall tau and Spearman rho between the judge's and the humans' leaderboards, EXAM-style ties.

    After Sander & Dietz 2021 (EXAM): on each leaderboard separately, runs a and b count as tied when
    |mean_a - mean_b| <= max(se_a, se_b) (`within_one_se`). Each of `repetitions` repetitions turns each
    leaderboard into a strict ranking in which the order of tied runs is random, and computes Kendall tau
    (= tau-b, no ties remain) and Spearman rho between the judge's and the humans' rankings; the result is their
    mean and population std (ddof=0). Only runs on both leaderboards count. One generator,
    numpy.random.default_rng(seed), draws judge board then human board in every repetition.

    tie_mode "pairwise" (default): only tied pairs may swap. "Clearly above" (mean_a - mean_b > max(se_a, se_b))
    is a strict partial order (transitive: the gaps add up to more than either SE), and each repetition draws a
    random linear extension of it by random topological sort: repeatedly place, uniformly at random, one of
    the unplaced runs that no unplaced run is clearly above. A pair clearly apart never swaps; every order
    consistent with the SEs has positive probability (not all equal probability when ties chain).
    tie_mode "components": tied groups are the connected components of the tie relation (`tie_groups`,
    contiguous in score order); groups keep their order and each group is shuffled uniformly. Chains of ties
    can make a group span runs that are far apart, so this is the coarser reading.

    The `_raw` fields are tau-b / rho on the plain means (exactly equal means tied, no SE).
    """
    if tie_mode not in ("pairwise", "components"):
        raise ValueError(f"tie_mode must be 'pairwise' or 'components', not {tie_mode!r}")
    jb = {r: RunScore(float(v[0]), float(v[1])) for r, v in judge.items()}
    hb = {r: RunScore(float(v[0]), float(v[1])) for r, v in human.items()}
    for side, board in (("judge", jb), ("human", hb)):
        for run, score in board.items():
            if not (math.isfinite(score.mean) and math.isfinite(score.se)) or score.se < 0:
                raise ValueError(f"{side} leaderboard: run {run!r} has mean {score.mean} and SE {score.se}; "
                                 "both must be finite and SE >= 0")
    common = sorted(set(jb) & set(hb))
    missing = sorted(set(jb) ^ set(hb))
    jb = {r: jb[r] for r in common}
    hb = {r: hb[r] for r in common}
    jg, hg = tie_groups(jb), tie_groups(hb)
    ja, ha = _clearly_above(jb, common), _clearly_above(hb, common)
    n = len(common)
    points = [RunPoint(run_id=r, judge_mean=jb[r].mean, judge_se=jb[r].se, human_mean=hb[r].mean,
                       human_se=hb[r].se) for r in common]
    base = {"n_runs": n, "missing_runs": missing, "tie_mode": tie_mode, "repetitions": repetitions, "seed": seed,
            "judge_tied_pairs": n * (n - 1) // 2 - int(ja.sum()),
            "human_tied_pairs": n * (n - 1) // 2 - int(ha.sum()),
            "judge_tie_groups": jg, "human_tie_groups": hg, "runs": points}
    if n < 2 or repetitions < 1:
        return LeaderboardCorrelation(kendall_tau_mean=None, kendall_tau_std=None, spearman_rho_mean=None,
                                      spearman_rho_std=None, kendall_tau_b_raw=None, spearman_rho_raw=None, **base)

    raw = correlate([jb[r].mean for r in common], [hb[r].mean for r in common])
    order = {r: i for i, r in enumerate(common)}
    rng = np.random.default_rng(seed)
    taus = np.empty(repetitions)
    rhos = np.empty(repetitions)
    for rep in range(repetitions):
        if tie_mode == "pairwise":
            rj = _random_extension(ja, rng)
            rh = _random_extension(ha, rng)
        else:
            rj = _shuffled_groups(jg, order, rng)
            rh = _shuffled_groups(hg, order, rng)
        taus[rep] = _kendall_strict(rj, rh)
        rhos[rep] = _spearman_strict(rj, rh)
    return LeaderboardCorrelation(
        kendall_tau_mean=float(taus.mean()), kendall_tau_std=float(taus.std()),
        spearman_rho_mean=float(rhos.mean()), spearman_rho_std=float(rhos.std()),
        kendall_tau_b_raw=raw.kendall_tau_b, spearman_rho_raw=raw.spearman, **base)


def _kendall_strict(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall tau of two tie-free rankings: (concordant - discordant) / (n choose 2)."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    n = len(x)
    return float((dx * dy).sum() / (n * (n - 1)))


def _spearman_strict(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rho of two tie-free rankings: 1 - 6 sum d^2 / (n (n^2 - 1))."""
    n = len(x)
    d = x - y
    return float(1.0 - 6.0 * (d * d).sum() / (n * (n * n - 1)))

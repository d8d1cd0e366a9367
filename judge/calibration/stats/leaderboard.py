"""Run level: leaderboard correlation with EXAM-style ties (runs within one standard error count as tied), and the
agreement measures TREC's AutoJudge meta-evaluation reports (tau-b, Spearman, Pearson, tau_AP,b, Kendall@k) with
bootstrap intervals over requests."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, Field
from scipy.stats import kendalltau, pearsonr, rankdata, spearmanr

from judge.calibration.stats.correlation import correlate, varying
from judge.calibration.stats.undefined import Reasons, Statistics, Undefined, finite


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


class LeaderboardCorrelation(Statistics):
    """Judge vs human leaderboard agreement, with and without tie handling. The tie-broken figures are undefined
    with fewer than 2 runs and where every run is tied on a leaderboard (its tie-broken order is then drawn
    uniformly at random, so their mean would measure the draw); the raw ones where a side's means are constant."""

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
    agreement: RankingAgreement | None = Field(default=None, description="AutoJudge-style agreement measures")


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
    broken = ("kendall_tau_mean", "kendall_tau_std", "spearman_rho_mean", "spearman_rho_std")
    why = Reasons()
    if n < 2:
        why.mark("fewer than 2 runs on both leaderboards", *broken, "kendall_tau_b_raw", "spearman_rho_raw")
        return LeaderboardCorrelation(kendall_tau_b_raw=None, spearman_rho_raw=None, undefined=why,
                                      **dict.fromkeys(broken), **base)
    raw = correlate([jb[r].mean for r in common], [hb[r].mean for r in common])
    for field, raw_field in (("kendall_tau_b_raw", "kendall_tau_b"), ("spearman_rho_raw", "spearman")):
        if getattr(raw, raw_field) is None:
            why.mark(raw.undefined[raw_field], field)
    for side, above, groups in (("judge", ja, jg), ("human", ha, hg)):
        if (not above.any()) if tie_mode == "pairwise" else len(groups) == 1:
            why.mark(f"every run tied on the {side} leaderboard (its tie-broken order is a random draw)", *broken)
    if repetitions < 1:
        why.mark("no repetitions asked", *broken)
    if why.keys() >= set(broken):
        return LeaderboardCorrelation(kendall_tau_b_raw=raw.kendall_tau_b, spearman_rho_raw=raw.spearman,
                                      undefined=why, **dict.fromkeys(broken), **base)

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
        kendall_tau_b_raw=raw.kendall_tau_b, spearman_rho_raw=raw.spearman, undefined=why, **base)


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


# -- agreement in the measures TREC's AutoJudge meta-evaluation reports ------------------------------------------

AGREEMENT_MEASURES = ("kendall", "spearman", "pearson", "tauap_b", "kendall@k")


class Coefficient(Statistics):
    """A rank or value correlation with its bootstrap interval over requests (`undefined` says where not)."""

    value: float | None
    low: float | None
    high: float | None


class RankingAgreement(BaseModel):
    """Judge vs human leaderboard agreement as the TREC AutoJudge evaluation (autojudge-evaluate 1.1.0,
    `meta-evaluate`) names it: kendall (tau-b), spearman, pearson, tauap_b (Urbano & Marrero 2017's tie-aware
    tau_AP) and kendall@k (tau-b over the human leaderboard's top k runs), each with a percentile bootstrap
    interval over requests."""

    n_runs: int
    n_requests: int
    k: int
    bootstrap: int
    confidence: float
    seed: int | None
    coefficients: dict[str, Coefficient]


def tau_ap_b(judge: Sequence[float], human: Sequence[float]) -> float | None:
    """tau_AP,b: the AP correlation of Yilmaz, Aslam & Robertson (SIGIR 2008) with ties, as Urbano & Marrero
    ("The treatment of ties in AP correlation", ICTIR 2017) define it and autojudge-evaluate computes it (its
    pyircore.tauap_b): the mean of the two directions, each taking one ranking as reference. Higher is better.
    None (undefined) with fewer than 2 runs or a side whose values are all equal."""
    try:
        return _tau_ap_b(np.asarray(judge, dtype=float), np.asarray(human, dtype=float))
    except Undefined:
        return None


def _tau_ap_b(x: np.ndarray, y: np.ndarray) -> float:
    varying(x, y, pairs="runs")
    return (_tau_ap_b_one(x, y) + _tau_ap_b_one(y, x)) / 2


def _tau_ap_b_one(x: np.ndarray, y: np.ndarray) -> float:
    """With y the reference (not all tied): for every item i below y's first tie group, the share of the p_i
    items strictly above i in y (p_i = their number) that x also ranks strictly above i; tau = 2 * mean share - 1.
    Ties in x count as disagreement."""
    rank_x = rankdata(-x)                    # average ranks, 1 = best
    above = rankdata(-y, "min") - 1          # p_i: items strictly above i in y
    shares = [np.sum(rank_x[i] > rank_x[above < above[i]]) / above[i] for i in range(len(y)) if above[i] > 0]
    return 2 * float(np.mean(shares)) - 1


def kendall_at_k(judge: Sequence[float], human: Sequence[float], k: int) -> float | None:
    """Kendall tau-b over the k runs the humans rank highest (all runs when there are k or fewer), as
    autojudge-evaluate's `kendall@k` (top k by the truth leaderboard, then tau-b)."""
    try:
        return _kendall_at_k(np.asarray(judge, dtype=float), np.asarray(human, dtype=float), k)
    except Undefined:
        return None


def _kendall_at_k(x: np.ndarray, y: np.ndarray, k: int) -> float:
    top = np.argsort(-y, kind="stable")[:k]
    try:
        return _coefficient("kendall", x[top], y[top])
    except Undefined as exc:
        raise Undefined(f"over the humans' top {k}: {exc.reason}") from None


def _coefficient(name: str, x: np.ndarray, y: np.ndarray, k: int = 10) -> float:
    """One agreement measure on the runs' means; Undefined with fewer than 2 runs or a constant side."""
    if name == "kendall@k":
        return _kendall_at_k(x, y, k)
    varying(x, y, pairs="runs", judge="judge mean", human="human mean")
    if name == "tauap_b":
        return _tau_ap_b(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = {"kendall": lambda: kendalltau(x, y, variant="b"), "spearman": lambda: spearmanr(x, y),
                "pearson": lambda: pearsonr(x, y)}[name]
        return finite(test().statistic, "scipy returned no finite value")


def ranking_agreement(judge: Mapping[str, Mapping[str, float]], human: Mapping[str, Mapping[str, float]],
                      *, k: int = 10, bootstrap: int = 1000, confidence: float = 0.95, seed: int | None = 0
                      ) -> RankingAgreement:
    """kendall, spearman, pearson, tauap_b and kendall@k between the runs' mean scores on the two sides
    ({run_id: {request_id: value}}, NaN left out), each with a percentile bootstrap interval: `bootstrap` times,
    draw the requests with replacement and recompute both leaderboards (a run's mean over the drawn requests it
    has a value for) and the coefficients. Runs with a value on both sides only."""
    def scored(side: Mapping[str, Mapping[str, float]]) -> set[str]:
        return {r for r, values in side.items() if any(math.isfinite(v) for v in values.values())}

    runs = sorted(scored(judge) & scored(human))
    requests = sorted({q for r in runs for q in (*judge[r], *human[r])})

    def matrix(side: Mapping[str, Mapping[str, float]]) -> np.ndarray:
        return np.array([[side[r].get(q, math.nan) for q in requests] for r in runs], dtype=float).reshape(
            len(runs), len(requests))

    jm, hm = matrix(judge), matrix(human)

    def boards(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = []
        for m in (jm, hm):
            present = np.isfinite(m)
            weight = (present * counts[None, :]).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.where(present, m, 0.0) @ counts / weight)
        return out[0], out[1]

    def all_coefficients(x: np.ndarray, y: np.ndarray, why: Reasons) -> dict[str, float | None]:
        keep = np.isfinite(x) & np.isfinite(y)
        return {name: why.value(name, _coefficient, name, x[keep], y[keep], k) for name in AGREEMENT_MEASURES}

    point_why = Reasons()
    point = all_coefficients(*boards(np.ones(len(requests))), point_why)
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in AGREEMENT_MEASURES}
    for _ in range(bootstrap if requests and len(runs) >= 2 else 0):
        counts = np.bincount(rng.integers(len(requests), size=len(requests)), minlength=len(requests))
        for name, value in all_coefficients(*boards(counts.astype(float)), Reasons()).items():
            if value is not None:
                draws[name].append(value)
    tail = (1 - confidence) / 2 * 100
    coefficients = {}
    for name in AGREEMENT_MEASURES:
        values = draws[name]
        why = Reasons()
        if point[name] is None:
            why.mark(point_why[name], "value")
        if values:
            low, high = float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))
        else:
            low = high = None
            why.mark("fewer than 2 runs" if len(runs) < 2 else "no request" if not requests
                     else "no bootstrap draws asked" if bootstrap < 1 else "undefined in every bootstrap draw",
                     "low", "high")
        coefficients[name] = Coefficient(value=point[name], low=low, high=high, undefined=why)
    return RankingAgreement(n_runs=len(runs), n_requests=len(requests), k=k, bootstrap=bootstrap,
                            confidence=confidence, seed=seed, coefficients=coefficients)

"""Coverage and width of the prediction-powered and human-only intervals over a grid of judges, prevalences and
sample sizes, and on the embedded judge's 350 dev calibration items; the method before issue 35 beside them.

Populations (one per cell and seed, fixed while its samples are drawn; the target is its all-human mean):

* binary: N units, round(prevalence * N) of them (at least 1) labelled 1 by humans; the judge gives the human
  label on round(accuracy * N) units chosen at random and the other label elsewhere;
* F1-like (per-report values in [0, 1] with mass at 0 and 1): a share `prevalence` of units has a non-zero
  human value, half of those 1 and half uniform on (0, 1); the judge reproduces the human value exactly on
  round(accuracy * N) units and elsewhere draws a value independently from the same distribution;
* window (`--window`): binary, a judge wrong only on positives (all its errors one way) on a few units: the
  samples that show no disagreement, and the error rates such samples can miss;
* dev: the 350 items of calibration/embedded-dev/items.jsonl, by group and all together (human label vs the
  embedded judge's verdict under its fitted thresholds, kappa 0.34).

Each cell draws `--draws` simple random samples of n units per seed and computes, with the library's batch code
(judge.metrics.ppi.ppi_batch and human_only_batch, the formulas behind `--human`):

* PPI: power-tuned PPI with the prior-regularised variance (the method of docs/ppi.md);
* human-only: the same interval with lambda = 0 (Agresti-Coull-type for a binary rate);
* old PPI / old human-only: the t intervals before (no prior; lambda 0 for a judge constant on the sample).

Printed: one row per cell and method (coverage pooled over seeds, the lowest seed's coverage, mean width), then a
summary of the targets: coverage >= 0.93 for PPI and human-only in every cell; PPI mean width <= human-only's
where the judge's accuracy is >= 0.8.

    nice python -m benchmarks.ppi_coverage [--draws 2000] [--seeds 0 1 2] [--quick] [--kinds ...] [--units ...]
        [--accuracies ...] [--no-dev] [--prior 0.75]
    nice python -m benchmarks.ppi_coverage --issue --draws 4000     # the cases issue 35 reported
    nice python -m benchmarks.ppi_coverage --pairs --draws 1000     # pair differences, 3 runs x 60 requests
    nice python -m benchmarks.ppi_coverage --window --draws 2000 --seeds 0 1   # good one-way judges, no disagreement
    nice python -m benchmarks.ppi_coverage --widths --draws 2000 --seeds 0 1   # width against the oracle, ppi-python
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from scipy import stats

from judge.metrics.ppi import PRIOR_WEIGHT, human_only_batch, ppi_batch, ppi_difference

ROOT = Path(__file__).resolve().parents[1]
ITEMS = ROOT / "calibration" / "embedded-dev" / "items.jsonl"
THRESHOLDS = ROOT / "calibration" / "embedded-dev" / "thresholds.json"
ACCURACIES = (0.6, 0.8, 0.9, 0.95, 0.99, 1.0)
PREVALENCES = (0.05, 0.1, 0.3, 0.5)
SIZES = (10, 20, 50, 100)
POPULATIONS = (100, 1000)
DEV_SIZES = (10, 20, 50, 100)
METHODS = ("PPI", "human-only", "old PPI", "old human-only")
CONFIDENCE = 0.95
PRIOR = [PRIOR_WEIGHT]


def load_runs(items: Path = ITEMS, thresholds: Path = THRESHOLDS) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """run -> (human 0/1, judge 0/1) for each group and for all items together."""
    rule = json.loads(thresholds.read_text(encoding="utf-8"))["decisions"]["supports_citation"]
    groups: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for line in items.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["decision"] != "supports_citation" or item["judge"] is None:
            continue
        judge = item["judge"] == rule["verdict"] and item["confidence"] >= rule["threshold"]
        pair = (int(item["human"] == "supported"), int(judge))
        groups[item["group"]].append(pair)
        groups["all items"].append(pair)
    return {g: (np.array([h for h, _ in v], dtype=float), np.array([j for _, j in v], dtype=float))
            for g, v in sorted(groups.items())}


def binary_population(accuracy: float, prevalence: float, units: int, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
    human = np.zeros(units)
    human[rng.choice(units, max(1, round(prevalence * units)), replace=False)] = 1
    judge = 1 - human
    right = rng.choice(units, round(accuracy * units), replace=False)
    judge[right] = human[right]
    return human, judge


def f1_like_population(accuracy: float, prevalence: float, units: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
    def draw(size: int) -> np.ndarray:
        nonzero = rng.random(size) < prevalence
        one = rng.random(size) < 0.5
        return np.where(nonzero, np.where(one, 1.0, rng.random(size)), 0.0)

    human = draw(units)
    human[rng.integers(units)] = max(human.max(), 1.0)     # never an all-zero population
    judge = draw(units)
    right = rng.choice(units, round(accuracy * units), replace=False)
    judge[right] = human[right]
    return human, judge


def rates_population(sensitivity: float, specificity: float, prevalence: float, units: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels with a judge of given sensitivity and specificity (exact shares of each class)."""
    human = np.zeros(units)
    positive = rng.choice(units, max(1, round(prevalence * units)), replace=False)
    human[positive] = 1
    negative = np.flatnonzero(human == 0)
    judge = human.copy()
    judge[rng.choice(positive, round((1 - sensitivity) * len(positive)), replace=False)] = 0
    judge[rng.choice(negative, round((1 - specificity) * len(negative)), replace=False)] = 1
    return human, judge


def one_way_population(errors: float, prevalence: float, units: int, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Binary labels with a judge that misses positives only: it says 0 on max(1, round(errors * N)) of the
    round(prevalence * N) positive units and agrees elsewhere, so every error moves its mean the same way (the
    worst case for a sample that shows no disagreement)."""
    human = np.zeros(units)
    positive = rng.choice(units, round(prevalence * units), replace=False)
    human[positive] = 1
    judge = human.copy()
    judge[rng.choice(positive, max(1, round(errors * units)), replace=False)] = 0
    return human, judge


# The window where a good judge's sample shows no disagreement: error rates of 1% or less (at N = 100 the
# smallest is one unit, 1%), and near the largest rate a sample of n can miss (unseen_error_rate(n) at 0.95:
# 0.26, 0.14, 0.058), each all one way, binary, as (errors, prevalence, N, n).
WINDOW_CELLS = tuple((errors, prevalence, units, n) for errors in (0.01, 0.005, 0.001)
                     for prevalence in (0.5, 0.7, 0.9) for units in (1000, 100) for n in (10, 20, 50)) + \
    tuple((errors, 0.5, 1000, n) for errors, n in ((0.28, 10), (0.25, 10), (0.15, 20), (0.14, 20), (0.12, 20),
                                                    (0.06, 50), (0.05, 50)))


def window_cells(draws: int, seeds: list[int]) -> None:
    print("\n| judge errors (one way) | prevalence | N | n | method | coverage | lowest seed | mean width |")
    print("|---|---|---|---|---|---|---|---|")
    misses = []
    for errors, prevalence, units, n in WINDOW_CELLS:
        per_seed = [cell(*one_way_population(errors, prevalence, units, np.random.default_rng([seed, 11])), n,
                         draws, np.random.default_rng([seed, 13])) for seed in seeds]
        count = max(1, round(errors * units))
        for m in METHODS:
            hits = [s[m][0] for s in per_seed]
            width = sum(s[m][1] for s in per_seed) / (draws * len(seeds))
            coverage = sum(hits) / (draws * len(seeds))
            print(f"| {count} of {units} | {prevalence} | {units} | {n} | {m} | {coverage:.3f} | "
                  f"{min(hits) / draws:.3f} | {width:.4f} |", flush=True)
            if m in ("PPI", "human-only") and coverage < 0.93:
                misses.append(f"{count} of {units}, prevalence {prevalence}, n {n}: {m} {coverage:.3f}")
    print(f"# targets missed: {len(misses)}")
    for miss in misses:
        print(f"#   {miss}")


# The cases issue 35 reported (old method's coverage there: 0.843, 0.330, 0.672, 0.815, 0.685, 0.526, 0.776,
# 0.597), as (label, population maker, n).
ISSUE_CELLS = (
    ("binary N=300, prevalence 0.4, judge right on 90%", lambda r: binary_population(0.9, 0.4, 300, r), 20),
    ("binary N=300, prevalence 0.4, judge right on 95%", lambda r: binary_population(0.95, 0.4, 300, r), 20),
    ("binary N=300, prevalence 0.4, judge right on 95%", lambda r: binary_population(0.95, 0.4, 300, r), 50),
    ("binary N=300, prevalence 0.4, judge right on 95%", lambda r: binary_population(0.95, 0.4, 300, r), 100),
    ("binary N=200, prevalence 0.1, sensitivity 0.8, specificity 0.95",
     lambda r: rates_population(0.8, 0.95, 0.1, 200, r), 20),
    ("binary N=300, prevalence 0.05, judge right on 95%", lambda r: binary_population(0.95, 0.05, 300, r), 20),
    ("F1-like N=300, judge exact on 90%", lambda r: f1_like_population(0.9, 0.5, 300, r), 20),
    ("F1-like N=300, judge exact on 95%", lambda r: f1_like_population(0.95, 0.5, 300, r), 20),
)


def issue_cells(draws: int, seeds: list[int]) -> None:
    print("\n| case | n | method | coverage | lowest seed | mean width |")
    print("|---|---|---|---|---|---|")
    for label, make, n in ISSUE_CELLS:
        per_seed = [cell(*make(np.random.default_rng([seed, 5])), n, draws, np.random.default_rng([seed, 9]))
                    for seed in seeds]
        for m in METHODS:
            hits = [s[m][0] for s in per_seed]
            width = sum(s[m][1] for s in per_seed) / (draws * len(seeds))
            print(f"| {label} | {n} | {m} | {sum(hits) / (draws * len(seeds)):.3f} | {min(hits) / draws:.3f} | "
                  f"{width:.4f} |", flush=True)


def samples(units: int, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """`draws` simple random samples of n of `units` units, as a boolean mask (draws, units)."""
    keys = rng.random((draws, units))
    chosen = np.argpartition(keys, n - 1, axis=1)[:, :n]
    mask = np.zeros((draws, units), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


def old_intervals(human: np.ndarray, judge: np.ndarray, mask: np.ndarray, confidence: float
                  ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The intervals before issue 35: t intervals on the sample variance, lambda 0 for a judge constant on the
    sample, no prior, no clipping (simple random sample)."""
    units = len(human)
    n = mask.sum(axis=1).astype(float)
    fpc = 1 - n / units
    y = np.where(mask, human, 0.0)
    f = np.where(mask, judge, 0.0)
    y_bar, f_bar = y.sum(1) / n, f.sum(1) / n
    fc = np.where(mask, judge - f_bar[:, None], 0.0)
    yc = np.where(mask, human - y_bar[:, None], 0.0)
    var_f = (fc ** 2).sum(1) / n
    cov = (fc * yc).sum(1) / n
    fitted = n >= 3
    lam = np.where(fitted, np.where(var_f > 1e-15, np.clip(cov / np.where(var_f > 1e-15, var_f, 1), 0, 1), 0), 1)
    out = {}
    for name, lam_m, k in (("old PPI", lam, fitted.astype(float)), ("old human-only", np.zeros_like(n), 0.0)):
        e = np.where(mask, human - lam_m[:, None] * judge, 0.0)
        e_bar = e.sum(1) / n
        ss = (np.where(mask, e - e_bar[:, None], 0.0) ** 2).sum(1)
        df = n - 1 - k
        se = np.sqrt(fpc * ss / df / n)
        half = stats.t.ppf((1 + confidence) / 2, df) * se
        value = lam_m * judge.mean() + e_bar
        out[name] = (value - half, value + half)
    return out


def cell(human: np.ndarray, judge: np.ndarray, n: int, draws: int, rng: np.random.Generator
         ) -> dict[str, tuple[int, float]]:
    """method -> (intervals covering the truth, sum of widths) over `draws` samples."""
    mask = samples(len(human), n, draws, rng)
    truth = human.mean()
    ppi = ppi_batch(judge, human, mask, n / len(human), CONFIDENCE, prior_weight=PRIOR[0])
    alone = human_only_batch(judge, human, mask, n / len(human), CONFIDENCE, prior_weight=PRIOR[0])
    bounds = {"PPI": (ppi.low, ppi.high), "human-only": (alone.low, alone.high),
              **old_intervals(human, judge, mask, CONFIDENCE)}
    tol = 1e-12
    return {m: (int(np.sum((low <= truth + tol) & (truth - tol <= high))), float(np.sum(high - low)))
            for m, (low, high) in bounds.items()}


def pair_collection(rng: np.random.Generator, requests: int = 60, accuracy: float = 0.8
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(human, judge) values of 3 runs x `requests` requests, shape (3, requests): F1-like per-report values
    whose run means are about 0.2, 0.4 and 0.57, correlated across runs through each request's difficulty; the
    judge exact on a share `accuracy` of reports and an independent draw elsewhere."""
    difficulty = rng.normal(0, 1, requests)
    def draw(shift: np.ndarray) -> np.ndarray:
        latent = shift[:, None] + difficulty[None, :] + rng.normal(0, 1, (3, requests))
        value = 1 / (1 + np.exp(-1.5 * latent))
        return np.where(latent < -1.2, 0.0, np.where(latent > 1.6, 1.0, value))
    human = draw(np.array([-1.2, -0.35, 0.3]))
    judge = draw(np.array([-1.2, -0.35, 0.3]))
    right = rng.random(human.shape) < accuracy
    return human, np.where(right, human, judge)


def pairwise(draws: int, seeds: list[int], labelled: int = 70, requests_sampled: int = 20) -> None:
    """Coverage of the pair-difference interval (judge.metrics.ppi.ppi_difference) on 3 runs x 60 requests:
    `reports`: `labelled` of the 180 reports at random (unstratified, pi = 70/180); `requests`: `requests_sampled`
    of the 60 requests with all their reports."""
    print("\n| design | labelled | pair | true difference | coverage | mean width | told apart |")
    print("|---|---|---|---|---|---|---|")
    for design in ("reports", "requests"):
        hits: dict[tuple[int, int], list[int]] = defaultdict(list)
        width: dict[tuple[int, int], list[float]] = defaultdict(list)
        apart: dict[tuple[int, int], list[int]] = defaultdict(list)
        truth: dict[tuple[int, int], list[float]] = defaultdict(list)
        for seed in seeds:
            rng = np.random.default_rng([seed, 3])
            human, judge = pair_collection(rng)
            runs, requests = human.shape
            for _ in range(draws):
                if design == "reports":
                    mask = np.zeros(runs * requests, dtype=bool)
                    mask[rng.choice(runs * requests, labelled, replace=False)] = True
                    mask = mask.reshape(runs, requests)
                    pi = labelled / (runs * requests)
                else:
                    mask = np.zeros((runs, requests), dtype=bool)
                    mask[:, rng.choice(requests, requests_sampled, replace=False)] = True
                    pi = requests_sampled / requests
                sampled = np.where(mask, human, np.nan)
                every = np.arange(requests)
                for a, b in ((0, 1), (0, 2), (1, 2)):
                    e = ppi_difference(judge[a], sampled[a], judge[b], sampled[b], every, every,
                                       np.full(requests, pi), np.full(requests, pi), CONFIDENCE)
                    true = human[a].mean() - human[b].mean()
                    hits[(a, b)].append(e.ppi.low <= true <= e.ppi.high)
                    width[(a, b)].append(e.ppi.width)
                    apart[(a, b)].append(e.ppi.excludes_zero())
                    truth[(a, b)].append(true)
        size = f"{labelled} of 180 reports" if design == "reports" else f"{requests_sampled} of 60 requests"
        for pair in hits:
            print(f"| {design} | {size} | run {pair[0]} - run {pair[1]} | {np.mean(truth[pair]):+.3f} | "
                  f"{np.mean(hits[pair]):.3f} | {np.mean(width[pair]):.3f} | {np.mean(apart[pair]):.3f} |",
                  flush=True)


# Cells where the judge errs one way only (false positives on negatives), as (false-positive share of all units,
# prevalence, N, n): where a CLT interval that trusts a few disagreements fails.
ONE_WAY_CELLS = tuple((fp, prevalence, units, n) for fp in (0.05, 0.1) for prevalence in (0.2, 0.5)
                      for units in (300, 1000) for n in (20, 50))


def false_positive_population(fp: float, prevalence: float, units: int, rng: np.random.Generator
                              ) -> tuple[np.ndarray, np.ndarray]:
    human = np.zeros(units)
    human[rng.choice(units, round(prevalence * units), replace=False)] = 1
    judge = human.copy()
    judge[rng.choice(np.flatnonzero(human == 0), round(fp * units), replace=False)] = 1
    return human, judge


REF_FALLBACKS = [0]   # samples where ppi_mean_ci's tuned lambda raised ZeroDivisionError (lambda = 1 used)


def reference(human: np.ndarray, judge: np.ndarray, mask: np.ndarray, draws: int) -> dict[str, tuple[int, float]]:
    """ppi-python 0.2.3's classical and PPI++ mean intervals (classical_mean_ci, ppi_mean_ci with the tuned
    lambda) on the first `draws` samples: labelled units as (Y, Yhat), the other N - n as Yhat_unlabeled.
    method -> (intervals covering, sum of widths)."""
    from ppi_py import classical_mean_ci, ppi_mean_ci

    truth = human.mean()
    out = {"ref classical": [0, 0.0], "ref PPI++": [0, 0.0]}
    for row in mask[:draws]:
        try:
            tuned = ppi_mean_ci(human[row], judge[row], judge[~row], alpha=0.05)
        except ZeroDivisionError:   # its lambda divides by the judge's variance: constant on every unit seen
            REF_FALLBACKS[0] += 1
            tuned = ppi_mean_ci(human[row], judge[row], judge[~row], alpha=0.05, lam=1)
        for name, (low, high) in (("ref classical", classical_mean_ci(human[row], alpha=0.05)),
                                  ("ref PPI++", tuned)):
            low, high = float(np.ravel(low)[0]), float(np.ravel(high)[0])
            out[name][0] += int(low <= truth + 1e-12 and truth - 1e-12 <= high)
            out[name][1] += high - low
    return {k: (v[0], v[1]) for k, v in out.items()}


def width_cell(human: np.ndarray, judge: np.ndarray, n: int, draws: int, rng: np.random.Generator,
               ref_draws: int) -> dict[str, object]:
    """PPI, human-only and the plain interval (PPI++ without the small-sample prior or unseen-error width) on the
    same `draws` samples, PPI's errors (for the oracle width), the share of samples with a disagreement, and
    ppi-python's intervals on the first `ref_draws` of them."""
    mask = samples(len(human), n, draws, rng)
    truth = human.mean()
    pi = n / len(human)
    ppi = ppi_batch(judge, human, mask, pi, CONFIDENCE)
    alone = human_only_batch(judge, human, mask, pi, CONFIDENCE)
    plain = ppi_batch(judge, human, mask, pi, CONFIDENCE, prior_weight=0)
    tol = 1e-12
    out: dict[str, object] = {m: (int(np.sum((b.low <= truth + tol) & (truth - tol <= b.high))),
                                  float(np.sum(b.high - b.low))) for m, b in
                              (("PPI", ppi), ("human-only", alone), ("plain", plain))}
    out["errors"] = np.abs(ppi.value - truth)
    out["disagreement"] = float(np.mean(np.any(mask & (human != judge)[None, :], axis=1)))
    if ref_draws:
        out.update(reference(human, judge, mask, min(ref_draws, draws)))
    return out


WIDTH_METHODS = ("PPI", "plain", "human-only", "ref classical", "ref PPI++")


def width_grid(cells: list[tuple[str, object, int]], draws: int, seeds: list[int], ref_draws: int) -> None:
    """One row per cell: coverage and mean width of each method, PPI's oracle width and ratio."""
    print("| cell | n | PPI coverage | PPI width | oracle | ratio | plain coverage | human-only coverage | "
          "human-only width | ref classical coverage | width | ref PPI++ coverage | width |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    misses, wide, protected, unprotected = [], [], [], []
    for label, make, n in cells:
        per_seed = [width_cell(*make(np.random.default_rng([seed, 1])), n, draws,  # type: ignore[operator]
                               np.random.default_rng([seed, 7]), ref_draws) for seed in seeds]
        row = {}
        for m in WIDTH_METHODS:
            if m not in per_seed[0]:
                continue
            count = draws if not m.startswith("ref") else min(ref_draws, draws)
            row[m] = (sum(s[m][0] for s in per_seed) / (count * len(seeds)),    # type: ignore[index]
                      sum(s[m][1] for s in per_seed) / (count * len(seeds)))    # type: ignore[index]
        errors = np.concatenate([s["errors"] for s in per_seed])                 # type: ignore[misc]
        oracle = 2 * float(np.quantile(errors, 0.95))
        ratio = row["PPI"][1] / oracle if oracle > 1e-9 else float("inf")
        shows = min(float(s["disagreement"]) for s in per_seed)                  # type: ignore[arg-type]
        ref = [f"{row[m][0]:.3f} | {row[m][1]:.3f}" if m in row else "– | –" for m in ("ref classical", "ref PPI++")]
        print(f"| {label} | {n} | {row['PPI'][0]:.3f} | {row['PPI'][1]:.3f} | {oracle:.3f} | {ratio:.2f} | "
              f"{row['plain'][0]:.3f} | {row['human-only'][0]:.3f} | {row['human-only'][1]:.3f} | {' | '.join(ref)} |",
              flush=True)
        if row["PPI"][0] < 0.93:
            misses.append(f"{label}, n {n}: PPI coverage {row['PPI'][0]:.3f}")
        if row["plain"][0] >= 0.94 and shows >= 0.95 and ratio > 1.3:
            wide.append(f"{label}, n {n}: ratio {ratio:.2f}")
        if "ref PPI++" in row:
            if row["ref PPI++"][0] < 0.93:
                protected.append(f"{label}, n {n}: ref PPI++ {row['ref PPI++'][0]:.3f} (ours {row['PPI'][0]:.3f}, "
                                 f"{row['PPI'][1]:.3f} against {row['ref PPI++'][1]:.3f} wide)")
            elif row["PPI"][1] > row["ref PPI++"][1] + 1e-9:
                unprotected.append(f"{label}, n {n}: ours {row['PPI'][1]:.3f} > ref {row['ref PPI++'][1]:.3f}")
    print(f"# PPI below 0.93: {len(misses)}")
    for line in misses:
        print(f"#   {line}")
    print(f"# ratio above 1.3 where the plain interval covers >= 0.94 and >= 95% of samples show a disagreement: "
          f"{len(wide)}")
    for line in wide:
        print(f"#   {line}")
    print(f"# cells where ppi-python's PPI++ covers under 0.93: {len(protected)}")
    for line in protected:
        print(f"#   {line}")
    print(f"# cells where ppi-python's PPI++ covers and ours is wider: {len(unprotected)}")
    for line in unprotected:
        print(f"#   {line}")


def grid(quick: bool, kinds: list[str], populations: list[int], accuracies: list[float]
         ) -> Iterator[tuple[str, float, float, int, int]]:
    for kind in kinds:
        for units in populations:
            for accuracy in accuracies:
                for prevalence in PREVALENCES:
                    for n in SIZES:
                        if quick and (units, n) != (1000, 20):
                            continue
                        yield kind, accuracy, prevalence, units, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--quick", action="store_true", help="only N = 1000, n = 20")
    parser.add_argument("--pairs", action="store_true", help="only the pairwise collection")
    parser.add_argument("--kinds", nargs="*", default=["binary", "F1-like"], help="grid parts to run")
    parser.add_argument("--units", type=int, nargs="+", default=list(POPULATIONS), help="population sizes N")
    parser.add_argument("--issue", action="store_true", help="only the cases issue 35 reported")
    parser.add_argument("--window", action="store_true",
                        help="only good judges whose errors all go one way (samples that show no disagreement)")
    parser.add_argument("--accuracies", type=float, nargs="+", default=list(ACCURACIES))
    parser.add_argument("--no-dev", action="store_true", help="leave out the 350 dev items")
    parser.add_argument("--prior", type=float, default=PRIOR_WEIGHT, help="pseudo-observation weight per corner")
    parser.add_argument("--widths", action="store_true",
                        help="coverage, width and ratio to the oracle width on the grid and the one-way cells, with "
                        "ppi-python's intervals beside (`pip install argue-judge[bench]`)")
    parser.add_argument("--ref-draws", type=int, default=200,
                        help="draws per cell and seed given to ppi-python (it runs one sample at a time); 0: none")
    args = parser.parse_args()
    PRIOR[0] = args.prior
    started = time.perf_counter()
    if args.issue:
        print(f"# issue 35's cells: {args.draws} draws per seed; seeds {args.seeds}; nominal {CONFIDENCE:.2f}")
        issue_cells(args.draws, args.seeds)
        print(f"\n# {time.perf_counter() - started:.0f} s")
        return
    if args.window:
        print(f"# window cells: {args.draws} draws per seed; seeds {args.seeds}; nominal {CONFIDENCE:.2f}")
        window_cells(args.draws, args.seeds)
        print(f"\n# {time.perf_counter() - started:.0f} s")
        return
    if args.widths:
        try:
            import ppi_py  # noqa: F401
        except ImportError:
            print("# ppi-python is not installed (pip install 'argue-judge[bench]'): its columns are left out")
            args.ref_draws = 0
        print(f"# widths: {args.draws} draws per cell and seed ({args.ref_draws} for ppi-python); seeds {args.seeds}; "
              f"nominal {CONFIDENCE:.2f}")
        cells: list[tuple[str, object, int]] = []
        for kind, accuracy, prevalence, units, n in grid(args.quick, args.kinds, args.units, args.accuracies):
            if n >= units:      # every unit labelled: the human mean itself, nothing to estimate
                continue
            make = binary_population if kind == "binary" else f1_like_population
            cells.append((f"{kind} N={units} accuracy {accuracy} prevalence {prevalence}",
                          lambda r, m=make, a=accuracy, p=prevalence, u=units: m(a, p, u, r), n))
        cells += [(f"one-way: {fp:.0%} false positives, prevalence {p}, N={u}",
                   lambda r, fp=fp, p=p, u=u: false_positive_population(fp, p, u, r), n)
                  for fp, p, u, n in ONE_WAY_CELLS]
        cells += [("issue: F1-like N=300 exact on 80% prevalence 0.5", lambda r: f1_like_population(0.8, 0.5, 300, r),
                   n) for n in (20, 50)]
        cells += [("issue: binary N=300 prevalence 0.4 right on 95%", lambda r: binary_population(0.95, 0.4, 300, r),
                   n) for n in (20, 50)]
        width_grid(cells, args.draws, args.seeds, args.ref_draws)
        print(f"# ppi_mean_ci raised ZeroDivisionError on {REF_FALLBACKS[0]} samples (lambda = 1 used there)")
        print(f"\n# {time.perf_counter() - started:.0f} s")
        return
    if args.pairs:
        print(f"# pairwise: {args.draws} draws per seed; seeds {args.seeds}; nominal {CONFIDENCE:.2f}")
        pairwise(args.draws, args.seeds)
        print(f"\n# {time.perf_counter() - started:.0f} s")
        return
    print(f"# {args.draws} draws per cell and seed; seeds {args.seeds}; nominal {CONFIDENCE:.2f}")
    print("| values | N | judge accuracy | prevalence | n | method | coverage | lowest seed | mean width |")
    print("|---|---|---|---|---|---|---|---|---|")
    misses: list[str] = []
    cells = 0
    rows: list[tuple[str, dict[str, tuple[float, float, float]]]] = []

    def run_cell(label: str, populations: list[tuple[np.ndarray, np.ndarray]], n: int, accuracy: float | None
                 ) -> None:
        nonlocal cells
        per_seed = [cell(h, j, n, args.draws, np.random.default_rng([seed, 7]))
                    for seed, (h, j) in zip(args.seeds, populations)]
        result = {}
        for m in METHODS:
            hits = [s[m][0] for s in per_seed]
            widths = [s[m][1] for s in per_seed]
            result[m] = (sum(hits) / (args.draws * len(per_seed)), min(hits) / args.draws,
                         sum(widths) / (args.draws * len(per_seed)))
            print(f"| {label} | {m} | {result[m][0]:.3f} | {result[m][1]:.3f} | {result[m][2]:.4f} |", flush=True)
        cells += 1
        rows.append((label, result))
        for m in ("PPI", "human-only"):
            if result[m][0] < 0.93:
                misses.append(f"{label}: {m} coverage {result[m][0]:.3f}")
        if accuracy is not None and accuracy >= 0.8 and result["PPI"][2] > result["human-only"][2] + 1e-9:
            misses.append(f"{label}: PPI width {result['PPI'][2]:.4f} > human-only {result['human-only'][2]:.4f}")

    for kind, accuracy, prevalence, units, n in grid(args.quick, args.kinds, args.units, args.accuracies):
        make = binary_population if kind == "binary" else f1_like_population
        populations = [make(accuracy, prevalence, units, np.random.default_rng([seed, 1])) for seed in args.seeds]
        run_cell(f"{kind} | {units} | {accuracy} | {prevalence} | {n}", populations, n, accuracy)
    for run, (human, judge) in ({} if args.no_dev else load_runs()).items():
        for n in DEV_SIZES:
            if n < len(human):
                run_cell(f"dev {run} | {len(human)} | (κ 0.34) | {human.mean():.3f} | {n}",
                         [(human, judge)] * len(args.seeds), n, None)
    print(f"\n# {cells} cells; {time.perf_counter() - started:.0f} s")
    print(f"# targets missed: {len(misses)}")
    for miss in misses:
        print(f"#   {miss}")


if __name__ == "__main__":
    main()

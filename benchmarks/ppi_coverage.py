"""Coverage of prediction-powered intervals, simulated on the embedded judge's 350 dev calibration items.

Each item of calibration/embedded-dev/items.jsonl has a human label and the embedded judge's verdict with its
confidence; the judge's label is its verdict under the thresholds fitted for it (thresholds.json beside the
items: `supported` only at confidence >= threshold, as `eval` applies them by default; kappa 0.34). Each group
(AttributionBench's sources, WiCE) is a "run", and all 350 items a run of their own; the measure is the support
rate (the share of items labelled `supported`). The target is a run's all-human rate. For each labelled size n
smaller than the run, `--draws` simple random samples of n items get their human labels, and three 95%
intervals are computed (judge.metrics.ppi, the code behind `--human`):

* human-only: the sample's human labels alone (the classical interval, finite-population corrected);
* judge-only: the judge's labels of every item taken as if they were human labels (t interval over N items):
  what a leaderboard without a human sample reports; its bias is the judge's error and does not shrink;
* PPI: the judge's labels of every item, corrected by the sample (PPI++ power-tuned lambda).

Printed: per n and run, the empirical coverage of the true rate, the mean width and the mean error of the point
estimate; then per n pooled over runs. Target: PPI coverage in [0.93, 0.97] at every n, PPI width <= human-only.

    python -m benchmarks.ppi_coverage [--draws 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

from judge.metrics.ppi import ppi_mean

ROOT = Path(__file__).resolve().parents[1]
ITEMS = ROOT / "calibration" / "embedded-dev" / "items.jsonl"
THRESHOLDS = ROOT / "calibration" / "embedded-dev" / "thresholds.json"
SIZES = (20, 50, 100)
METHODS = ("human-only", "judge-only", "PPI")


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
    return {g: (np.array([h for h, _ in v]), np.array([j for _, j in v])) for g, v in sorted(groups.items())}


def judge_only_interval(judge: np.ndarray, confidence: float) -> tuple[float, float, float]:
    mean = float(judge.mean())
    half = float(stats.t.ppf((1 + confidence) / 2, len(judge) - 1)) * float(judge.std(ddof=1)) / np.sqrt(len(judge))
    return mean, mean - half, mean + half


def simulate(human: np.ndarray, judge: np.ndarray, n: int, draws: int, rng: np.random.Generator,
             confidence: float = 0.95) -> dict[str, dict[str, float]]:
    truth = float(human.mean())
    hits = {m: 0 for m in METHODS}
    width = {m: 0.0 for m in METHODS}
    error = {m: 0.0 for m in METHODS}
    j_mean, j_low, j_high = judge_only_interval(judge, confidence)
    for _ in range(draws):
        sample = np.full(len(human), np.nan)
        chosen = rng.choice(len(human), size=n, replace=False)
        sample[chosen] = human[chosen]
        e = ppi_mean(judge, sample, confidence=confidence)
        for method, (value, low, high) in (("human-only", (e.human_only.value, e.human_only.low, e.human_only.high)),
                                           ("judge-only", (j_mean, j_low, j_high)),
                                           ("PPI", (e.ppi.value, e.ppi.low, e.ppi.high))):
            hits[method] += low <= truth <= high
            width[method] += high - low
            error[method] += value - truth
    return {m: {"coverage": hits[m] / draws, "width": width[m] / draws, "bias": error[m] / draws} for m in METHODS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    runs = load_runs()
    started = time.perf_counter()
    print(f"# {ITEMS.relative_to(ROOT)}: {sum(len(h) for g, (h, _) in runs.items() if g != 'all items')} items; "
          f"{args.draws} draws per n and run; seed {args.seed}; nominal 95%")
    print("| n | run (N) | human rate | judge rate | method | coverage | mean width | mean error |")
    print("|---|---|---|---|---|---|---|---|")
    pooled: dict[int, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
    for n in SIZES:
        for run, (human, judge) in runs.items():
            if n >= len(human):
                continue  # fully labelled: no estimate needed
            result = simulate(human, judge, n, args.draws, rng)
            for method in METHODS:
                r = result[method]
                pooled[n][method].append(r)
                print(f"| {n} | {run} ({len(human)}) | {human.mean():.3f} | {judge.mean():.3f} | {method} | "
                      f"{r['coverage']:.3f} | {r['width']:.4f} | {r['bias']:+.3f} |")
    print("\n| n | runs | method | mean coverage | min coverage | mean width |")
    print("|---|---|---|---|---|---|")
    for n, by_method in pooled.items():
        for method, results in by_method.items():
            cov = [r["coverage"] for r in results]
            print(f"| {n} | {len(results)} | {method} | {np.mean(cov):.3f} | {min(cov):.3f} | "
                  f"{np.mean([r['width'] for r in results]):.4f} |")
    print(f"\n# {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

"""Width at equal budget: the sample `argue-judge sample` draws (inclusion probability by the judge's doubt,
judge.metrics.sampling.active_probabilities and pareto_draw) against a uniform one, coverage held.

Two populations, from the 350 dev items of calibration/embedded-dev/items.jsonl (supports_citation: the human
label, the embedded judge's thresholded verdict, and the confidence its model gave its verdict):

* dev: the 350 items themselves (N = 350);
* simulated: N = 1,000 items drawn with replacement from those 350 (label, verdict and confidence together, so
  the real relation between the judge's confidence and its errors is kept);
* calibrated judge: N = 1,000 confidences drawn from the 350, the verdict held to the threshold, and wrong with
  exactly the doubt the confidence states (the judge `argue-judge sample` assumes);
* calibrated judge, no threshold: N = 1,000 confidences drawn from the 350, verdicts half each way as the model
  wrote them, each wrong with probability 1 - confidence (a good judge, about 90% right, whose doubt varies).

Each unit's doubt is sqrt(decision_doubt(confidence, threshold)), as `argue-judge sample` computes it for a
verdict held to the fitted threshold; the floor is a quarter of
budget / N (the command's default). Per budget n, `--draws` samples of each design; the estimate is the PPI of
judge.metrics.ppi.ppi_batch with each design's probabilities (inverse-probability weighted for the active one).

    nice python -m benchmarks.active_sampling [--draws 2000] [--seeds 0 1]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from judge.metrics.ppi import ppi_batch
from judge.metrics.sampling import active_probabilities, decision_doubt

ROOT = Path(__file__).resolve().parents[1]
ITEMS = ROOT / "calibration" / "embedded-dev" / "items.jsonl"
THRESHOLDS = ROOT / "calibration" / "embedded-dev" / "thresholds.json"
BUDGETS = (20, 50, 100)


def load_items() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(human 0/1, judge 0/1 under the fitted threshold, the model's confidence in its verdict) per item."""
    rule = json.loads(THRESHOLDS.read_text(encoding="utf-8"))["decisions"]["supports_citation"]
    human, judge, confidence = [], [], []
    for line in ITEMS.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["decision"] != "supports_citation" or item["judge"] is None or item["confidence"] is None:
            continue
        human.append(float(item["human"] == "supported"))
        judge.append(float(item["judge"] == rule["verdict"] and item["confidence"] >= rule["threshold"]))
        confidence.append(float(item["confidence"]))
    return np.array(human), np.array(judge), np.array(confidence)


def pareto_masks(pi: np.ndarray, size: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """`draws` Pareto pi-ps samples of `size` units (judge.metrics.sampling.pareto_draw, vectorised)."""
    u = rng.random((draws, len(pi)))
    with np.errstate(divide="ignore"):
        odds = np.where(pi >= 1, -np.inf, (u / (1 - u)) / (pi / (1 - pi)))
    chosen = np.argpartition(odds, size - 1, axis=1)[:, :size]
    mask = np.zeros((draws, len(pi)), dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    return mask


def compare(human: np.ndarray, judge: np.ndarray, confidence: np.ndarray, threshold: float | None, n: int, draws: int,
            rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """design -> (coverage, mean width)."""
    units = len(human)
    truth = human.mean()
    doubt = np.sqrt(decision_doubt(confidence, threshold))
    out = {}
    for design, pi in (("uniform", np.full(units, n / units)),
                       ("active", active_probabilities(doubt, n, n / units / 4))):
        mask = pareto_masks(pi, n, draws, rng)
        b = ppi_batch(judge, human, mask, pi, 0.95)
        out[design] = (float(np.mean((b.low <= truth + 1e-12) & (truth - 1e-12 <= b.high))),
                       float(np.mean(b.high - b.low)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    started = time.perf_counter()
    human, judge, confidence = load_items()
    threshold = json.loads(THRESHOLDS.read_text(encoding="utf-8"))["decisions"]["supports_citation"]["threshold"]
    print(f"# {len(human)} dev items (prevalence {human.mean():.3f}, judge accuracy {np.mean(human == judge):.3f}); "
          f"{args.draws} draws per seed; seeds {args.seeds}")
    print("| population | N | budget n | uniform coverage | uniform width | active coverage | active width | "
          "width ratio | labels saved |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("dev items", "simulated from the dev items", "calibrated judge, dev confidences",
                 "calibrated judge, no threshold"):
        for n in BUDGETS:
            results = []
            for seed in args.seeds:
                rng = np.random.default_rng([seed, 21])
                t = threshold
                if name == "dev items":
                    h, j, c = human, judge, confidence
                elif name == "simulated from the dev items":
                    pick = rng.integers(len(human), size=1000)
                    h, j, c = human[pick], judge[pick], confidence[pick]
                elif name == "calibrated judge, dev confidences":   # wrong with the doubt its confidence states
                    c = confidence[rng.integers(len(human), size=1000)]
                    j = (c >= threshold).astype(float)
                    wrong = rng.random(1000) < decision_doubt(c, threshold)
                    h = np.where(wrong, 1 - j, j)
                else:   # verdicts as the model wrote them (half each way), wrong with probability 1 - confidence
                    c = confidence[rng.integers(len(human), size=1000)]
                    j = (rng.random(1000) < 0.5).astype(float)
                    h = np.where(rng.random(1000) < 1 - c, 1 - j, j)
                    t = None
                results.append(compare(h, j, c, t, n, args.draws, rng))
            uniform = [np.mean([r["uniform"][k] for r in results]) for k in (0, 1)]
            active = [np.mean([r["active"][k] for r in results]) for k in (0, 1)]
            ratio = active[1] / uniform[1]
            print(f"| {name} | {len(h)} | {n} | {uniform[0]:.3f} | {uniform[1]:.4f} | {active[0]:.3f} | "
                  f"{active[1]:.4f} | {ratio:.3f} | {1 - ratio ** 2:.0%} |", flush=True)
    print(f"\n# {time.perf_counter() - started:.0f} s (labels saved: 1 - ratio^2, width falling as 1/sqrt(n))")


if __name__ == "__main__":
    main()

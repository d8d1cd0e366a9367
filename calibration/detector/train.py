"""Fit the learned injection detector and write its weights (judge/data/injection-detector.json).

    python -m calibration.detector.make_data            # caches/detector/data.jsonl (seeded, deterministic)
    python -m calibration.detector.train [--data caches/detector/data.jsonl] [--out judge/data/injection-detector.json]

Needs the [train] extra (scikit-learn); the package itself scores with judge.defence.learned and no scikit-learn.
The model: the binary n-gram features of judge.defence.learned.features over the folded text
(judge.defence.injection.fold), kept when at least MIN_DF training texts have them (the MAX_FEATURES most frequent),
scaled to unit length, and an L2-regularised logistic regression (lbfgs, deterministic). Trained on the "train"
split only: the held-out report sentences and claims stay unseen for evaluate.py's false-flag rates. Weights are
rounded to ROUND decimals, and the threshold is the smallest score, on a grid of 0.01 from 0.5, at which the training
negatives are flagged at most at TARGET_FALSE_FLAGS (on this data: 0.5; a lower one, 0.21 at 0.2%, flagged 1.2% of
the held-out report sentences). Training twice on the same data writes the same bytes
(tests/test_learned_detector.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from judge.defence.injection import fold
from judge.defence.learned import WEIGHTS_FILE, LearnedDetector, features

REPO = Path(__file__).resolve().parents[2]

MIN_DF = 3
MAX_FEATURES = 30000
C = 4.0
ROUND = 5
TARGET_FALSE_FLAGS = 0.001
# A false flag costs more than a miss (the rules are there too): negatives weigh this much in the fit.
NEGATIVE_WEIGHT = 2.0


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def featurise(texts: Sequence[str]) -> list[set[str]]:
    """Each text's n-grams, as the package reads them (judge.defence.learned.features of the folded text)."""
    return [features(fold(text)) for text in texts]


def fit(grams: Sequence[set[str]], labels: Sequence[int]):
    """(vectoriser, classifier) fitted on featurised texts: scikit-learn's half of the model."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import normalize

    vectoriser = CountVectorizer(analyzer=_given, binary=True, min_df=MIN_DF, max_features=MAX_FEATURES, dtype=float)
    matrix = normalize(vectoriser.fit_transform(grams))
    classifier = LogisticRegression(C=C, solver="lbfgs", max_iter=5000, tol=1e-8,
                                    class_weight={0: NEGATIVE_WEIGHT, 1: 1.0})
    classifier.fit(matrix, list(labels))
    classifier.coef_ = classifier.coef_.round(ROUND)
    classifier.intercept_ = classifier.intercept_.round(ROUND)
    return vectoriser, classifier


def _given(grams: set[str]) -> list[str]:
    """The features in sorted order: the order of a set of strings changes with Python's hash seed, and with it the
    order of the sums in the sparse products, which moved weights in the fifth decimal between two runs."""
    return sorted(grams)


def sklearn_scores(vectoriser, classifier, grams: Sequence[set[str]]):
    """Probabilities scikit-learn gives (the reference judge.defence.learned reproduces)."""
    from sklearn.preprocessing import normalize

    return classifier.predict_proba(normalize(vectoriser.transform(grams)))[:, 1]


def pick_threshold(negative_scores) -> float:
    """The smallest threshold on a 0.01 grid (from 0.5) flagging at most TARGET_FALSE_FLAGS of the negatives."""
    for step in range(50, 100):
        threshold = step / 100
        if (negative_scores >= threshold).mean() <= TARGET_FALSE_FLAGS:
            return threshold
    return 0.99


def train(rows: Sequence[dict], grams: Sequence[set[str]] | None = None) -> dict:
    """The weights file's content, from the training rows of make_data.py (`grams`: their features, if known)."""
    grams = featurise([r["text"] for r in rows]) if grams is None else grams
    vectoriser, classifier = fit(grams, [r["label"] for r in rows])
    negatives = [g for g, r in zip(grams, rows) if r["label"] == 0]
    threshold = pick_threshold(sklearn_scores(vectoriser, classifier, negatives))
    vocabulary = vectoriser.get_feature_names_out()
    return {
        "about": "judge.defence.learned: logistic regression over binary char 3-5-grams and word 1-2-grams of the "
                 "folded text, L2-normalised; written by calibration/detector/train.py from the data of "
                 "calibration/detector/make_data.py",
        "settings": {"min_df": MIN_DF, "max_features": MAX_FEATURES, "C": C, "round": ROUND,
                     "target_false_flags": TARGET_FALSE_FLAGS,
                     "negative_weight": NEGATIVE_WEIGHT, "training_rows": len(rows)},
        "bias": float(classifier.intercept_[0]),
        "threshold": threshold,
        "weights": {str(g): float(w) for g, w in zip(vocabulary, classifier.coef_[0])},
    }


def detector_of(model: dict) -> LearnedDetector:
    """The package's detector for a weights file's content (evaluate.py scores left-out families with it)."""
    return LearnedDetector(model["weights"], model["bias"], model["threshold"], "unsaved")


def write(model: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n",
                    encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO / "caches" / "detector" / "data.jsonl")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    parser.add_argument("--leave-out", metavar="FAMILY", help="train without this attack family (the weights of a "
                        "leave-one-family-out detector, for measuring the flip rate under a family never seen)")
    args = parser.parse_args()
    model = train([r for r in read_rows(args.data) if r["split"] == "train" and r["family"] != args.leave_out])
    write(model, args.out)
    print(f"{len(model['weights'])} features, threshold {model['threshold']} -> {args.out} "
          f"({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()

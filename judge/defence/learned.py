"""The learned injection detector: a linear model over character and word n-grams that scores whether a piece of
text addresses the evaluator or asserts its own verification or grading, for the phrasings no rule was written for.

It reads the *folded* text (judge.defence.injection.fold: look-alikes, invisible characters and case already gone)
and is scored here in pure Python, with no scikit-learn at run time: the features are the distinct n-grams of
`features` found in the shipped vocabulary, each worth 1 before the vector is scaled to unit length (what
scikit-learn's CountVectorizer(binary=True) and Normalizer() compute), and the score is the logistic of the bias
plus the dot product with the weights. calibration/detector/train.py fits the weights with scikit-learn on the
data calibration/detector/make_data.py generates, and writes judge/data/injection-detector.json; tests check that
this scoring equals scikit-learn's and that training again gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from judge.errors import InputError

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "data" / "injection-detector.json"
CHAR_NGRAMS = (3, 4, 5)  # character n-gram lengths
_WORD = re.compile(r"\w+|[^\w\s]")


def features(folded: str) -> set[str]:
    """The distinct n-grams the model reads in a folded text: character n-grams (the text padded with a space either
    side) as they are, words and word pairs behind a tab ("\tw" + word, "\tb" + pair), which the folded text, its
    white space collapsed to single spaces, never contains."""
    padded = f" {folded} "
    grams = {padded[i:i + n] for n in CHAR_NGRAMS for i in range(len(padded) - n + 1)}
    words = _WORD.findall(folded)
    grams.update(["\tw" + w for w in words])
    grams.update(["\tb" + a + " " + b for a, b in zip(words, words[1:])])
    return grams


@dataclass(frozen=True)
class LearnedDetector:
    weights: dict[str, float]
    bias: float
    threshold: float  # a piece whose score reaches it is flagged
    version: str      # short hash of the weights file's bytes (named in the judge signature)

    def decision(self, folded: str) -> float:
        """The linear model's margin (scikit-learn's decision_function) for a folded text."""
        weights = self.weights
        found = [w for g in features(folded) if (w := weights.get(g)) is not None]
        if not found:
            return self.bias
        return self.bias + math.fsum(found) / math.sqrt(len(found))

    def score(self, folded: str) -> float:
        """The probability the model gives to `folded` being addressed to the evaluator."""
        return 1.0 / (1.0 + math.exp(-self.decision(folded)))


def load_detector(path: str | Path | None = None) -> LearnedDetector:
    """The detector of a weights file (the shipped judge/data/injection-detector.json by default)."""
    return _load(Path(path).resolve() if path is not None else WEIGHTS_FILE)


@cache
def _load(path: Path) -> LearnedDetector:
    try:
        raw = path.read_bytes()
        model = json.loads(raw)
        return LearnedDetector(dict(model["weights"]), float(model["bias"]), float(model["threshold"]),
                               hashlib.sha256(raw).hexdigest()[:8])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"cannot read the learned injection detector's weights: {error}", path) from None

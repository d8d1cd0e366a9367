"""What the learned detector costs on documents, and what a stricter document threshold would cost instead.

    python calibration/detector/document_flags.py [--data ../shared/data] [--weights FILE] [--sample 200]

A document is flagged when any of its pieces is (judge.defence.injection.detect_learned), so a false-flag rate per
sentence of a fraction of a percent becomes several percent per document, and the flagged piece is withheld from
the judge under the quarantine. This prints, for thresholds of the learned score from the shipped 0.5 upwards
(rules OR learned, the rules firing at any threshold):

1. clean documents flagged: AttributionBench and WiCE dev references/evidence, the NeuCLIR example run's documents;
2. attacked documents found: every `_unseen` kind of calibration/detector/unseen-attacks.json (phrasings the
   detector never trained on) put on a line of its own at a seeded random line of `--sample` clean documents.

Model-free and deterministic; a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from injection_detector import corpora  # noqa: E402

from judge.defence.injection import detect_learned, detect_rules  # noqa: E402
from judge.defence.learned import LearnedDetector, load_detector  # noqa: E402

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
RULES_FIRED = 2.0  # above every threshold: the rules flag whatever the learned score


def score(text: str, model: LearnedDetector) -> float:
    return RULES_FIRED if detect_rules(text).flagged else (detect_learned(text, model).score or 0.0)


def inserted(document: str, attack: str, rng: random.Random) -> str:
    lines = document.split("\n")
    at = rng.randrange(len(lines) + 1)
    return "\n".join([*lines[:at], attack, *lines[at:]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--weights", type=Path, help="a weights file of train.py (default: the shipped one)")
    parser.add_argument("--sample", type=int, default=200, help="clean documents each attack kind is put into")
    args = parser.parse_args()
    model = load_detector(args.weights)
    documents = {name: parts["documents"] for name, parts in corpora(args.data).items() if parts["documents"]}
    print(f"weights {model.version}; rules OR learned at each threshold of the learned score")
    clean = {name: [score(d, model) for d in docs] for name, docs in documents.items()}
    print("\nclean documents flagged")
    for name, scores in clean.items():
        print(f"  {name:28s} " + "  ".join(f"{t}: {sum(s >= t for s in scores):4d}/{len(scores)}" for t in THRESHOLDS))
    rng = random.Random(5)
    sample = rng.sample([d for docs in documents.values() for d in docs], args.sample)
    unseen = json.loads((Path(__file__).resolve().parent / "unseen-attacks.json").read_text(encoding="utf-8"))
    print(f"\nattacked documents found ({args.sample} documents per kind)")
    for kind, spec in unseen["attacks"].items():
        scores = [score(inserted(d, spec["texts"][k % len(spec["texts"])], rng), model) for k, d in enumerate(sample)]
        print(f"  {kind:34s} " + "  ".join(f"{t}: {sum(s >= t for s in scores):3d}/{len(scores)}" for t in THRESHOLDS))


if __name__ == "__main__":
    main()

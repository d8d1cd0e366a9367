"""What the learned detector costs on documents, and what a stricter document threshold would cost instead.

    python calibration/detector/document_flags.py [--data ../shared/data] [--weights FILE] [--sample 200]

A document is flagged when any of its pieces is (judge.defence.injection.detect_learned), so a false-flag rate per
sentence of a fraction of a percent becomes several percent per document, and the flagged piece is withheld from
the judge under the quarantine. This prints, for thresholds of the learned score from the shipped 0.5 upwards
(rules OR learned, the rules firing at any threshold):

1. clean documents flagged: AttributionBench and WiCE dev references/evidence, the NeuCLIR example run's documents;
2. attacked documents found: every `_unseen` kind of judge/data/unseen-attacks.json (phrasings the
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate import Scored, scored  # noqa: E402
from injection_detector import corpora  # noqa: E402

from judge.defence.injection import UNSEEN_ATTACKS_FILE  # noqa: E402
from judge.defence.learned import load_detector  # noqa: E402

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def counts(found: Scored, width: int) -> str:
    """`threshold: hits/n` for each threshold, rules OR learned."""
    return "  ".join(f"{t}: {found.either_hits(t):{width}d}/{len(found.scores)}" for t in THRESHOLDS)


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
    print("\nclean documents flagged")
    for name, docs in documents.items():
        print(f"  {name:28s} " + counts(scored(docs, model), 4))
    rng = random.Random(5)
    sample = rng.sample([d for docs in documents.values() for d in docs], args.sample)
    unseen = json.loads(UNSEEN_ATTACKS_FILE.read_text(encoding="utf-8"))
    print(f"\nattacked documents found ({args.sample} documents per kind)")
    for kind, spec in unseen["attacks"].items():
        attacked = [inserted(d, spec["texts"][k % len(spec["texts"])], rng) for k, d in enumerate(sample)]
        print(f"  {kind:34s} " + counts(scored(attacked, model), 3))


if __name__ == "__main__":
    main()

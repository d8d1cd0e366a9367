"""What the learned detector costs on documents, and what a stricter document threshold would cost instead.

    python -m calibration.detector.document_flags [--data ../shared/data] [--weights FILE] [--sample 200]

A document is flagged when any of its pieces is (judge.defence.injection.detect_learned), so a false-flag rate per
sentence of a fraction of a percent becomes several percent per document, and the flagged piece is withheld from
the judge under the quarantine. This prints, for thresholds of the learned score from the shipped 0.5 upwards
(rules OR learned, the rules firing at any threshold):

1. clean documents flagged: AttributionBench and WiCE dev references/evidence, the NeuCLIR example run's documents;
2. attacked documents found: every `_unseen` kind of judge/data/unseen-attacks.json (phrasings the
   detector never trained on) put on a line of its own at a seeded random line of `--sample` clean documents;
3. evidence withheld: the WiCE dev claims (fully or partly supported) whose annotated supporting sentences the
   quarantine would withhold, some of them or all (every annotated supporting set loses a sentence, so the judge
   is no longer shown any support the annotators found). This is the clean-judging cost of a false flag.

Model-free and deterministic; a few minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from benchmarks.injection_detector import corpora
from calibration.detector.evaluate import Scored, scored
from judge.defence.injection import MIN_LETTERS, UNSEEN_ATTACKS_FILE, detect_rules, fold
from judge.defence.learned import LearnedDetector, load_detector
from judge.defence.pieces import pieces
from judge.defence.quarantine import quarantine_document
from judge.settings import InjectionDetector

REPO = Path(__file__).resolve().parents[2]

THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def counts(found: Scored, width: int) -> str:
    """`threshold: hits/n` for each threshold, rules OR learned."""
    return "  ".join(f"{t}: {found.either_hits(t):{width}d}/{len(found.scores)}" for t in THRESHOLDS)


def inserted(document: str, attack: str, rng: random.Random) -> str:
    lines = document.split("\n")
    at = rng.randrange(len(lines) + 1)
    return "\n".join([*lines[:at], attack, *lines[at:]])


def line_scores(lines: list[str], model: LearnedDetector) -> Scored:
    """Each line of a document as the detector scores it inside the document: its best piece (a document's lines
    are never scored whole), and whether the rules flag it."""
    best = [max((model.score(fold(p)) for p in pieces(line) if sum(c.isalpha() for c in p) >= MIN_LETTERS),
                default=0.0) for line in lines]
    return Scored(best, [detect_rules(line).flagged for line in lines])


def evidence_withheld(rows: list[dict], model: LearnedDetector) -> dict[float, tuple[int, int, int]]:
    """Per threshold: claims whose document has a line withheld, claims with some supporting sentence withheld, and
    claims with every supporting set hit. Each line is scored by its best piece, which is what the quarantine
    withholds; it also withholds a run of pieces that is flagged only together, and the tags around a flagged piece
    (judge.defence.quarantine), which this does not count: `quarantined_evidence` counts exactly, at the shipped
    threshold."""
    found = {t: [0, 0, 0] for t in THRESHOLDS}
    for row in rows:
        lines = line_scores(row["evidence"], model)
        for t in THRESHOLDS:
            hit = {k for k, (score, rule) in enumerate(zip(lines.scores, lines.rules)) if rule or score >= t}
            for k, count in enumerate(_touched(row, hit)):
                found[t][k] += count
    return {t: (any_line, some, every) for t, (any_line, some, every) in found.items()}


def quarantined_evidence(rows: list[dict], detector: InjectionDetector = "rules+learned") -> tuple[int, int, int]:
    """evidence_withheld's three counts at the shipped threshold, from what
    judge.defence.quarantine.quarantine_document withholds of each whole document under `detector` (the learned
    detector's cost: rules+learned; the default adds the script check, calibration/detector/script_flags.py)."""
    found = [0, 0, 0]
    for row in rows:
        withheld = quarantine_document("\n".join(row["evidence"]), detector).withheld
        # A line is hit when one of its pieces was withheld (compared whole: a withheld "Iraq" is not in every line
        # that names Iraq).
        hit = {k for k, line in enumerate(row["evidence"]) if {p.strip() for p in pieces(line)} & set(withheld)}
        for k, count in enumerate(_touched(row, hit)):
            found[k] += count
    return found[0], found[1], found[2]


def _touched(row: dict, hit: set[int]) -> tuple[bool, bool, bool]:
    """(a line withheld, some supporting set touched, every supporting set touched) of a claim."""
    touched = [bool(hit & set(s)) for s in row["supporting_sentences"] if s]
    return bool(hit), any(touched), all(touched)


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
    wice = args.data / "wice" / "claim-dev.jsonl"
    if wice.exists():
        rows = [json.loads(line) for line in wice.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [r for r in rows if r["label"] != "not_supported" and any(r.get("supporting_sentences") or [])]
        print(f"\nevidence withheld: WiCE dev claims with annotated support ({len(rows)}), a line of the document / "
              "some supporting sentence / every supporting set")
        print("  " + "  ".join(f"{t}: {line:3d} / {some:3d} / {every:3d}"
                               for t, (line, some, every) in evidence_withheld(rows, model).items()))
        if args.weights is None:
            line, some, every = quarantined_evidence(rows)
            print(f"  quarantine_document, shipped threshold, rules+learned: {line} / {some} / {every}")
    else:
        print(f"\nevidence withheld: skipped, {wice} is missing")


if __name__ == "__main__":
    main()

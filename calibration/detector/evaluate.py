"""How the learned injection detector does on what it was never trained on.

    python -m calibration.detector.evaluate [--data caches/detector/data.jsonl] [--minilm 400] [--ceiling]
                                            [--out calibration/detector/results.json]

1. Leave one family out: for every attack family of make_data.py, a detector is trained (train.py's procedure,
   threshold included) on the training rows of every other family and the negatives, and its recall is read on
   all rows of the family it never saw. Recall is given for the learned detector alone, the rules alone and
   either (what `eval` uses: judge.defence.injection.detect), with the number of rows.
2. False flags of the shipped detector (judge/data/injection-detector.json) on the negatives of the "test" split,
   never trained on: NeuCLIR report sentences of held-out topics, AttributionBench and WiCE dev claims, sentences
   of their documents.
3. The blind held-out file benchmarks/data/heldout-attacks.json (never used for training): each sentence kind
   appended to the held-out report sentences and claims, each document kind put before the held-out document
   sentences, cycling through the kind's texts; and its "benign" look-alikes.
4. (--minilm N) The same leave-one-family-out recall and false-flag rates for a logistic regression on the
   all-MiniLM-L6-v2 sentence embeddings (the [qa] extra), beside the n-gram model on the same rows, whole texts
   only, on a sample of N rows per family and 8 N negatives (embedding every row takes too long on this machine).
5. (--ceiling, "threshold_ceiling") Whether any threshold reaches the targets: for each leave-one-family-out model,
   and for the shipped model on the held-out file's kinds, recall (either) and the false flags of the "test"
   negatives at its own threshold, at the ORACLE threshold (the lowest one at which rules OR learned flag at most
   FALSE_FLAG_LIMITS of each test source: picked on the very negatives it is read on, so its recall is an upper
   bound for this model) and at the lowest thresholds flagging at most 2% and 5% of the report sentences. Scores
   are compared as detect_learned reports them (4 decimals), thresholds on that grid.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from calibration.detector.make_data import FAMILIES
from calibration.detector.train import (
    C,
    detector_of,
    featurise,
    fit,
    pick_threshold,
    read_rows,
    sklearn_scores,
    train,
)
from judge.defence.injection import detect_learned, detect_rules, load_attacks
from judge.defence.learned import LearnedDetector, load_detector

REPO = Path(__file__).resolve().parents[2]

HELDOUT_FILE = REPO / "benchmarks" / "data" / "heldout-attacks.json"


def rate(hits: int, n: int) -> dict:
    return {"hits": hits, "n": n, "rate": round(hits / n, 4) if n else None}


# The targets for false flags of rules OR learned on the held-out negatives, by source.
FALSE_FLAG_LIMITS = {"report_sentence": 0.005, "attributionbench_claim": 0.01, "wice_claim": 0.01}
# Shares of report sentences flagged at which the ceiling also reads recall (the trade-off curve's shape).
REPORT_SENTENCE_SHARES = (0.02, 0.05)
SCORE_GRID = 10_000  # detect_learned reports scores to 4 decimals: thresholds k / SCORE_GRID


def leave_one_family_out(rows: list[dict], grams: list[list[str]], only: Sequence[str] = (),
                         negatives: dict | None = None) -> dict:
    """Recall on each attack family of the data (or on `only` these) by a detector that never saw it; with
    `negatives` (of scored_negatives), each family's entry has its threshold ceiling under "ceiling"."""
    present = {r["family"] for r in rows if r["label"]}
    table = {}
    for family in [f for f in FAMILIES if f in present and (not only or f in only)]:
        keep = [k for k, r in enumerate(rows) if r["split"] == "train" and r["family"] != family]
        model = train([rows[k] for k in keep], [grams[k] for k in keep])
        detector = detector_of(model)
        left_out = [r["text"] for r in rows if r["family"] == family]
        learned = [detect_learned(t, detector).flagged for t in left_out]
        rules = [detect_rules(t).flagged for t in left_out]
        table[family] = {"learned": rate(sum(learned), len(left_out)), "rules": rate(sum(rules), len(left_out)),
                         "either": rate(sum(a or b for a, b in zip(learned, rules)), len(left_out)),
                         "threshold": model["threshold"]}
        print(f"  {family:20s} n={len(left_out)} learned {table[family]['learned']['rate']:.3f} "
              f"rules {table[family]['rules']['rate']:.3f} either {table[family]['either']['rate']:.3f}", flush=True)
        if negatives is not None:
            ceiling = threshold_ceiling(scored(left_out, detector, rules),
                                        scored_negatives(rows, detector, negatives), model["threshold"])
            table[family]["ceiling"] = ceiling
            print(f"  {'':20s} ceiling: " + ", ".join(
                f"{name} {point['threshold']} {point['recall']['hits']}/{point['recall']['n']}" if point else
                f"{name} none" for name, point in ceiling.items() if name != "n"), flush=True)
    return table


def held_out_negatives(rows: list[dict], source: str) -> list[str]:
    """The "test"-split negatives of one source (never trained on)."""
    return [r["text"] for r in rows if r["family"] == source and r["split"] == "test"]


def false_flags(rows: list[dict], detector: LearnedDetector | None = None) -> dict:
    """False flags on the held-out negatives, of the shipped learned detector (or `detector`), the rules and
    either."""
    table = {}
    for source in ("report_sentence", "attributionbench_claim", "wice_claim", "document_sentence", "document_piece"):
        texts = held_out_negatives(rows, source)
        learned = [detect_learned(t, detector).flagged for t in texts]
        rules = [detect_rules(t).flagged for t in texts]
        table[source] = {"learned": rate(sum(learned), len(texts)), "rules": rate(sum(rules), len(texts)),
                         "either": rate(sum(a or b for a, b in zip(learned, rules)), len(texts)),
                         "examples": [t for t, hit in zip(texts, learned) if hit][:5]}
    return table


def heldout_attacked(rows: list[dict]) -> dict[str, list[str]]:
    """Each kind of the held-out file applied to the held-out report sentences and claims (sentence kinds) or
    document sentences (document kinds)."""
    sentences = [r["text"] for r in rows if r["split"] == "test" and r["family"] in
                 ("report_sentence", "attributionbench_claim", "wice_claim")]
    documents = held_out_negatives(rows, "document_sentence")
    attacked = {}
    for kind, attack in load_attacks(HELDOUT_FILE).items():
        targets = documents if attack.target == "document" else sentences
        attacked[kind] = [attack.apply(t, claim=t, doc_id="doc-1", variant=i) for i, t in enumerate(targets)]
    return attacked


def heldout_file(rows: list[dict], detector: LearnedDetector | None = None) -> dict:
    table = {}
    for kind, attacked in heldout_attacked(rows).items():
        learned = [detect_learned(t, detector).flagged for t in attacked]
        rules = [detect_rules(t).flagged for t in attacked]
        table[kind] = {"learned": rate(sum(learned), len(attacked)), "rules": rate(sum(rules), len(attacked)),
                       "either": rate(sum(a or b for a, b in zip(learned, rules)), len(attacked))}
    benign = json.loads(HELDOUT_FILE.read_text(encoding="utf-8"))["benign"]
    learned = [detect_learned(t, detector).flagged for t in benign]
    rules = [detect_rules(t).flagged for t in benign]
    table["benign (false flags)"] = {"learned": rate(sum(learned), len(benign)), "rules": rate(sum(rules), len(benign)),
                                     "either": rate(sum(a or b for a, b in zip(learned, rules)), len(benign))}
    return table


class Scored(NamedTuple):
    """Texts as the two detectors see them: the learned score (detect_learned's, 4 decimals) and the rules' flag."""

    scores: list[float]
    rules: list[bool]

    def either_hits(self, threshold: float) -> int:
        """How many rules OR learned flag when the learned threshold is `threshold`."""
        return sum(rule or score >= threshold for score, rule in zip(self.scores, self.rules))


def scored(texts: Sequence[str], detector: LearnedDetector | None = None, rules: list[bool] | None = None) -> Scored:
    """`texts` scored by `detector` (the shipped one by default); `rules`: their rule flags, if known."""
    detections = [detect_learned(t, detector) for t in texts]
    return Scored([d.score if d.score is not None else 0.0 for d in detections],  # None: no span long enough
                  rules if rules is not None else [detect_rules(t).flagged for t in texts])


def scored_negatives(rows: list[dict], detector: LearnedDetector | None = None,
                     known: dict[str, Scored] | None = None) -> dict[str, Scored]:
    """The held-out negatives of each source of FALSE_FLAG_LIMITS scored by `detector` (with the rule flags of
    `known`, an earlier result, since they do not depend on the detector)."""
    return {source: scored(held_out_negatives(rows, source), detector, known[source].rules if known else None)
            for source in FALSE_FLAG_LIMITS}


def lowest_threshold(negatives: dict[str, Scored], limits: dict[str, float]) -> float | None:
    """The lowest threshold on the SCORE_GRID at which rules OR learned flag at most limits[source] of each
    source's negatives; None when the rules alone exceed a limit. Flags only fall as the threshold rises, so a
    binary search finds it."""

    def within(step: int) -> bool:
        return all(negatives[source].either_hits(step / SCORE_GRID) <= limit * len(negatives[source].rules)
                   for source, limit in limits.items())

    low, high = 0, SCORE_GRID + 1  # above every score (at most 1.0): only the rules flag
    if not within(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if within(middle):
            high = middle
        else:
            low = middle + 1
    return high / SCORE_GRID


def reading(threshold: float | None, attacks: Scored, negatives: dict[str, Scored]) -> dict | None:
    """Recall (either) on the attacks and false flags (either) on each source's negatives at `threshold`."""
    if threshold is None:
        return None
    return {"threshold": threshold, "recall": rate(attacks.either_hits(threshold), len(attacks.rules)),
            "false_flags": {source: rate(texts.either_hits(threshold), len(texts.rules))
                            for source, texts in negatives.items()}}


def threshold_ceiling(attacks: Scored, negatives: dict[str, Scored], own_threshold: float) -> dict:
    """Recall and false flags of one model at its own threshold, at the oracle threshold (the lowest within
    FALSE_FLAG_LIMITS on these very negatives: an upper bound of what any threshold reaches) and at the lowest
    thresholds flagging at most each of REPORT_SENTENCE_SHARES of the report sentences."""
    points = {"own": own_threshold, "oracle": lowest_threshold(negatives, FALSE_FLAG_LIMITS)}
    for share in REPORT_SENTENCE_SHARES:
        points[f"report_sentences_{share:.0%}"] = lowest_threshold(negatives, {"report_sentence": share})
    return {"n": len(attacks.rules), **{name: reading(t, attacks, negatives) for name, t in points.items()}}


def shipped_ceiling(rows: list[dict], negatives: dict[str, Scored], detector: LearnedDetector) -> dict:
    """threshold_ceiling of the shipped detector (trained on every family) on each kind of the held-out file."""
    return {kind: threshold_ceiling(scored(attacked, detector), negatives, detector.threshold)
            for kind, attacked in heldout_attacked(rows).items()}


def embeddings_comparison(rows: list[dict], grams: list[list[str]], per_family: int) -> dict:
    """Whole-text recall per left-out family and false flags, n-gram model against MiniLM embeddings."""
    from sklearn.linear_model import LogisticRegression

    from judge.baselines.readers.embedding import load_sentence_model

    rng = random.Random(24)
    by_family: dict[str, list[int]] = defaultdict(list)
    for k, r in enumerate(rows):
        by_family[(r["family"] if r["label"] else "negative") + ("" if r["label"] else "/" + r["split"])].append(k)
    chosen = {f: sorted(rng.sample(ks, min(len(ks), per_family if f in FAMILIES else 4 * per_family)))
              for f, ks in sorted(by_family.items())}
    index = [k for ks in chosen.values() for k in ks]
    model = load_sentence_model()
    start = time.perf_counter()
    vectors = dict(zip(index, model.encode([rows[k]["text"] for k in index], batch_size=64,
                                           normalize_embeddings=True)))
    seconds = time.perf_counter() - start
    negatives_train, negatives_test = chosen["negative/train"], chosen["negative/test"]
    table: dict = {"rows_embedded": len(index), "embedding_seconds": round(seconds, 1), "families": {}}
    for family in FAMILIES:
        train_rows = negatives_train + [k for f in FAMILIES if f != family for k in chosen[f]]
        labels = [rows[k]["label"] for k in train_rows]
        embedded = LogisticRegression(C=C, max_iter=5000).fit([vectors[k] for k in train_rows], labels)
        threshold = pick_threshold(embedded.predict_proba([vectors[k] for k in negatives_train])[:, 1])
        vectoriser, classifier = fit([grams[k] for k in train_rows], labels)
        ngram_threshold = pick_threshold(sklearn_scores(vectoriser, classifier, [grams[k] for k in negatives_train]))
        test = chosen[family]
        table["families"][family] = {
            "n": len(test), "n_negatives_test": len(negatives_test),
            "minilm_recall": float((embedded.predict_proba([vectors[k] for k in test])[:, 1] >= threshold).mean()),
            "minilm_false_flags": float(
                (embedded.predict_proba([vectors[k] for k in negatives_test])[:, 1] >= threshold).mean()),
            "ngram_recall": float(
                (sklearn_scores(vectoriser, classifier, [grams[k] for k in test]) >= ngram_threshold).mean()),
            "ngram_false_flags": float((sklearn_scores(vectoriser, classifier, [grams[k] for k in negatives_test])
                                        >= ngram_threshold).mean()),
        }
        print(f"  {family:20s} {table['families'][family]}", flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO / "caches" / "detector" / "data.jsonl")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results.json")
    parser.add_argument("--minilm", type=int, default=0, help="rows per family for the embeddings comparison")
    parser.add_argument("--skip-lofo", action="store_true", help="only the shipped detector's figures")
    parser.add_argument("--families", help="leave out only these families (comma-separated; default: every one)")
    parser.add_argument("--weights", type=Path, help="a weights file of train.py to measure instead of the shipped one")
    parser.add_argument("--ceiling", action="store_true",
                        help="also the recall each model reaches at the oracle threshold (\"threshold_ceiling\")")
    args = parser.parse_args()
    rows = read_rows(args.data)
    results: dict = json.loads(args.out.read_text()) if args.out.exists() else {}
    detector = load_detector(args.weights)
    results["detector_version"] = detector.version
    print(f"false flags of the detector {detector.version}", flush=True)
    results["false_flags"] = false_flags(rows, detector)
    print(json.dumps({k: v["either"] for k, v in results["false_flags"].items()}), flush=True)
    results["heldout_file"] = heldout_file(rows, detector)
    print(json.dumps({k: v["either"] for k, v in results["heldout_file"].items()}), flush=True)
    test_templates = [r["text"] for r in rows if r["label"] and r["split"] == "test"]
    results["test_templates"] = rate(sum(detect_learned(t, detector).flagged for t in test_templates),
                                     len(test_templates))
    negatives = scored_negatives(rows, detector) if args.ceiling else None
    if args.ceiling:
        ceilings = results.setdefault("threshold_ceiling", {})
        ceilings["limits"] = FALSE_FLAG_LIMITS
        ceilings["shipped_heldout_file"] = shipped_ceiling(rows, negatives, detector)
        print("oracle recall of the shipped detector on the held-out file: " + json.dumps(
            {kind: entry["oracle"] and entry["oracle"]["recall"]
             for kind, entry in ceilings["shipped_heldout_file"].items()}), flush=True)
    if not args.skip_lofo or args.minilm:
        grams = featurise([r["text"] for r in rows])
    if not args.skip_lofo:
        print("leave one family out", flush=True)
        only = args.families.split(",") if args.families else ()
        if args.ceiling:
            # One family at a time, in the order asked, each written at once: a run cut short keeps what it read.
            for family in only or FAMILIES:
                entry = leave_one_family_out(rows, grams, [family], negatives).get(family)
                if entry is not None:
                    ceilings.setdefault("leave_one_family_out", {})[family] = entry.pop("ceiling")
                    results.setdefault("leave_one_family_out", {})[family] = entry
                    write_results(results, args.out)
        else:
            results["leave_one_family_out"] = leave_one_family_out(rows, grams, only)
    if args.minilm:
        print("MiniLM embeddings against n-grams", flush=True)
        results["minilm"] = embeddings_comparison(rows, grams, args.minilm)
    write_results(results, args.out)
    print(f"-> {args.out}")


def write_results(results: dict, path: Path) -> None:
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""How the learned injection detector does on what it was never trained on.

    python calibration/detector/evaluate.py [--data caches/detector/data.jsonl] [--minilm 400]
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
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_data import FAMILIES, families  # noqa: E402
from train import (  # noqa: E402
    C,
    detector_of,
    featurise,
    fit,
    pick_threshold,
    read_rows,
    sklearn_scores,
    train,
)

from judge.defence.injection import detect_learned, detect_rules, load_attacks  # noqa: E402
from judge.defence.learned import LearnedDetector, load_detector  # noqa: E402

HELDOUT_FILE = REPO / "benchmarks" / "data" / "heldout-attacks.json"


def rate(hits: int, n: int) -> dict:
    return {"hits": hits, "n": n, "rate": round(hits / n, 4) if n else None}


def leave_one_family_out(rows: list[dict], grams: list[list[str]], only: Sequence[str] = ()) -> dict:
    """Recall on each attack family of the data (or on `only` these) by a detector that never saw it."""
    present = {r["family"] for r in rows if r["label"]}
    table = {}
    for family in [f for f in families(extended=True) if f in present and (not only or f in only)]:
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
    return table


def false_flags(rows: list[dict], detector: LearnedDetector | None = None) -> dict:
    """False flags on the held-out negatives, of the shipped learned detector (or `detector`), the rules and
    either."""
    table = {}
    for source in ("report_sentence", "attributionbench_claim", "wice_claim", "document_sentence", "document_piece"):
        texts = [r["text"] for r in rows if r["family"] == source and r["split"] == "test"]
        learned = [detect_learned(t, detector).flagged for t in texts]
        rules = [detect_rules(t).flagged for t in texts]
        table[source] = {"learned": rate(sum(learned), len(texts)), "rules": rate(sum(rules), len(texts)),
                         "either": rate(sum(a or b for a, b in zip(learned, rules)), len(texts)),
                         "examples": [t for t, hit in zip(texts, learned) if hit][:5]}
    return table


def heldout_file(rows: list[dict], detector: LearnedDetector | None = None) -> dict:
    sentences = [r["text"] for r in rows if r["split"] == "test" and r["family"] in
                 ("report_sentence", "attributionbench_claim", "wice_claim")]
    documents = [r["text"] for r in rows if r["split"] == "test" and r["family"] == "document_sentence"]
    table = {}
    for kind, attack in load_attacks(HELDOUT_FILE).items():
        targets = documents if attack.target == "document" else sentences
        attacked = [attack.apply(t, claim=t, doc_id="doc-1", variant=i) for i, t in enumerate(targets)]
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
    if not args.skip_lofo or args.minilm:
        grams = featurise([r["text"] for r in rows])
    if not args.skip_lofo:
        print("leave one family out", flush=True)
        only = args.families.split(",") if args.families else ()
        results["leave_one_family_out"] = leave_one_family_out(rows, grams, only)
    if args.minilm:
        print("MiniLM embeddings against n-grams", flush=True)
        results["minilm"] = embeddings_comparison(rows, grams, args.minilm)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()

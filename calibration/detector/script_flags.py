"""What the script check (judge.defence.script) flags: real text, the flip items under every held-out family, and
the blind held-out files.

    python calibration/detector/script_flags.py [--data ../shared/data] [--out calibration/detector/script-flags.json]

1. False flags on all the real text at hand, none of it seen by the check (it has no training): NeuCLIR 2024
   report sentences, the English translations of the example run's cited documents, AttributionBench dev claims
   and references, WiCE dev claims and evidence pages. Each text is checked whole, as eval checks a sentence or a
   document.
2. The flip items (flip-inputs/sample-ids.txt): for every "_unseen" kind and every one of its texts, on each of the
   100 claims, and on each item's documents, whether the default detector (rules+learned+script) decides otherwise
   than rules+learned. Where it never does, the judge is shown the same text under both, and a flip measured under
   rules+learned stands for the default too.
3. The blind held-out files (benchmarks/data/heldout-attacks*.json): each sentence kind appended to the first
   SENTENCES real report sentences, recall under rules, rules+learned and the default; their benign look-alikes
   alone and appended to a report sentence (where the check flags any other script, benign or not).
4. Evidence withheld: of the WiCE dev claims whose annotators marked supporting sentences, how many have a line of
   their document withheld by quarantine_document, some supporting sentence, and every supporting set, under the
   default detector and under rules+learned (document_flags.py's third table).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from document_flags import quarantined_evidence  # noqa: E402

from judge.calibration.importers import read_attributionbench, read_wice  # noqa: E402
from judge.defence.injection import UNSEEN_ATTACKS_FILE, detect_script, detect_uncached, load_attacks  # noqa: E402
from judge.settings import INJECTION_DETECTORS  # noqa: E402

HELDOUT_FILES = sorted((REPO / "benchmarks" / "data").glob("heldout-attacks*.json"))
FLIP_IDS = Path(__file__).resolve().parent / "flip-inputs" / "sample-ids.txt"
SENTENCES = 240


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def real_texts(data: Path) -> dict[str, list[str]]:
    topics = json.loads((data / "neuclir24" / "mini-test.report-sentences.json").read_text(encoding="utf-8"))
    bench = jsonl(data / "attributionbench" / "dev.jsonl")
    wice = jsonl(data / "wice" / "claim-dev.jsonl")
    return {
        "neuclir_report_sentences": [s for runs in topics.values() for run in runs.values() for s in run.values()
                                     if s.strip()],
        "neuclir_example_documents": [d["text"] for d in jsonl(data / "neuclir24" / "example-run" / "docs.jsonl")],
        "attributionbench_claims": [r["claim"] for r in bench],
        "attributionbench_references": [ref for r in bench for ref in r["references"] if ref.strip()],
        "wice_claims": [r["claim"] for r in wice],
        "wice_evidence_pages": ["\n".join(r["evidence"]) for r in wice],
    }


def count(hits: Iterable[bool]) -> dict:
    found = list(hits)
    return {"hits": sum(found), "n": len(found)}


def false_flags(texts: dict[str, list[str]]) -> dict:
    table = {}
    for source, found in texts.items():
        flagged = [(t, d.matched) for t in found if (d := detect_script(t))]
        table[source] = {"hits": len(flagged), "n": len(found), "withheld": [m for _, m in flagged]}
        print(f"  {source:28s} {len(flagged)}/{len(found)}", flush=True)
    return table


def flip_items(data: Path) -> dict:
    items = {i.item_id: i for i in read_attributionbench(data / "attributionbench" / "dev.jsonl").items}
    items.update({i.item_id: i for i in read_wice(data / "wice" / "claim-dev.jsonl", partial="strict").items})
    chosen = [items[i] for i in FLIP_IDS.read_text().split()]

    def differs(text: str) -> bool:
        return detect_uncached(text, "rules+learned").flagged != detect_uncached(text).flagged

    table = {"documents": count(differs(document) for item in chosen for document in item.documents)}
    for kind, attack in load_attacks(UNSEEN_ATTACKS_FILE).items():
        table[kind] = count(differs(attack.apply(item.claim, variant=v))
                            for item in chosen for v in range(len(attack.texts)))
        print(f"  {kind:34s} detections changed {table[kind]['hits']}/{table[kind]['n']}", flush=True)
    return table


def heldout(sentences: list[str]) -> dict:
    table = {}
    for path in HELDOUT_FILES:
        for kind, attack in load_attacks(path).items():
            if attack.target != "sentence":
                continue
            attacked = [attack.apply(s, variant=k) for k, s in enumerate(sentences)]
            table[kind] = {detector: count(detect_uncached(t, detector).flagged for t in attacked)
                           for detector in INJECTION_DETECTORS}
            print(f"  {kind:42s} " + "  ".join(f"{d} {c['hits']}/{c['n']}" for d, c in table[kind].items()),
                  flush=True)
        benign = json.loads(path.read_text(encoding="utf-8"))["benign"]
        appended = [f"{sentences[k % len(sentences)]} {text}" for k, text in enumerate(benign)]
        for name, texts in ((f"{path.stem}: benign", benign), (f"{path.stem}: benign after a sentence", appended)):
            table[name] = {detector: count(detect_uncached(t, detector).flagged for t in texts)
                           for detector in INJECTION_DETECTORS}
            print(f"  {name:42s} " + "  ".join(f"{d} {c['hits']}/{c['n']}" for d, c in table[name].items()),
                  flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "script-flags.json")
    args = parser.parse_args()
    texts = real_texts(args.data)
    print("false flags of the script check on real text", flush=True)
    results = {"false_flags": false_flags(texts)}
    print("flip items: detections rules+learned+script changes against rules+learned", flush=True)
    results["flip_items"] = flip_items(args.data)
    print(f"blind held-out files, sentence kinds appended to {SENTENCES} report sentences", flush=True)
    results["heldout"] = heldout(texts["neuclir_report_sentences"][:SENTENCES])
    rows = [r for r in jsonl(args.data / "wice" / "claim-dev.jsonl")
            if r["label"] != "not_supported" and any(r.get("supporting_sentences") or [])]
    print(f"evidence withheld: WiCE dev claims with annotated support ({len(rows)}), a line of the document / some "
          "supporting sentence / every supporting set", flush=True)
    results["evidence_withheld"] = {"claims": len(rows)}
    for detector in INJECTION_DETECTORS[:2]:
        line, some, every = quarantined_evidence(rows, detector)
        results["evidence_withheld"][detector] = {"a_line": line, "some_support": some, "all_support": every}
        print(f"  {detector:22s} {line} / {some} / {every}", flush=True)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()

"""What the script check (judge.defence.script) withholds: real text, the flip items under every held-out family,
the blind held-out files, honest mixed-script text. It flags nothing (a sentence's flags and penalties come from the
rules and the learned detector alone): under the default stack the quarantine withholds each piece in a script
foreign to its text.

    python -m calibration.detector.script_flags [--data ../shared/data] [--out calibration/detector/script-flags.json]

1. Real text at hand, none of it seen by the check (it has no training): NeuCLIR 2024 report sentences, the English
   translations of the example run's cited documents, AttributionBench dev claims and references, WiCE dev claims
   and evidence pages; how many have a piece the check would withhold, and which. Only a few of these texts have any
   letter beyond Latin (counted too), so this says little about text that quotes other scripts: see 4.
2. The flip items (flip-inputs/sample-ids.txt): for every "_unseen" kind and every one of its texts, on each of the
   100 claims, and on each item's documents, whether the default stack shows the judge another text than
   rules+learned. Where it never does, a flip measured under rules+learned stands for the default too.
3. The blind held-out files (benchmarks/data/heldout-attacks*.json): each sentence kind appended to the first
   SENTENCES real report sentences: how often each stack flags it, and how often the quarantine gives back exactly
   the sentence (the attack withheld, nothing else); their benign look-alikes alone and appended to a report
   sentence: flagged, and changed by the quarantine.
4. Honest mixed-script text (benchmarks/data/mixed-script-honest.json, written blind): English sentences with names,
   titles and quotes in other scripts, sentences in other languages with Latin in them, and documents of both
   kinds: flagged, and changed by each stack's quarantine (with what the default withholds).
5. Evidence withheld: of the WiCE dev claims whose annotators marked supporting sentences, how many have a line of
   their document withheld by quarantine_document, some supporting sentence, and every supporting set, under the
   default and under rules+learned (document_flags.py's third table).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

from calibration.detector.document_flags import quarantined_evidence
from calibration.detector.evaluate import rate
from calibration.detector.make_data import jsonl
from judge.calibration.importers import read_attributionbench, read_wice
from judge.defence.injection import UNSEEN_ATTACKS_FILE, detect_uncached, load_attacks
from judge.defence.quarantine import quarantine_document, quarantine_sentence
from judge.defence.script import foreign_piece, may_have_foreign_pieces
from judge.settings import INJECTION_DETECTORS

REPO = Path(__file__).resolve().parents[2]

HELDOUT_FILES = sorted((REPO / "benchmarks" / "data").glob("heldout-attacks*.json"))
HONEST_FILE = REPO / "benchmarks" / "data" / "mixed-script-honest.json"
FLIP_IDS = Path(__file__).resolve().parent / "flip-inputs" / "sample-ids.txt"
SENTENCES = 240


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
    """evaluate.py's rate of these flags."""
    found = list(hits)
    return rate(sum(found), len(found))


def withheld_from_real_text(texts: dict[str, list[str]]) -> dict:
    table = {}
    for source, found in texts.items():
        withheld = [piece for t in found if (piece := foreign_piece(t)) is not None]
        other = sum(may_have_foreign_pieces(t) for t in found)
        table[source] = {"hits": len(withheld), "n": len(found), "with_a_letter_beyond_latin": other,
                         "withheld": withheld}
        print(f"  {source:28s} {len(withheld)}/{len(found)} (with a letter beyond Latin: {other})", flush=True)
    return table


def flip_items(data: Path) -> dict:
    items = {i.item_id: i for i in read_attributionbench(data / "attributionbench" / "dev.jsonl").items}
    items.update({i.item_id: i for i in read_wice(data / "wice" / "claim-dev.jsonl", partial="strict").items})
    chosen = [items[i] for i in FLIP_IDS.read_text().split()]

    def differs(text: str, quarantine=quarantine_sentence) -> bool:
        return quarantine(text, "rules+learned") != quarantine(text)

    table = {"documents": count(differs(d, quarantine_document) for item in chosen for d in item.documents)}
    for kind, attack in load_attacks(UNSEEN_ATTACKS_FILE).items():
        table[kind] = count(differs(attack.apply(item.claim, variant=v))
                            for item in chosen for v in range(len(attack.texts)))
        print(f"  {kind:34s} shown otherwise {table[kind]['hits']}/{table[kind]['n']}", flush=True)
    print(f"  {'their documents':34s} shown otherwise {table['documents']['hits']}/{table['documents']['n']}",
          flush=True)
    return table


def by_stack(texts: list[str], clean: list[str] | None = None, documents: bool = False) -> dict:
    """Per detector stack: flagged, and changed by the quarantine (or, given `clean`, given back exactly clean)."""
    quarantine = quarantine_document if documents else quarantine_sentence
    table = {}
    for detector in INJECTION_DETECTORS:
        shown = [quarantine(t, detector).shown for t in texts]
        table[detector] = {"flagged": count(detect_uncached(t).flagged for t in texts)}
        if clean is None:
            table[detector]["changed"] = count(s != t for s, t in zip(shown, texts))
        else:
            table[detector]["given_back_clean"] = count(s == c.strip() for s, c in zip(shown, clean))
    return table


def printed_row(name: str, entry: dict) -> str:
    return f"  {name:44s} " + "  ".join(
        f"{d}: " + ", ".join(f"{k} {v['hits']}/{v['n']}" for k, v in entry[d].items()) for d in INJECTION_DETECTORS)


def heldout(sentences: list[str]) -> dict:
    table = {}
    for path in HELDOUT_FILES:
        for kind, attack in load_attacks(path).items():
            if attack.target != "sentence":
                continue
            table[kind] = by_stack([attack.apply(s, variant=k) for k, s in enumerate(sentences)], sentences)
            print(printed_row(kind, table[kind]), flush=True)
        benign = json.loads(path.read_text(encoding="utf-8"))["benign"]
        appended = [f"{sentences[k % len(sentences)]} {text}" for k, text in enumerate(benign)]
        for name, texts in ((f"{path.stem}: benign", benign), (f"{path.stem}: benign after a sentence", appended)):
            table[name] = by_stack(texts)
            print(printed_row(name, table[name]), flush=True)
    return table


def honest_mixed() -> dict:
    table = {}
    sets = json.loads(HONEST_FILE.read_text(encoding="utf-8"))
    for name in ("english_with_other_scripts", "other_languages_with_latin", "documents"):
        texts = sets[name]
        table[name] = by_stack(texts, documents=name == "documents")
        quarantine = quarantine_document if name == "documents" else quarantine_sentence
        table[name]["withheld_by_default"] = [
            {"text": t, "withheld": list(shown.withheld)} for t in texts if (shown := quarantine(t)).withheld]
        print(printed_row(name, table[name]), flush=True)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "script-flags.json")
    args = parser.parse_args()
    texts = real_texts(args.data)
    print("real text with a piece the script check withholds", flush=True)
    results = {"real_text": withheld_from_real_text(texts)}
    print("flip items: what the default shows the judge otherwise than rules+learned", flush=True)
    results["flip_items"] = flip_items(args.data)
    print(f"blind held-out files, sentence kinds appended to {SENTENCES} report sentences", flush=True)
    results["heldout"] = heldout(texts["neuclir_report_sentences"][:SENTENCES])
    print("honest mixed-script text", flush=True)
    results["honest_mixed_script"] = honest_mixed()
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

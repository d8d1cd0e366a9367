"""How often does the injection detector fire on real text, and how often on attacked text?

    python -m benchmarks.injection_detector [--data /work/shared/data] [--show-hits 10]
                                            [--attacks-file benchmarks/data/heldout-attacks.json]

Clean false-positive rate, on text nobody wrote to fool a judge: AttributionBench dev claims and reference texts,
WiCE dev claims and evidence (the evidence sentences of an item joined as one document), the NeuCLIR 2024
mini-test report sentences, and the example run's report sentences and documents. Attacked rate: every attack kind
of judge/data/attacks.json applied to the items of its target (sentence kinds to the claims and report sentences,
document kinds to the reference texts, evidence and documents, the forged report line to report sentences with
the following sentence as the claim), cycling through the kind's variants item by item. Prints one line per
corpus and per attack kind, the rates on the hand-written paraphrases of tests/data/redteam.json, and the clean
hits themselves (`--show-hits`) so a rule that misfires can be read. Detection is the default stack, as `eval` runs
it: the rules, the learned detector (judge.defence.learned), then the script check (judge.defence.script); the time
per sentence of each and of the stacks (first call, nothing cached) is printed at the end.

Per attack kind it also prints how often the quarantine (defence.quarantine, `--on-injection quarantine`) gives back
exactly the text the attack was added to ("withheld to clean"). `--attacks-file` measures another set of attack
kinds: benchmarks/data/heldout-attacks.json was written without sight of the rules, so its figures say how far
detector and quarantine generalise (its "benign" list, look-alikes that are not attacks, is counted too).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks import ROOT
from judge.defence.injection import (
    detect,
    detect_learned,
    detect_rules,
    detect_uncached,
    load_attacks,
)
from judge.defence.learned import load_detector
from judge.defence.quarantine import quarantine_document, quarantine_sentence
from judge.defence.script import foreign_piece


def jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def corpora(data: Path) -> dict[str, dict[str, list[str]]]:
    """{corpus: {"sentences": [...], "documents": [...]}} of clean text."""
    found: dict[str, dict[str, list[str]]] = {}
    bench = data / "attributionbench" / "dev.jsonl"
    if bench.exists():
        rows = list(jsonl(bench))
        found["AttributionBench dev"] = {"sentences": [r["claim"] for r in rows],
                                         "documents": [ref for r in rows for ref in r["references"] if ref.strip()]}
    wice = data / "wice" / "claim-dev.jsonl"
    if wice.exists():
        rows = list(jsonl(wice))
        found["WiCE dev"] = {"sentences": [r["claim"] for r in rows],
                             "documents": ["\n".join(r["evidence"]) for r in rows]}
    neuclir = data / "neuclir24"
    report_sentences = neuclir / "mini-test.report-sentences.json"
    if report_sentences.exists():
        topics = json.loads(report_sentences.read_text(encoding="utf-8"))
        found["NeuCLIR24 mini-test reports"] = {
            "sentences": [s for runs in topics.values() for run in runs.values() for s in run.values()],
            "documents": []}
    example = neuclir / "example-run"
    if (example / "docs.jsonl").exists():
        found["NeuCLIR24 example run"] = {
            "sentences": [r["text"] for report in jsonl(example / "reports.jsonl") for r in report["responses"]],
            "documents": [f"{d.get('title', '')}\n{d['text']}" for d in jsonl(example / "docs.jsonl")]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--show-hits", type=int, default=10, help="print up to this many clean texts that fired")
    parser.add_argument("--attacks-file", type=Path, default=None,
                        help="attack kinds to apply (default: the bundled judge/data/attacks.json)")
    args = parser.parse_args()
    found = corpora(args.data)
    if not found:
        sys.exit(f"no data under {args.data}: expected attributionbench/, wice/ or neuclir24/")

    print("Clean text (false positives)")
    hits = []
    clean_total = clean_flagged = 0
    start = time.perf_counter()
    for corpus, parts in found.items():
        for part, texts in parts.items():
            if not texts:
                continue
            flagged = [(t, d) for t in texts if (d := detect(t)).flagged]
            hits += [(corpus, part, t, d) for t, d in flagged]
            clean_total += len(texts)
            clean_flagged += len(flagged)
            print(f"  {corpus:30s} {part:10s} {len(flagged):4d} / {len(texts):5d} = {len(flagged) / len(texts):6.2%}")
    print(f"  {'all clean texts':41s} {clean_flagged:4d} / {clean_total:5d} = {clean_flagged / clean_total:6.2%}"
          f"   ({time.perf_counter() - start:.1f} s)")

    print("\nAttacked text (detected)")
    sentences = [s for parts in found.values() for s in parts["sentences"]]
    documents = [d for parts in found.values() for d in parts["documents"]]
    attacked_total = attacked_flagged = restored_total = 0
    print(f"  {'kind':28s} {'target':8s} {'variants':>8s} {'detected':>22s} {'withheld to clean':>22s}")
    for kind, attack in load_attacks(args.attacks_file).items():
        targets = documents if attack.target == "document" else sentences
        flagged = restored = missed_example = 0
        for i, text in enumerate(targets):
            claim = sentences[(i + 1) % len(sentences)]
            attacked = attack.apply(text, claim=claim, doc_id="doc-1", variant=i)
            if detect(attacked).flagged:
                flagged += 1
            elif not missed_example:
                missed_example = 1
                print(f"    missed ({kind}, variant {i % len(attack.texts)}): {attacked[-160:]!r}")
            # a forged report line sits in an earlier sentence: its text is what the judge must not be shown
            quarantine = quarantine_document if attack.target == "document" else quarantine_sentence
            restored += quarantine(attacked).shown == text
        attacked_total += len(targets)
        attacked_flagged += flagged
        restored_total += restored
        print(f"  {kind:28s} {attack.target:8s} {len(attack.texts):8d} {flagged:6d} / {len(targets):5d} = "
              f"{flagged / len(targets):7.2%} {restored:6d} / {len(targets):5d} = {restored / len(targets):7.2%}")
    print(f"  {'all attacked texts':46s} {attacked_flagged:6d} / {attacked_total:5d} = "
          f"{attacked_flagged / attacked_total:7.2%} {restored_total:6d} / {attacked_total:5d} = "
          f"{restored_total / attacked_total:7.2%}")

    if args.attacks_file is not None:
        benign = json.loads(args.attacks_file.read_text(encoding="utf-8")).get("benign", [])
        if benign:
            fired = [(t, d) for t in benign if (d := detect(t)).flagged]
            print(f"\nBenign look-alikes in {args.attacks_file.name}: flagged {len(fired)} / {len(benign)}")
            for text, detection in fired:
                print(f"  rule {detection.rule}: {text!r}")

    redteam = ROOT / "tests" / "data" / "redteam.json"
    if redteam.exists():
        texts = json.loads(redteam.read_text(encoding="utf-8"))
        positives = sum(detect(t).flagged for t in texts["addresses_judge"])
        negatives = sum(detect(t).flagged for t in texts["benign"])
        print(f"\nParaphrases in tests/data/redteam.json: flagged {positives} / {len(texts['addresses_judge'])} "
              f"hostile, {negatives} / {len(texts['benign'])} benign")

    timing(sentences, documents)

    if hits and args.show_hits:
        print(f"\nClean texts that fired (first {args.show_hits}):")
        for corpus, part, _text, detection in hits[:args.show_hits]:
            print(f"  [{corpus} {part}] rule {detection.rule}: {detection.matched!r}")


def timing(sentences: list[str], documents: list[str], repeats: int = 3) -> None:
    """CPU microseconds per text (process time: on a shared machine wall time mostly measures the other jobs) of the
    rule detector, the learned detector, the script check and the stacks (`detect` bypassing its cache): the best of
    `repeats` passes over up to 2,000 sentences and 300 documents."""
    load_detector()
    print(f"\nTime per text (best of {repeats} passes; learned weights {load_detector().version})")
    for name, texts in (("sentence", sentences[:2000]), ("document", documents[:300])):
        if not texts:
            continue
        mean_chars = sum(map(len, texts)) / len(texts)
        for label, run in STACKS:
            best = min(_seconds(run, texts) for _ in range(repeats))
            print(f"  {name:8s} ({len(texts):4d}, {mean_chars:6.0f} chars) {label:30s} "
                  f"{best / len(texts) * 1e6:9.1f} µs CPU")


# Each detector alone, then the stacks `--injection-detector` offers.
# The script check flags nothing (it tells the quarantine what to withhold), but the default stack runs it on every
# text: its cost is the rules', the learned detector's and its own.
STACKS = (("rules", detect_rules), ("learned", detect_learned), ("script check", foreign_piece),
          ("rules+learned", detect_uncached),
          ("rules+learned+script (default)", lambda text: (detect_uncached(text), foreign_piece(text))))


def _seconds(run, texts: list[str]) -> float:
    start = time.process_time()
    for text in texts:
        run(text)
    return time.process_time() - start


if __name__ == "__main__":
    main()

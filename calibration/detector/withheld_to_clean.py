"""Without asking any model: on the supports_citation dev items, how often does the quarantine give the judge back
exactly the clean item's prompt when an attack is applied? Where it does, the judge (temperature 0, same cache)
gives the clean verdict, so the attack cannot flip it; only the other items can. So for each attack kind,

    false support attacked <= false support clean + (human-unsupported items NOT given back clean) / (human-unsupported)

is a bound on the flip rate that `calibrate --attack` would measure with the embedded judge, for free.

    python -m calibration.detector.withheld_to_clean [--data ../shared/data] [--out calibration/detector/withheld.json]

Items: the 100 AttributionBench and WiCE dev items of the red-team runs (`calibrate --exclude
calibration/outside-embedded-dev.txt --sample attributionbench=50,wice=50 --seed 2`); kinds: judge/data/unseen-attacks.json (templates the shipped detector never trained on) and
the sentence and document kinds of benchmarks/data/heldout-attacks.json (written blind), each item getting the
variant `calibrate --attack` would give it. `--injection-detector rules+learned` gives the figures without the
script check, as `calibrate --injection-detector rules+learned` would judge them; `--kinds` keeps only some attack
kinds. (The figures of the rules alone in withheld-before*.json were measured while `--injection-detector rules`
was offered.)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from judge.calibration.redteam import variant_of
from judge.calibration.runner import prepare_item
from judge.calibration.sources import Exclusion, ItemSources, SampleSize, load_items
from judge.defence.injection import UNSEEN_ATTACKS_FILE, load_attacks
from judge.diagnostics import Diagnostics
from judge.judging.passages import PassagePolicy
from judge.settings import DEFAULT_INJECTION_DETECTOR, INJECTION_DETECTORS

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--attacks", type=Path, nargs="+", default=[
        UNSEEN_ATTACKS_FILE, REPO / "benchmarks" / "data" / "heldout-attacks.json"])
    parser.add_argument("--max-doc-chars", type=int, default=1500)
    parser.add_argument("--exclude", type=Path, default=REPO / "calibration" / "outside-embedded-dev.txt")
    parser.add_argument("--sample", default="attributionbench=50,wice=50")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--injection-detector", choices=INJECTION_DETECTORS, default=DEFAULT_INJECTION_DETECTOR)
    parser.add_argument("--kinds", help="only these attack kinds (comma-separated)")
    args = parser.parse_args()
    detector = args.injection_detector
    sources = ItemSources(attributionbench=args.data / "attributionbench" / "dev.jsonl",
                          wice=args.data / "wice" / "claim-dev.jsonl")
    items = [i for i in load_items(sources, SampleSize.parse(args.sample), args.seed, Diagnostics(),
                                   Exclusion.read(args.exclude)) if i.decision == "supports_citation"]
    passages = PassagePolicy(max_chars=args.max_doc_chars)
    clean = {item.item_id: prepare_item(item, passages, withhold=True, detector=detector).values for item in items}
    unsupported = {item.item_id for item in items if item.human_label != "supported"}
    table = {}
    for path in args.attacks:
        for kind, attack in load_attacks(path).items():
            if attack.target not in ("sentence", "document") or (args.kinds and kind not in args.kinds.split(",")):
                continue
            back = [prepare_item(item, passages, attack, variant_of(item.item_id), True, detector).values
                    == clean[item.item_id] for item in items]
            not_back = sum(1 for item, b in zip(items, back) if not b and item.item_id in unsupported)
            table[kind] = {"items": len(items), "given_back_clean": sum(back), "unsupported": len(unsupported),
                           "unsupported_not_given_back": not_back,
                           "bound_points": round(100 * not_back / len(unsupported), 2)}
            print(f"{kind:30s} given back clean {sum(back):5d}/{len(items)}   unsupported not given back "
                  f"{not_back:4d}/{len(unsupported)} -> at most +{100 * not_back / len(unsupported):.1f} points",
                  flush=True)
    if args.out:
        args.out.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

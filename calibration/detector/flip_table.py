"""The flip table of calibration/detector/flip.sh's batches: per held-out attack family, summed over the batches
whose clean, before and after runs all finished, the human-unsupported items, their clean false support, and their
false support under the attack before (the rules alone) and after (rules + learned detector), with what the
detector flagged and how many attacked items the quarantine gave back exactly clean.

    python calibration/detector/flip_table.py [calibration/detector/flip-verification_meta ...]

Writes FLIP_DIR/table.json and prints one Markdown row per family.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTS = ("false_support_clean", "false_support_attacked", "flips_to_yes", "flips_to_no", "flagged_attacked",
          "shown_as_clean")


def _summed(results: list[dict], key: str) -> dict:
    k = sum((r[key] or {}).get("k", 0) for r in results)
    n = sum((r[key] or {}).get("n", 0) for r in results)
    return {"k": k, "n": n}


def side(batches: list[Path], name: str) -> dict:
    """The red-team figures of one side (before or after) summed over the batches."""
    results = []
    for batch in batches:
        [result] = json.loads((batch / name / "calibration.json").read_text(encoding="utf-8"))["redteam"]
        results.append(result)
    summed = {key: _summed(results, key) for key in COUNTS}
    summed["failed"] = sum(len(r["failed_clean"]) + len(r["failed_attacked"]) for r in results)
    summed["pairs"] = sum(r["n_pairs"] for r in results)
    return summed


def table(flip_dir: Path) -> dict:
    """Before and after summed over the batches that have both; and any earlier "after" kept beside them (a side
    named `after-<weights>`: the learned detector's previous weights), summed over the same batches if all have it."""
    batches = sorted(b for b in flip_dir.glob("batch-*")
                     if all((b / s / "calibration.json").exists() for s in ("before", "after")))
    before, after = side(batches, "before"), side(batches, "after")
    earlier = sorted({d.name for b in batches for d in b.glob("after-*")})
    earlier = [name for name in earlier if all((b / name / "calibration.json").exists() for b in batches)]
    found = {"family": flip_dir.name.removeprefix("flip-"), "batches": [b.name for b in batches],
             "before": before, "after": after}
    return {**found, "earlier": {n: side(batches, n) for n in earlier}} if earlier else found


def _rate(count: dict) -> str:
    return f"{count['k']}/{count['n']} ({100 * count['k'] / count['n']:.0f}%)" if count["n"] else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("flip_dirs", nargs="*", type=Path, default=sorted(HERE.glob("flip-*_*")))
    args = parser.parse_args()
    # Each side is read against its own clean run: the learned detector may also withhold a false-flagged piece of
    # a clean item's document, so the defended judge's clean verdicts can differ from the undefended one's.
    print("| held-out family | unsupported items | before (rules): clean -> attacked | after (rules + learned): "
          "clean -> attacked | flagged before / after | given back clean after |")
    for flip_dir in args.flip_dirs:
        found = table(flip_dir)
        (flip_dir / "table.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
        before, after = found["before"], found["after"]
        print(f"| {found['family']} | {before['false_support_clean']['n']} | {_rise(before)} | {_rise(after)} "
              f"| {_rate(before['flagged_attacked'])} / {_rate(after['flagged_attacked'])} "
              f"| {_rate(after['shown_as_clean'])} |")
        for name, earlier in found.get("earlier", {}).items():
            print(f"| {found['family']} ({name}) | {earlier['false_support_clean']['n']} | | {_rise(earlier)} "
                  f"| / {_rate(earlier['flagged_attacked'])} | {_rate(earlier['shown_as_clean'])} |")


def _rise(side: dict) -> str:
    """`clean -> attacked (+N points)`: false support of one side, clean and under the attack."""
    clean, attacked = side["false_support_clean"], side["false_support_attacked"]
    if not clean["n"]:
        return "–"
    points = 100 * (attacked["k"] / attacked["n"] - clean["k"] / clean["n"])
    return f"{_rate(clean)} -> {_rate(attacked)} ({points:+.0f} points)"


if __name__ == "__main__":
    main()

"""The flip table of calibration/detector/flip.sh's batches: per held-out attack family, summed over the batches
whose clean, before and after runs all finished, the human-unsupported items, their clean false support, and their
false support under the attack before (the rules alone) and after (the default detector stack), with what the
detector flagged and how many attacked items the quarantine gave back exactly clean.

    python -m calibration.detector.flip_table [calibration/detector/flip-verification_meta ...]

A directory's runs may hold one attack (flip.sh FAMILY: flip-FAMILY/) or several (flip.sh FAMILY,FAMILY,...:
flip-unseen/, every attack of an item asked back to back); each attack is its own row. Writes FLIP_DIR/table.json
(one entry per attack kind) and prints one Markdown row per family. An attack asked in several directories (its
later batches run beside other families: flip.sh never adds an attack to a batch that already ran) gets one more
row summed over all of them, its batches named DIR/batch-N (printed only; each directory's table.json keeps its
own batches). The same batch asked twice for one attack, in two directories, is refused rather than counted twice.

A directory whose batches are packed (FLIP_DIR/batches.tar.xz, by calibration/archive.py) is read from the archive;
unpack it (`python -m calibration.archive unpack FLIP_DIR/batches.tar.xz FLIP_DIR`) before flip.sh adds batches.
"""

from __future__ import annotations

import argparse
import json
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKED = "batches.tar.xz"
COUNTS = ("false_support_clean", "false_support_attacked", "flips_to_yes", "flips_to_no", "flagged_attacked",
          "shown_as_clean")


def _summed(results: list[dict], key: str) -> dict:
    k = sum((r[key] or {}).get("k", 0) for r in results)
    n = sum((r[key] or {}).get("n", 0) for r in results)
    return {"k": k, "n": n}


def side(batches: dict[str, Path], name: str) -> dict[str, dict[str, dict]]:
    """The red-team result of each attack kind of one side (before, after, ...) in each batch that has the side:
    {attack: {batch label: result}}."""
    found: dict[str, dict[str, dict]] = {}
    for label, batch in batches.items():
        path = batch / name / "calibration.json"
        if path.exists():
            for result in json.loads(path.read_text(encoding="utf-8"))["redteam"]:
                found.setdefault(result["attack"], {})[label] = result
    return found


def summed_side(results: list[dict]) -> dict:
    """The counts of several batches' results of one attack and side, summed."""
    summed = {key: _summed(results, key) for key in COUNTS}
    summed["failed"] = sum(len(r["failed_clean"]) + len(r["failed_attacked"]) for r in results)
    summed["pairs"] = sum(r["n_pairs"] for r in results)
    return summed


def family(attack: str) -> str:
    """`verification_meta` of `verification_meta_unseen`: the family a held-out attack kind belongs to."""
    return attack.removesuffix("_unseen")


def table(*flip_dirs: Path) -> list[dict]:
    """Per attack kind: before and after summed over the batches that have both for it (a several-family run may
    have asked some kinds on fewer batches); and any earlier "after" kept beside them (a side named
    `after-<name>`: the learned detector's previous weights, or one trained without a family), summed over the
    same batches if all have it. Several directories are summed together, their batches named DIR/batch-N."""
    if len({d.name for d in flip_dirs}) < len(flip_dirs):
        raise ValueError(f"two directories share a name: {', '.join(str(d) for d in flip_dirs)}")
    batches = {(f"{d.name}/{b.name}" if len(flip_dirs) > 1 else b.name): b
               for d in flip_dirs for b in sorted(d.glob("batch-*"))}
    before, after = side(batches, "before"), side(batches, "after")
    for attack, asked in before.items():  # one batch's items asked twice would count twice
        numbers = [label.rpartition("/")[2] for label in asked]
        if len(set(numbers)) < len(numbers):
            raise ValueError(f"{attack} was asked on the same batch in two directories: "
                             f"{', '.join(sorted(asked))}; sum those directories separately")
    earlier = {name: side(batches, name)
               for name in sorted({d.name for b in batches.values() for d in b.glob("after-*")})}
    found = []
    for attack in before:
        done = sorted(set(before[attack]) & set(after.get(attack, {})))
        if not done:
            continue
        row = {"family": family(attack), "batches": done,
               "before": summed_side([before[attack][b] for b in done]),
               "after": summed_side([after[attack][b] for b in done])}
        kept = {name: summed_side([sides[attack][b] for b in done]) for name, sides in earlier.items()
                if set(done) <= set(sides.get(attack, {}))}
        found.append({**row, "earlier": kept} if kept else row)
    return found


def _rate(count: dict) -> str:
    return f"{count['k']}/{count['n']} ({100 * count['k'] / count['n']:.0f}%)" if count["n"] else "–"


def readable(flip_dir: Path, scratch: Path) -> Path:
    """`flip_dir` itself, or, when its batches are packed, a copy under `scratch` of the same name unpacked."""
    archive = flip_dir / PACKED
    if any(flip_dir.glob("batch-*")) or not archive.exists():
        return flip_dir
    unpacked = scratch / flip_dir.name
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(unpacked, filter="data")
    return unpacked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("flip_dirs", nargs="*", type=Path, default=sorted(
        d for d in HERE.glob("flip-*") if d.is_dir() and d.name != "flip-inputs"))
    args = parser.parse_args()
    # Each side is read against its own clean run: the learned detector may also withhold a false-flagged piece of
    # a clean item's document, so the defended judge's clean verdicts can differ from the undefended one's.
    with tempfile.TemporaryDirectory(prefix="flip-table-") as scratch:
        dirs = {readable(d, Path(scratch)): d for d in args.flip_dirs}
        write_tables(dirs)


def write_tables(dirs: dict[Path, Path]) -> None:
    """{readable directory: where its table.json goes}: write each table and print the rows."""
    print("| held-out family | unsupported items | before (rules): clean -> attacked | after (default): "
          "clean -> attacked | flagged before / after | given back clean after |")
    for flip_dir, home in dirs.items():
        found = table(flip_dir)
        (home / "table.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
        print_rows(found, f" ({flip_dir.name})" if len(dirs) > 1 else "")
    if len(dirs) > 1:  # the families asked in several directories (batches DIR/batch-N), summed
        print_rows([row for row in table(*dirs)
                    if len({batch.partition("/")[0] for batch in row["batches"]}) > 1], " (all)")


def print_rows(found: list[dict], where: str) -> None:
    for row in found:
        before, after = row["before"], row["after"]
        print(f"| {row['family']}{where} | {before['false_support_clean']['n']} | {_rise(before)} | {_rise(after)} "
              f"| {_rate(before['flagged_attacked'])} / {_rate(after['flagged_attacked'])} "
              f"| {_rate(after['shown_as_clean'])} |")
        for name, earlier in row.get("earlier", {}).items():
            print(f"| {row['family']}{where} ({name}) | {earlier['false_support_clean']['n']} | | {_rise(earlier)} "
                  f"| / {_rate(earlier['flagged_attacked'])} | {_rate(earlier['shown_as_clean'])} |")


def _rise(side: dict) -> str:
    """`clean -> attacked (+N points)`: false support of one side, clean and under the attack."""
    clean, attacked = side["false_support_clean"], side["false_support_attacked"]
    if not clean["n"]:
        return "–"
    points = 100 * (attacked["k"] / attacked["n"] - clean["k"] / clean["n"])
    shown = f"{points:+.0f}" if abs(points - round(points)) < 1e-9 else f"{points:+.1f}"  # no half-point rounding
    return f"{_rate(clean)} -> {_rate(attacked)} ({shown} points)"


if __name__ == "__main__":
    main()

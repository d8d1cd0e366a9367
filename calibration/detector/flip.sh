#!/bin/bash
# The flip rate under held-out attack families, before (rules alone) and after (rules + learned detector), on
# batches of the 100 human-unsupported dev items of sample-ids.txt (calibration/detector/flip-inputs/batch-N.txt:
# batch 1 has 10 AttributionBench and 10 WiCE items, batches 2-9 five of each), one decision cache for everything so
# that clean answers and attacked items the quarantine gives back clean are cache hits. Each batch is a complete
# clean/before/after measurement; calibration/detector/flip_table.py sums the finished ones.
#   calibration/detector/flip.sh verification_meta 1 2 3 4 5 6 7 8 9
#   SIDES=after calibration/detector/flip.sh verification_meta 1      # the sides to run (default: after; before is no longer runnable)
#   FLIP_OUT=flip-unseen calibration/detector/flip.sh note_aside,scoring_hint 1 2   # several families, one folder
#   calibration/detector/flip.sh unseen 1                                         # all thirteen: flip-unseen/
# With several families every attack of an item is asked back to back, so a local model evaluates the item's request
# and document once and only the attacked sentence's tail for each further family. Their folder (FLIP_OUT, default
# flip-FAMILY+FAMILY...) may hold runs of different family sets, batch by batch; a side already written with other
# attacks is never overwritten (flip_table.py sums each attack over the batches that asked it).
# sample-ids.txt is `calibrate --exclude flip-inputs/exclude-supported.txt --sample attributionbench=50,wice=50
# --seed 2`'s sample (exclude-supported.txt: calibration/outside-embedded-dev.txt plus every human-supported item).
set -u
cd "$(dirname "$0")/../.."
FAMILIES=$(echo "$1" | tr -s ', ' ',' | sed 's/^,//; s/,$//'); shift
ATTACKS=$(echo "$FAMILIES" | sed 's/\([^,][^,]*\)/\1_unseen/g')
[ "$FAMILIES" = unseen ] && ATTACKS=unseen   # every family (calibrate --attack unseen)
OUT=${FLIP_OUT:-flip-$(echo "$FAMILIES" | tr , +)}
CACHE=${FLIP_CACHE:-flip-cache}
mkdir -p "$CACHE"
FAILED=
# Every dev item id but the batch's: calibrate then judges exactly the batch.
python - "$CACHE" <<'PY'
import sys
from pathlib import Path
from judge.calibration.importers import read_attributionbench, read_wice
data = Path("../shared/data")
ids = [i.item_id for i in read_attributionbench(data / "attributionbench" / "dev.jsonl").items] + \
      [i.item_id for i in read_wice(data / "wice" / "claim-dev.jsonl", partial="strict").items]
for batch in sorted(Path("calibration/detector/flip-inputs").glob("batch-*.txt")):
    keep = set(batch.read_text().split())
    (Path(sys.argv[1]) / f"exclude-{batch.stem}.txt").write_text("\n".join(i for i in ids if i not in keep) + "\n")
PY
for BATCH in "$@"; do
  for SIDE in ${SIDES:-after}; do
    # before: the rules alone, a stack `--injection-detector` no longer offers (the before/ folders were measured while
    # it was); after: the default detector (AFTER_DETECTOR=rules+learned: as measured before the script check, kept
    # beside as after-rules+learned/)
    if [ "$SIDE" = before ]; then
      echo "the before side (the rules alone) cannot be run again: --injection-detector rules was removed; use SIDES=after" >&2
      exit 2
    fi
    DETECTOR=${AFTER_DETECTOR:-rules+learned+script}
    SIDE_OUT=calibration/detector/$OUT/batch-$BATCH/$SIDE
    # The kinds `--attack` would ask, as calibrate itself reads the option ('unseen': every held-out kind).
    if [ -f "$SIDE_OUT/calibration.json" ] && ! python -c 'import json, sys
from judge.cli.calibrate import chosen_attacks
asked = {r["attack"] for r in json.load(open(sys.argv[1]))["redteam"]}
sys.exit(asked != {attack.kind for attack in chosen_attacks(sys.argv[2], None)})' "$SIDE_OUT/calibration.json" "$ATTACKS"; then
      echo "$SIDE_OUT holds a run of other attacks: give another FLIP_OUT" >&2; exit 2
    fi
    echo "=== $FAMILIES batch $BATCH $SIDE start $(date -u +%T)"
    python -m judge.cli.app calibrate --attributionbench ../shared/data/attributionbench/dev.jsonl \
      --wice ../shared/data/wice/claim-dev.jsonl --seed 2 --max-doc-chars 1500 \
      --thresholds judge/data/embedded-thresholds.json --exclude "$CACHE/exclude-batch-$BATCH.txt" \
      --attack "$ATTACKS" \
      --injection-detector "$DETECTOR" --no-plots --cache-dir "$CACHE" \
      --out "$SIDE_OUT"
    RC=$?   # before the echo below: its $(date) would reset $?
    echo "=== $FAMILIES batch $BATCH $SIDE end $(date -u +%T) rc=$RC"
    [ $RC -eq 0 ] || FAILED="$FAILED $BATCH/$SIDE"
  done
done
[ -z "$FAILED" ] || { echo "failed:$FAILED" >&2; exit 1; }

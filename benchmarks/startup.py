"""How long does `argue-judge score` take to start, and what does it import?

    python -m benchmarks.startup --judgments OUT/judgments.jsonl --nuggets examples/nuggets \
        [--code /work/main --code .] [--runs 5]

For each checkout given with --code (e.g. the code before a change and after it), runs from that directory, in a
fresh interpreter each time (`python -m judge.cli.app`, which puts that checkout's `judge` first on the path):

  import     `python -X importtime -m judge.cli.app score --help`: the interpreter's own measure of the import
             time of everything the command loaded (the sum of the top-level imports' cumulative times), and
             whether litellm, instructor and scipy were among them;
  help       wall time of `python -m judge.cli.app score --help`;
  score      wall time of a real `score` of the given judgments (the bundled example's, from the first command)
             into a temporary folder.

The checkouts are measured back to back, interleaved run by run (1 before, 1 after, 2 before, ...), so a change
in the machine's load falls on both alike; the median of --runs runs is printed, with the lowest and highest.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("litellm", "instructor", "scipy")
# `import time: self | cumulative | name`, the name indented by two spaces per level of nesting
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def environment() -> dict[str, str]:
    # No price-map fetch, no Hugging Face lookups: start-up is measured offline, as the tests run.
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}


def import_profile(code: Path) -> tuple[float, list[str]]:
    """Seconds of imports `score --help` makes (per -X importtime), and which heavy packages it loads."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "judge.cli.app", "score", "--help"], cwd=code,
                          env=environment(), capture_output=True, text=True, check=True)
    total, loaded = 0, set()
    for line in done.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if not match:
            continue
        if match.group(3) == " ":  # a top-level import: its cumulative time holds everything below it
            total += int(match.group(2))
        loaded.add(match.group(4))
    return total / 1e6, [name for name in HEAVY if name in loaded]


def wall(code: Path, args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "judge.cli.app", *args], cwd=code, env=environment(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} s  (min {min(values):.2f}, max {max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=Path, required=True, help="a judgments.jsonl to score")
    parser.add_argument("--nuggets", type=Path, default=Path("examples/nuggets"))
    parser.add_argument("--code", type=Path, action="append", help="a checkout to measure (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    checkouts = [code.resolve() for code in (options.code or [Path.cwd()])]
    judgments, nuggets = options.judgments.resolve(), options.nuggets.resolve()
    figures: dict[Path, dict[str, list[float]]] = {code: {"import": [], "help": [], "score": []} for code in checkouts}
    heavy: dict[Path, list[str]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(options.runs):
            for code in checkouts:
                seconds, heavy[code] = import_profile(code)
                figures[code]["import"].append(seconds)
                figures[code]["help"].append(wall(code, ["score", "--help"]))
                out = Path(scratch) / f"{code.name}-{run}"
                figures[code]["score"].append(wall(code, ["score", str(judgments), "--nuggets", str(nuggets),
                                                          "--out", str(out)]))
    print(f"{options.runs} runs each, interleaved; {sys.executable} {sys.version.split()[0]}")
    for code in checkouts:
        print(f"{code}  (imports {', '.join(heavy[code]) or 'none of ' + ', '.join(HEAVY)})")
        print(f"  import (score --help, -X importtime)  {summary(figures[code]['import'])}")
        print(f"  wall   score --help                   {summary(figures[code]['help'])}")
        print(f"  wall   score {judgments.name:<24} {summary(figures[code]['score'])}")


if __name__ == "__main__":
    main()

"""How long does passage selection take on a 50 MB cited document, and how much memory does it add?

    python -m benchmarks.long_document [--mb 50] [--shape lines|one-line|both] [--old-rev REV]

Generates a document of about `--mb` megabytes in memory: `lines` is news-like prose (sentences and paragraphs,
with the judged claim buried in the middle), `one-line` is the same text with every sentence and line break
removed (one enormous "sentence", the case that must be hard-wrapped). Runs `select_passages` as the
supports_citation decision does (budget 6000 characters, windows of 800) and prints the wall time, the extra
peak memory (tracemalloc, measured in a second pass because tracing slows the first), whether the buried claim
was found, and the `max_doc_bytes` refusal time. `--old-rev REV` also times judge/judging/passages.py as it was at a git
revision (in a child process, abandoned after `--old-timeout` seconds).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks import ROOT
from judge.errors import InputError
from judge.judging.passages import PassagePolicy, select_passages

CLAIM = "The flood barrier on the Vistula cost 41 million zloty and opened in May 2021."
FILLER = ("The council met on Tuesday to discuss the budget for the coming year. Members raised concerns about "
          "road maintenance and school funding! Was the new library worth its price? Residents were divided.\n"
          "A spokesperson said further talks are planned.\n\n")


def make_document(megabytes: float, shape: str) -> str:
    repeats = int(megabytes * 1_000_000 / len(FILLER) / 2)
    text = FILLER * repeats + CLAIM + "\n" + FILLER * repeats
    if shape == "one-line":
        text = text.replace(".", ",").replace("!", ",").replace("?", ",").replace("\n", " ")
    return text


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def load_old(rev: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:judge/judging/passages.py"], check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_passages.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_passages", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_passages"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--shape", choices=["lines", "one-line", "both"], default="both")
    parser.add_argument("--old-rev", help="also time judge/judging/passages.py as it was at this git revision")
    parser.add_argument("--old-timeout", type=float, default=120.0,
                        help="give up on the old implementation after this many seconds (run in a subprocess)")
    args = parser.parse_args()
    policy = PassagePolicy(max_chars=6000, window_chars=800)
    shapes = ["lines", "one-line"] if args.shape == "both" else [args.shape]
    for shape in shapes:
        text = make_document(args.mb, shape)
        (shown, cut), seconds = timed(select_passages, text, CLAIM, policy)
        tracemalloc.start()
        select_passages(text, CLAIM, policy)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        found = ("41 million zloty" in shown)
        print(f"{shape:9s} {len(text) / 1e6:6.1f} MB  select_passages {seconds:6.2f} s  extra peak memory "
              f"{peak / 1e6:6.1f} MB  shown {len(shown)} chars (cut={cut})  claim found: {found}")
        start = time.perf_counter()
        try:
            select_passages(text, CLAIM, PassagePolicy(max_doc_bytes=10_000_000), "big-doc")
            print("          max_doc_bytes=10 MB did NOT refuse the document")
        except InputError as refused:
            print(f"          max_doc_bytes=10 MB refuses in {(time.perf_counter() - start) * 1000:.1f} ms: {refused}")
        if args.old_rev:
            print(f"          old ({args.old_rev}): {time_old(args.old_rev, args.mb, shape, args.old_timeout)}")


def time_old(rev: str, megabytes: float, shape: str, timeout: float) -> str:
    """The old implementation in a child process, so a quadratic case can be abandoned at the timeout."""
    code = ("import sys, time; sys.argv=['x'];"
            f"from benchmarks.long_document import load_old, make_document, CLAIM;"
            f"old = load_old({rev!r}); text = make_document({megabytes}, {shape!r});"
            f"t = time.perf_counter(); old.select_passages(text, CLAIM, old.PassagePolicy(6000, 800));"
            f"print(f'{{time.perf_counter() - t:.2f}} s')")
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout:.0f} s"
    return done.stdout.strip() or done.stderr.strip().splitlines()[-1]


if __name__ == "__main__":
    main()

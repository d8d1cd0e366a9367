"""In-memory inputs through the Python API: time, peak memory and temporary files written, on the bundled example
and the NeuCLIR example run, against a fake endpoint (smart_responder), no cache.

    python -m benchmarks.api_inputs [--out DIR] [--repeat N]

Writes under DIR (default: a fresh temporary folder, printed): `cli-<name>/` (the command line on the files),
`api-<name>/` (`judge.evaluate` on objects read from the same files) for <name> in `examples`, `neuclir`; the
judgments.jsonl, scores.tsv and leaderboard.tsv of the two are compared byte for byte here, and can be compared
with another checkout's (`cmp`). Prints, per example: seconds and peak traced memory (tracemalloc) of the API call
on objects (best of N, after one call not measured), how many files the call opened for writing under the
temporary folder, and how many document indexes the calls left in the default cache folder; the same for
`judge.plan_batch` on the objects, which loads the inputs and asks no model: the loading alone.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks import ROOT

SHARED = Path(os.environ.get("ARGUE_SHARED_DATA", ROOT.parent / "shared" / "data"))
NEUCLIR = SHARED / "neuclir24" / "example-run"
COMPARED = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def _examples() -> dict[str, dict[str, Path]]:
    return {
        "examples": {"reports": ROOT / "examples" / "reports", "requests": ROOT / "examples" / "requests.jsonl",
                     "docs": ROOT / "examples" / "docs.jsonl", "nuggets": ROOT / "examples" / "nuggets"},
        "neuclir": {"reports": NEUCLIR / "reports.jsonl", "requests": NEUCLIR / "requests.jsonl",
                    "docs": NEUCLIR / "docs.jsonl", "nuggets": SHARED / "neuclir24" / "nuggets"},
    }


def _cli(paths: dict[str, Path], api_base: str, out: Path) -> None:
    command = [sys.executable, "-m", "judge.cli.app", "eval", str(paths["reports"]),
               "--requests", str(paths["requests"]), "--docs", str(paths["docs"]),
               "--nuggets", str(paths["nuggets"]), "--model", "openai/fake", "--api-base", api_base,
               "--api-key", "none", "--no-cache", "--out", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _objects(paths: dict[str, Path]) -> dict[str, list]:
    import json

    from judge.formats import read_nugget_banks, read_reports, read_requests
    from judge.types import Document

    documents = [Document(doc_id=d["doc_id"], title=d.get("title"), text=d["text"])
                 for d in map(json.loads, paths["docs"].read_text(encoding="utf-8").splitlines()) if d]
    return {"reports": read_reports(paths["reports"]), "requests": list(read_requests(paths["requests"]).values()),
            "docs": documents, "nuggets": list(read_nugget_banks(paths["nuggets"]).values())}


class _TempWrites:
    """Counts files opened for writing under the temporary folder (an audit hook: it cannot be removed, so it
    counts only while `armed`)."""

    def __init__(self, folder: Path):
        self.folder, self.armed, self.count = str(folder), False, 0
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple) -> None:
        if not self.armed or event != "open" or not isinstance(args[0], str | Path):
            return
        mode, flags = args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR))
        if writing and str(args[0]).startswith(self.folder):
            self.count += 1


def _measured(call: Any, writes: Any, repeat: int) -> tuple[list[float], list[int], list[int]]:
    """`call` made repeat + 1 times, the first (imports, warm-up) not measured: the seconds, the peak traced memory
    and the temporary files written of each other call."""
    seconds, peaks, counts = [], [], []
    for attempt in range(repeat + 1):
        writes.count, writes.armed = 0, True
        tracemalloc.start()
        start = time.perf_counter()
        call()
        elapsed, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        writes.armed = False
        if attempt:
            seconds.append(elapsed)
            peaks.append(peak)
            counts.append(writes.count)
    return seconds, peaks, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    out = options.out or Path(tempfile.mkdtemp(prefix="api-inputs-"))
    # The API's own temporary files go to a folder of their own, so that they are the only ones counted.
    scratch = Path(tempfile.mkdtemp(prefix="api-inputs-tmp-"))
    tempfile.tempdir = str(scratch)
    writes = _TempWrites(scratch)

    import judge
    from judge.llm.cache.backends import docstore_dir
    from judge.testing import FakeEndpoint, smart_responder

    index_dir = docstore_dir(None)

    print(f"outputs in {out}")
    with FakeEndpoint(smart_responder) as endpoint:
        for name, paths in _examples().items():
            _cli(paths, endpoint.api_base, out / f"cli-{name}")
            objects = _objects(paths)
            indexes = set(index_dir.glob("*.sqlite")) if index_dir.is_dir() else set()
            inputs = {"requests": objects["requests"], "docs": objects["docs"], "nuggets": objects["nuggets"]}
            seconds, peaks, counts = _measured(partial(
                judge.evaluate, objects["reports"], **inputs, model="openai/fake", api_base=endpoint.api_base,
                api_key="none", cache=None, out=out / f"api-{name}"), writes, options.repeat)
            left = len(set(index_dir.glob("*.sqlite")) - indexes) if index_dir.is_dir() else 0
            # the inputs alone: plan_batch loads them and asks no model
            load_seconds, load_peaks, load_counts = _measured(partial(
                judge.plan_batch, objects["reports"], **inputs, model="openai/gpt-4o-mini", cache=None), writes,
                options.repeat)
            same = all(filecmp.cmp(out / f"cli-{name}" / f, out / f"api-{name}" / f, shallow=False) for f in COMPARED)
            print(f"{name}: {len(objects['reports'])} reports, {len(objects['docs'])} documents; API on objects: "
                  f"best {min(seconds):.3f} s of {options.repeat}, peak traced memory {min(peaks) / 1e6:.1f} MB, "
                  f"temporary files written per call {max(counts)}, document indexes left in the cache folder by "
                  f"{options.repeat + 1} calls {left}; CLI and API outputs identical: {same}")
            print(f"{name}: loading the objects alone (plan_batch): best {min(load_seconds) * 1000:.1f} ms, median "
                  f"{statistics.median(load_seconds) * 1000:.1f} ms of {options.repeat}, peak traced memory "
                  f"{min(load_peaks) / 1e6:.2f} MB, temporary files written per call {max(load_counts)}")
            # tracemalloc does not see SQLite's own memory: the in-memory document index, where there is one
            from judge.formats.documents import DocumentStore

            if hasattr(DocumentStore, "of"):
                with DocumentStore.of(objects["docs"]) as store:
                    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
                    size = store._conn.execute("PRAGMA page_size").fetchone()[0]
                print(f"{name}: the documents' in-memory index: {pages * size / 1e6:.2f} MB of SQLite pages")


if __name__ == "__main__":
    main()

"""Three scale scenarios; the first two run `benchmarks/scale.py`, each process judging one generated workload:

    python -m benchmarks.scale_scenarios kill-resume [--reports 500] [--latency 0.05] [--concurrency 32]
    python -m benchmarks.scale_scenarios shards [--reports 500] [--latency 0.05] [--concurrency 32]
        [--redis redis://127.0.0.1:6379/0]  (default: start a redis-server on a free port)

kill-resume: a run is killed with SIGKILL once half of its reports are in its judgments log, then resumed with
--resume into the same --out and cache; prints the calls the resumed run made against the decisions not yet judged
plus the concurrency (the bound a resume must keep), and whether the final files equal an uninterrupted run's.

shards: one process over all reports vs two `--shard I/2` processes side by side sharing one Redis cache, merged
with judge.run.merge; prints each wall time and whether the merged files equal the single run's byte for byte.

    python -m benchmarks.scale_scenarios empty-reports [--sizes 10000,50000,100000]

empty-reports: 100 runs x N/100 requests of empty reports (no sentence, so no model call), through the library path
of `eval` in this process: load the inputs, judge, score, write the outputs, render the diagnostics (one warning
per empty report, collapsed on the console). Prints each phase's CPU seconds (this process's; the wall time is
printed too, but on a shared machine it measures the neighbours) and the CPU time per 10,000 reports at each
size: linear means that figure stays flat.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import ROOT
from benchmarks.workload import generate_empty_workload

STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def scale(args: argparse.Namespace, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchmarks.scale", "--reports", str(args.reports), "--latency",
                             str(args.latency), "--concurrency", str(args.concurrency), *extra],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def summary_line(proc: subprocess.Popen) -> dict:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"scale.py failed (exit {proc.returncode}):\n{out}")
    return json.loads(out.strip().splitlines()[-1])


def same_files(a: Path, b: Path) -> bool:
    return all((a / n).read_bytes() == (b / n).read_bytes() for n in STABLE)


def kill_resume(args: argparse.Namespace, root: Path) -> None:
    data = root / "data"
    whole = summary_line(scale(args, "--data", str(data), "--out", str(root / "whole"), "--cache",
                               str(root / "whole-cache")))
    total_reports, total_calls = whole["reports"], sum(whole["calls"])
    proc = scale(args, "--data", str(data), "--out", str(root / "out"), "--cache", str(root / "cache"))
    log = root / "out" / "judgments.jsonl"
    while not (log.exists() and log.read_bytes().count(b"\n") >= total_reports // 2):
        if proc.poll() is not None:
            sys.exit("the run ended before it could be killed: use more --reports")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = log.read_bytes().count(b"\n")
    from judge.llm.cache.backends import DiskBackend

    cache = DiskBackend(root / "cache")
    not_judged = total_calls - len(cache)  # every answered decision is in the cache
    cache.close()
    resumed = summary_line(scale(args, "--data", str(data), "--out", str(root / "out"), "--cache",
                                 str(root / "cache"), "--resume"))
    print(f"kill -9 at {written}/{total_reports} reports on disk; an uninterrupted run makes {total_calls} calls")
    print(f"resumed run: {resumed['resumed_reports']} reports taken from the log, {sum(resumed['calls'])} calls; "
          f"bound: decisions not yet judged ({not_judged}) + concurrency ({args.concurrency}) = "
          f"{not_judged + args.concurrency}")
    print(f"final files equal the uninterrupted run's: {same_files(root / 'out', root / 'whole')}")


def shards(args: argparse.Namespace, root: Path) -> None:
    server = None
    url = args.redis
    if url is None:
        port = _free_port()
        server = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port), "--save", "",
                                   "--appendonly", "no", "--dir", str(root)], stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        url = f"redis://127.0.0.1:{port}/0"
    try:
        data = root / "data"
        started = time.perf_counter()
        single = summary_line(scale(args, "--data", str(data), "--out", str(root / "single"), "--cache",
                                    str(root / "single-cache")))
        single_wall = time.perf_counter() - started
        started = time.perf_counter()
        procs = [scale(args, "--data", str(data), "--out", str(root / f"shard-{i}"), "--cache", url, "--shard",
                       f"{i}/2") for i in (1, 2)]
        parts = [summary_line(p) for p in procs]
        both_wall = time.perf_counter() - started
        from judge.run.merge import merge_outputs

        merge_outputs([root / "shard-1", root / "shard-2"], root / "merged")
        print(f"one process: {single['reports']} reports, judged in {single['seconds']}s ({single_wall:.1f}s with "
              "start-up)")
        print(f"two shards sharing {url}: {[p['reports'] for p in parts]} reports, judged in "
              f"{[p['seconds'] for p in parts]}s, {both_wall:.1f}s wall for both with start-up")
        print(f"merged files equal the single run's byte for byte: {same_files(root / 'merged', root / 'single')}")
    finally:
        if server:
            server.kill()


def empty_reports(args: argparse.Namespace, root: Path) -> None:
    import contextlib
    import io

    from judge.cli.render import print_diagnostics
    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec
    from judge.settings import ModelSettings

    runs = 100
    # CPU seconds of this process per phase: on a shared machine the wall time says more about the neighbours
    print(f"{'reports':>8} {'load':>7} {'judge+score':>11} {'write':>7} {'render':>7} {'CPU s':>7} {'per 10k':>8} "
          f"{'wall s':>7}")
    for size in (int(n) for n in args.sizes.split(",")):
        data = root / f"empty-{size}"
        reports = generate_empty_workload(data, runs, size // runs)
        wall, started = time.perf_counter(), time.process_time()
        inputs = Inputs.load([reports], data / "requests.jsonl", None, [data / "docs.jsonl"], data / "docstore")
        loaded = time.process_time()
        # no report has a sentence, so no decision is asked: the model is never called
        evaluation = evaluate(inputs, EvalSpec.of(model=ModelSettings(model="openai/fake"), cache=None),
                              out=data / "out")
        judged = time.process_time()
        write_outputs(evaluation, data / "out")
        written = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            print_diagnostics(evaluation.diagnostics, data / "out" / "run-summary.json")
        rendered = time.process_time()
        inputs.close()
        total = rendered - started
        print(f"{size:>8} {loaded - started:>7.2f} {judged - loaded:>11.2f} {written - judged:>7.2f} "
              f"{rendered - written:>7.2f} {total:>7.2f} {total / size * 10_000:>7.2f}s "
              f"{time.perf_counter() - wall:>7.1f}", flush=True)
        shutil.rmtree(data)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", choices=["kill-resume", "shards", "empty-reports"])
    parser.add_argument("--reports", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--redis", default=None)
    parser.add_argument("--sizes", default="10000,50000,100000", help="empty-reports: report counts to time")
    args = parser.parse_args()
    scenarios = {"kill-resume": kill_resume, "shards": shards, "empty-reports": empty_reports}
    with tempfile.TemporaryDirectory(prefix="argue-scenario-") as tmp:
        scenarios[args.scenario](args, Path(tmp))


if __name__ == "__main__":
    main()

"""Two scale scenarios around `benchmarks/scale.py`, each process judging one generated workload:

    python benchmarks/scale_scenarios.py kill-resume [--reports 500] [--latency 0.05] [--concurrency 32]
    python benchmarks/scale_scenarios.py shards [--reports 500] [--latency 0.05] [--concurrency 32]
        [--redis redis://127.0.0.1:6379/0]  (default: start a redis-server on a free port)

kill-resume: a run is killed with SIGKILL once half of its reports are in its judgments log, then resumed with
--resume into the same --out and cache; prints the calls the resumed run made against the decisions not yet judged
plus the concurrency (the issue's bound), and whether the final files equal an uninterrupted run's.

shards: one process over all reports vs two `--shard I/2` processes side by side sharing one Redis cache, merged
with judge.run.merge; prints each wall time and whether the merged files equal the single run's byte for byte.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def scale(args: argparse.Namespace, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(HERE / "scale.py"), "--reports", str(args.reports), "--latency",
                             str(args.latency), "--concurrency", str(args.concurrency), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


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
    from judge.llm.cache_backends import DiskBackend

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", choices=["kill-resume", "shards"])
    parser.add_argument("--reports", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--redis", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="argue-scenario-") as tmp:
        (kill_resume if args.scenario == "kill-resume" else shards)(args, Path(tmp))


if __name__ == "__main__":
    main()

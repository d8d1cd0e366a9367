"""TREC-scale throughput: N distinct generated reports judged against K fake endpoints in other processes.

    python -m benchmarks.scale [--reports 1000] [--latency 0.2] [--concurrency 32] [--endpoints 1]
                               [--sentences 8] [--cache disk|none|DIR|redis://HOST:PORT/DB]
                               [--data DIR] [--out DIR] [--shard I/N] [--resume] [--profile FILE]
                               [--model openai/fake] [--injection-detector rules+learned+script|rules+learned]
                               [--ray [--ray-workers 1,2] [--two-nodes]]

Generates N reports (10 runs x N/10 requests, `benchmarks/workload.py`'s synthetic workload: every report
distinct, so every decision is a model call; `--data DIR` keeps it there so several processes judge one workload),
starts K `judge.testing.FakeEndpoint`s with the given latency, each in its own process so the server's threads do
not compete with the client for this process's GIL and its memory is not counted in the client's peak RSS, and
judges the workload with `judge.run.evaluate.evaluate` streaming into `--out`, as `eval` does (K > 1: litellm's Router
over the K servers, as `eval --api-base A --api-base B ...`).

Prints decisions/s, model calls per endpoint, the ratio of the wall time to the ideal calls x latency /
concurrency (the issue's target for 4 endpoints at 0.2 s: within 1.2x), the client CPU per decision, and the
peak RSS of this process after loading the inputs, after judging and scoring, and at the end (the issue's target:
it barely grows from 1,000 to 10,000 reports; with the disk cache, sqlite's page cache of the decision cache
grows with it up to diskcache's 32 MB, and its memory map up to 64 MB).

`--ray` (issue 38) judges the same workload back to back in one process and on Ray with each of `--ray-workers`
(0: one process) workers (a local runtime on this machine's cores, loopback only; `--two-nodes`: a two-node
ray.cluster_utils.Cluster of one core each instead), each run with a fresh cache, and prints for each: decisions/s,
the CPU per decision of the driver, of the workers and of Ray's own daemons (read from /proc every 0.2 s), the
endpoint's CPU, the driver's and the largest worker's peak RSS, and whether judgments.jsonl, scores.tsv and
leaderboard.tsv are byte-identical to the one-process run's; then Ray's start-up time and its overhead per unit
(the round trip of an empty unit to a worker).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no price fetch
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import cProfile  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

RUNS = 10


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


# ------------------------------------------------------------------------------------------------------------
# An endpoint in a child process: prints its api_base, reports its call count when stdin says "calls", stops
# when stdin closes.
# ------------------------------------------------------------------------------------------------------------

def serve_endpoint(latency: float) -> None:
    from judge.testing import FakeEndpoint
    from judge.testing import smart_responder as responder

    with FakeEndpoint(responder, latency=latency) as ep:
        print(ep.api_base, flush=True)
        for line in sys.stdin:
            if line.strip() == "calls":
                print(json.dumps({"calls": ep.calls, "by_schema": dict(ep.calls_by_schema)}), flush=True)


class EndpointProcess:
    def __init__(self, latency: float):
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve-endpoint", str(latency)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.api_base = self.proc.stdout.readline().strip()
        if not self.api_base.startswith("http"):
            raise RuntimeError(f"fake endpoint did not start (said {self.api_base!r})")

    def calls(self) -> int:
        self.proc.stdin.write("calls\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["calls"]

    def stop(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ------------------------------------------------------------------------------------------------------------

def model_settings(api_bases: list[str], model: str = "openai/fake"):
    from judge.llm.client import ModelSettings

    if len(api_bases) == 1:
        return ModelSettings(model, api_bases[0], "x")
    return ModelSettings(model, None, "x", api_bases=tuple(api_bases))  # litellm Router over all of them


def main() -> None:
    from judge.settings import DEFAULT_INJECTION_DETECTOR, INJECTION_DETECTORS, JudgeSettings

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=int, default=1000, help="distinct reports to judge (10 runs x N/10)")
    parser.add_argument("--sentences", type=int, default=8, help="sentences per report")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds each endpoint takes per call")
    parser.add_argument("--concurrency", type=int, default=32, help="decisions in flight, in total")
    parser.add_argument("--endpoints", type=int, default=1, help="fake endpoints to start (see the docstring)")
    parser.add_argument("--cache", default="disk",
                        help="disk (a fresh temporary cache), none, a directory, or a redis:// URL")
    parser.add_argument("--data", type=Path, default=None, help="generate (or reuse) the workload here")
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: a temporary one)")
    parser.add_argument("--shard", default=None, help="judge shard I/N only")
    parser.add_argument("--resume", action="store_true", help="keep what an interrupted run wrote to --out")
    parser.add_argument("--model", default="openai/fake",
                        help="litellm model id (openai/ goes through the OpenAI SDK, hosted_vllm/ through litellm's "
                             "own HTTP handler)")
    parser.add_argument("--profile", type=Path, default=None, help="write a cProfile of the judging here")
    parser.add_argument("--injection-detector", default=DEFAULT_INJECTION_DETECTOR, choices=INJECTION_DETECTORS,
                        help="what flags text that addresses the judge, in every sentence and cited document (eval's "
                             "option; run both back to back for the learned detector's share of the client's time, "
                             "each with its own cache: the cache key ignores the detector)")
    parser.add_argument("--ray", action="store_true", help="compare one process with Ray workers (see above)")
    parser.add_argument("--ray-workers", default="0,1,2",
                        help="the runs, comma-separated: 0 one process (first, the reference), N Ray with N workers")
    parser.add_argument("--two-nodes", action="store_true", help="with --ray: a two-node cluster on this machine")
    parser.add_argument("--serve-endpoint", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_endpoint is not None:
        serve_endpoint(args.serve_endpoint)
        return

    import litellm

    from benchmarks.workload import generate_workload
    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec

    litellm.suppress_debug_info = True
    from judge.run.shards import Shard

    requests = math.ceil(args.reports / RUNS)
    endpoints = [EndpointProcess(args.latency) for _ in range(args.endpoints)]
    try:
        with tempfile.TemporaryDirectory(prefix="argue-scale-") as tmp:
            root = Path(tmp)
            data = args.data or root / "data"
            paths = {name: data / name for name in ("reports", "requests", "nuggets", "docs")}
            paths = {**paths, "requests": data / "requests.jsonl", "docs": data / "docs.jsonl"}
            if not paths["docs"].exists():
                paths = generate_workload(data, RUNS, requests, args.sentences)
            if args.ray:
                from benchmarks.ray_scale import compare

                compare(args, paths, root, endpoints, model_settings([ep.api_base for ep in endpoints], args.model))
                return
            rss_imports = peak_rss_mb()
            started = time.perf_counter()
            shard = Shard.parse(args.shard) if args.shard else None
            inputs = Inputs.load([paths["reports"]], paths["requests"], [paths["nuggets"]], [paths["docs"]],
                                 root / "docstore", shard=shard)
            load_seconds, rss_loaded = time.perf_counter() - started, peak_rss_mb()
            cache = {"none": None, "disk": root / "cache"}.get(args.cache, args.cache)
            config = EvalSpec.of(model=model_settings([ep.api_base for ep in endpoints], args.model), cache=cache,
                                 concurrency=args.concurrency, shard=shard, resume=args.resume,
                                 judge=JudgeSettings(injection_detector=args.injection_detector))
            out = args.out or root / "out"
            cpu_before = cpu_seconds()
            profiler = cProfile.Profile() if args.profile else None
            if profiler:
                profiler.enable()
            evaluation = evaluate(inputs, config, out=out)
            rss_judged = peak_rss_mb()  # judging and scoring done; the output files not yet written
            if profiler:
                profiler.disable()
                profiler.dump_stats(args.profile)
            write_outputs(evaluation, out)
            seconds, cpu = evaluation.seconds, cpu_seconds() - cpu_before
            calls = [ep.calls() for ep in endpoints]
            report(args, len(inputs.reports), evaluation, seconds, cpu, load_seconds, calls,
                   (rss_imports, rss_loaded, rss_judged, peak_rss_mb()))
    finally:
        for ep in endpoints:
            ep.stop()


def report(args, reports: int, evaluation, seconds: float, cpu: float, load_seconds: float, calls: list[int],
           rss: tuple[float, float, float, float]) -> None:
    usage = evaluation.usage
    total_calls = sum(calls)
    print(f"workload: {reports} distinct reports ({RUNS} runs), {args.sentences} sentences each; "
          f"loaded in {load_seconds:.1f}s")
    print(f"settings: {args.model}, latency {args.latency:g}s, concurrency {args.concurrency}, "
          f"{args.endpoints} endpoint(s), cache {args.cache}, injection detector {args.injection_detector}")
    rate = usage.decisions / max(seconds, 1e-9)
    print(f"judged:   {usage.decisions} decisions ({usage.model_calls} model calls, {usage.cache_hits} shared or "
          f"cached, {usage.failures} failed) in {seconds:.1f}s = {rate:.1f} decisions/s")
    # CPU time of this process is the figure other load on the machine does not distort (wall time is).
    print(f"client CPU: {cpu:.1f}s = {1000 * cpu / max(usage.decisions, 1):.2f} ms per decision "
          f"(one core's ceiling {usage.decisions / max(cpu, 1e-9):.0f} decisions/s)")
    print(f"calls per endpoint: {calls}" + (f"; resumed {evaluation.run['resumed_reports']} reports from --out"
                                            if args.resume else ""))
    if args.latency > 0 and total_calls:
        ideal = total_calls * args.latency / args.concurrency
        print(f"model-waiting: {seconds:.1f}s against the ideal calls x latency / concurrency = {ideal:.1f}s "
              f"-> {seconds / ideal:.2f}x (target <= 1.2x)")
    print(f"peak RSS: {rss[0]:.0f} MB before loading, {rss[1]:.0f} MB after loading the inputs, "
          f"{rss[2]:.0f} MB after judging and scoring, {rss[3]:.0f} MB at the end")
    print(json.dumps({"reports": reports, "latency": args.latency, "concurrency": args.concurrency,
                      "endpoints": args.endpoints, "injection_detector": args.injection_detector,
                      "seconds": round(seconds, 2),
                      "decisions": usage.decisions, "decisions_per_s": round(rate, 1),
                      "cpu_ms_per_decision": round(1000 * cpu / max(usage.decisions, 1), 2),
                      "calls": calls, "resumed_reports": evaluation.run["resumed_reports"],
                      "peak_rss_mb": round(rss[3]), "usage": dataclasses.asdict(usage)}))


if __name__ == "__main__":
    main()

"""`benchmarks/scale.py --ray`: one process against Ray workers on the same workload and endpoints, back to back
(see scale.py's docstring). Kept apart so scale.py's one-process path never imports ray."""

from __future__ import annotations

import os

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # read when ray is imported: every connection on 127.0.0.1
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import json  # noqa: E402
import resource  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
BYTE_IDENTICAL = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")


def _proc(pid: int) -> tuple[str, float, float] | None:
    """(name, CPU seconds, peak RSS MB) of a process, from /proc (None if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    hwm = next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM")), 0.0)
    return name, cpu, hwm


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class RaySampler:
    """CPU and peak RSS of Ray's processes, sampled every 0.2 s (a worker killed at the end of a run keeps the
    figures of its last sample): workers (ray::JudgeWorker) apart from Ray's own daemons and idle workers."""

    def __init__(self):
        self.seen: dict[int, tuple[str, float, float]] = {}
        self.baseline: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _ray_pids(self) -> list[int]:
        me = os.getpid()
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != me:
                line = _cmdline(int(entry))
                if "ray::" in line or "/ray/" in line or "raylet" in line or "gcs_server" in line:
                    pids.append(int(entry))
        return pids

    def _sample(self) -> None:
        for pid in self._ray_pids():
            info = _proc(pid)
            if info is not None:  # a process that was ever a worker stays one (its title may change back)
                worker = "JudgeWorker" in _cmdline(pid) or "JudgeWorker" in self.seen.get(pid, ("",))[0]
                self.seen[pid] = ("JudgeWorker" if worker else info[0], info[1], info[2])

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample()

    def start(self) -> RaySampler:
        self._sample()
        self.baseline = {pid: cpu for pid, (_, cpu, _) in self.seen.items()}
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        workers = {pid: v for pid, v in self.seen.items() if "JudgeWorker" in v[0]}
        others = {pid: v for pid, v in self.seen.items() if pid not in workers}
        return {"worker_cpu": sum(cpu - self.baseline.get(pid, 0.0) for pid, (_, cpu, _) in workers.items()),
                "ray_cpu": sum(cpu - self.baseline.get(pid, 0.0) for pid, (_, cpu, _) in others.items()),
                "worker_peak_rss_mb": max((rss for _, _, rss in workers.values()), default=0.0),
                "workers_seen": len(workers)}


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _start_ray(two_nodes: bool):
    import ray

    started = time.perf_counter()
    cluster = None
    if two_nodes:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"})
        cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        ray.init(address=cluster.address, log_to_driver=False)
    else:
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    return cluster, time.perf_counter() - started


def _unit_overhead(config, rounds: int = 50) -> tuple[float, float]:
    """(seconds to start a worker and get its hello, seconds per round trip of an empty unit)."""
    import ray

    from judge.run.executors.ray_worker import JudgeWorker, Unit, WorkerSetup

    started = time.perf_counter()
    actor = ray.remote(JudgeWorker).options(num_cpus=1).remote(WorkerSetup(config, "sig", {}, {}, None))
    ray.get(actor.hello.remote())
    start_seconds = time.perf_counter() - started
    ray.get(actor.judge.remote(Unit(0, [], {})))  # the first makes the worker's client
    started = time.perf_counter()
    for n in range(rounds):
        ray.get(actor.judge.remote(Unit(n, [], {})))
    per_unit = (time.perf_counter() - started) / rounds
    ray.kill(actor)
    return start_seconds, per_unit


class StartupClock:
    """How long each Ray run took from the executor's start to every worker's first answer (its start-up, which
    judges nothing), by wrapping RayExecutor's own steps; the judging rate is the rest."""

    def __init__(self):
        from judge.run.executors import ray_cluster

        self.seconds = 0.0
        self._began = 0.0
        judge, greet = ray_cluster.RayExecutor.judge, ray_cluster.RayExecutor._greet
        clock = self

        async def timed_judge(executor, work, deliver):
            clock._began, clock.seconds = time.perf_counter(), 0.0
            return await judge(executor, work, deliver)

        async def timed_greet(executor, ray, slots):
            await greet(executor, ray, slots)
            if not clock.seconds:
                clock.seconds = time.perf_counter() - clock._began

        ray_cluster.RayExecutor.judge = timed_judge
        ray_cluster.RayExecutor._greet = timed_greet


def compare(args, paths, root: Path, endpoints, model) -> None:
    import ray

    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.outputs import write_outputs
    from judge.run.spec import EvalSpec
    from judge.settings import JudgeSettings

    workers = [int(w) for w in args.ray_workers.split(",") if w]
    load = os.getloadavg()
    cluster, start_seconds = _start_ray(args.two_nodes)
    clock = StartupClock()
    results = []
    try:
        runs = [("one process", None) if w == 0 else (f"ray {w} worker{'s' if w > 1 else ''}", w) for w in workers]
        for label, n in runs:
            out = root / f"out-{n or 0}"
            config = EvalSpec.of(model=model, cache=root / f"cache-{n or 0}", concurrency=args.concurrency,
                                 judge=JudgeSettings(injection_detector=args.injection_detector),
                                 ray=None if n is None else ("auto" if args.two_nodes else "local"), workers=n)
            endpoint_cpu = [_proc(ep.proc.pid)[1] for ep in endpoints]
            with Inputs.load([paths["reports"]], paths["requests"], [paths["nuggets"]], [paths["docs"]],
                             root / "docstore") as inputs:
                sampler = RaySampler().start()
                cpu_before = _self_cpu()
                evaluation = evaluate(inputs, config, out=out)
                driver_cpu = _self_cpu() - cpu_before
                ray_figures = sampler.stop()
                write_outputs(evaluation, out)
            endpoint_cpu = sum(_proc(ep.proc.pid)[1] for ep in endpoints) - sum(endpoint_cpu)
            decisions = evaluation.usage.decisions
            startup = clock.seconds if n is not None else 0.0
            identical = all((out / name).read_bytes() == (root / "out-0" / name).read_bytes()
                            for name in BYTE_IDENTICAL) if (root / "out-0").is_dir() else None
            row = {"run": label, "reports": len(evaluation.judgments), "decisions": decisions,
                   "model_calls": evaluation.usage.model_calls, "seconds": round(evaluation.seconds, 2),
                   "decisions_per_s": round(decisions / evaluation.seconds, 1),
                   "worker_startup_s": round(startup, 2),
                   "judging_decisions_per_s": round(decisions / (evaluation.seconds - startup), 1),
                   "driver_cpu_ms": round(1000 * driver_cpu / decisions, 2),
                   "worker_cpu_ms": round(1000 * ray_figures["worker_cpu"] / decisions, 2),
                   "ray_daemons_cpu_ms": round(1000 * ray_figures["ray_cpu"] / decisions, 2),
                   "endpoint_cpu_ms": round(1000 * endpoint_cpu / decisions, 2),
                   "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                   "worker_peak_rss_mb": round(ray_figures["worker_peak_rss_mb"]),
                   "byte_identical_to_one_process": identical}
            results.append(row)
            print(json.dumps(row), flush=True)
        boot, per_unit = _unit_overhead(EvalSpec.of(model=model, cache=None))
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
    base = results[0]["judging_decisions_per_s"]
    print(f"machine: {os.cpu_count()} cores, load average before the runs {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"workload: {results[0]['reports']} reports, {results[0]['decisions']} decisions; latency {args.latency:g}s, "
          f"concurrency {args.concurrency} per process/worker, {len(endpoints)} endpoint(s)"
          + (", two-node cluster" if args.two_nodes else ", local runtime"))
    for row in results:
        client = row["driver_cpu_ms"] + row["worker_cpu_ms"] + row["ray_daemons_cpu_ms"]
        print(f"{row['run']:>14}: {row['judging_decisions_per_s']:7.1f} decisions/s judging "
              f"({row['judging_decisions_per_s'] / base:.2f}x; {row['decisions_per_s']:.1f}/s with the workers' "
              f"start-up of {row['worker_startup_s']:.1f}s), "
              f"client CPU {client:.2f} ms/decision (driver {row['driver_cpu_ms']:.2f}, workers "
              f"{row['worker_cpu_ms']:.2f}, Ray daemons {row['ray_daemons_cpu_ms']:.2f}), endpoint "
              f"{row['endpoint_cpu_ms']:.2f} ms; peak RSS driver {row['driver_peak_rss_mb']} MB, worker "
              f"{row['worker_peak_rss_mb']} MB; byte-identical: {row['byte_identical_to_one_process']}")
    print(f"ray start-up: {start_seconds:.1f}s (runtime), {boot:.2f}s (a worker to its first answer); "
          f"per unit: {1000 * per_unit:.1f} ms round trip of an empty unit")
    print(json.dumps({"ray_start_s": round(start_seconds, 2), "worker_start_s": round(boot, 2),
                      "unit_round_trip_ms": round(1000 * per_unit, 2), "load_average": load, "runs": results}))

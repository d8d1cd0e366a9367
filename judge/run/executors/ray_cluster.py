"""The driver side of `eval --ray`: judge a run's reports on the workers of a Ray cluster.

The reports left to judge are split into units by the hash the shards use (judge.run.shards.shard_of over the
unit count), so a report's unit depends only on its run and request ids. Each worker (judge.run.executors.
ray_worker.JudgeWorker, one Ray actor) judges up to two units at a time with its own async client, `--concurrency`
decisions in flight; the driver sends each unit the reports and the documents they cite. A unit is a Ray streaming
generator: the worker yields each answer (a sealed cache entry) with its usage, and each judgment, as it arrives,
and the driver alone writes them: each answer into the decision cache at once (an answer already recorded under a
key stays), each judgment into the run's stream (the same journal and final order as one process, so the outputs
are byte-identical to a one-process run), the usage into the run's tally.

Faults: a worker that dies (its process killed, its node lost) loses only the calls it had in flight: what it had
sent is kept. The driver starts a replacement and sends the unit's unfinished reports again (answers already
cached are not asked again), up to `MAX_ATTEMPTS` times per unit; the run's diagnostics say so under "ray". A
worker that cannot import argue-judge, runs another version, or cannot reach the model server stops the run before
anything is asked, with one line naming its node.

Budget: `--max-cost` is checked by the driver at every answer and sent with every unit as the budget left, which
that worker's client will not spend past; with W units in flight at once, each may spend up to the budget left
when it was sent, so a run can pass --max-cost by at most what the other units in flight spend before the driver
stops it. Stopping, the driver sends no more units and tells every worker to ask nothing more; the calls in flight
end and their answers are kept, and only then does the run end (exit 4) with what the whole run spent.
`--give-up-after` counts transport failures in a row per worker; once one worker gives up on the server, the units
sent after it ask nothing (their uncached decisions are recorded failed, not asked), and the run ends failed (exit
5) as one process does.

Set-up is bounded: a cluster address must answer a TCP connection within CONNECT_TIMEOUT and `ray.init` must
connect within INIT_TIMEOUT (it runs off the main thread, so Ctrl-C and SIGTERM are heard meanwhile); `--workers`
is at most WORKERS_PER_CORE a core of the cluster.

The local runtime (`--ray` without an address) keeps Ray on the loopback interface: it binds 127.0.0.1 and sets
RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 (without it Ray connects its own processes over the machine's external address)
and RAY_USAGE_STATS_ENABLED=0 before Ray starts.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import signal
import socket
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import BudgetExceeded, ConfigurationError, OutputError
from judge.formats.judgments import ReportJudgment
from judge.llm.cache.backends import CacheBackendError
from judge.llm.client import Usage
from judge.llm.judges import judge_of
from judge.run.executors.base import Judged, Judging, add_usage, budget_reached
from judge.run.executors.ray_worker import Hello, JudgeWorker, Unit, UnitPart, WorkerSetup
from judge.run.shards import shard_of

LOCAL = "local"
MAX_ATTEMPTS = 3           # a unit whose worker dies this many times stops the run
UNITS_PER_WORKER = 4       # at least this many units per worker, so a lost unit is a small share of the work
UNIT_REPORTS = 64          # and at most about this many reports per unit
IN_FLIGHT_PER_WORKER = 2   # units a worker holds at once: the next is there when one ends
CONNECT_TIMEOUT = 15.0     # seconds a cluster address has to answer a TCP connection
INIT_TIMEOUT = 180.0       # seconds ray.init has to connect to a cluster
WORKERS_PER_CORE = 4       # at most this many workers per core of the cluster (each is a process)


@dataclass(eq=False)  # a worker is itself: two on one node are not equal
class _Slot:
    """One worker: its actor, its node, and the units it holds."""

    actor: Any
    node_id: str
    cpus: float
    threads: int | None
    node: str = "?"
    busy: int = 0


class RayExecutor:
    def __init__(self, address: str, workers: int | None = None):
        self.address = address
        self.workers = workers
        self._started_runtime = False
        self._namespace = f"argue-judge-{os.getpid()}"
        self._started = 0  # workers started by this run, for their names (argue-judge-worker-RUN-N)
        self._run = uuid.uuid4().hex[:8]

    # -- the cluster ---------------------------------------------------------------------------------------

    def _connect(self) -> Any:
        if self.address == LOCAL:
            # Read when ray is imported: set first. Every connection on the loopback (see the module docstring).
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            import ray
        except ImportError as exc:
            raise ConfigurationError("--ray needs the [ray] extra: pip install 'argue-judge[ray]'") from exc
        if ray.is_initialized():  # a notebook or a test connected already: use that cluster
            return ray
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                   "namespace": self._namespace, "logging_level": "ERROR"}
        if self.address == LOCAL:
            options |= {"num_cpus": _cores(), "_node_ip_address": "127.0.0.1"}
        else:
            options["address"] = self.address
            self._check_reachable()
        try:
            with keeping_the_sigterm_handler():
                if self.address == LOCAL:
                    # On the main thread: the runtime's processes die with the thread that started them (Linux's
                    # parent-death signal), and starting them waits for nothing outside this machine.
                    ray.init(**options)
                else:
                    _init_within(ray, options, INIT_TIMEOUT)
        except Exception as exc:  # unreachable address, version mismatch, a malformed address: one line
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise ConfigurationError(f"--ray {self.address}: cannot start or reach the Ray cluster: {reason}") \
                from None
        self._started_runtime = True
        return ray

    def _check_reachable(self) -> None:
        """A cluster address must answer a TCP connection within CONNECT_TIMEOUT (Ray itself retries a closed port
        for minutes, deaf to SIGTERM); ray:// needs Ray Client, which the [ray] extra installs."""
        if self.address == "auto":
            return  # the cluster this machine belongs to: Ray finds it (and says at once when there is none)
        if self.address.startswith("ray://"):
            try:
                import grpc  # noqa: F401 -- what Ray Client needs beyond ray itself
            except ImportError:
                raise ConfigurationError(f"--ray {self.address}: Ray Client (ray://) needs grpcio: pip install "
                                         "'argue-judge[ray]' (which installs ray[client])") from None
        host, _, port = self.address.split("://")[-1].rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        try:
            with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
                pass
        except (OSError, ValueError) as exc:
            why = " ".join(str(getattr(exc, "strerror", None) or exc).split()) or type(exc).__name__
            raise ConfigurationError(f"--ray {self.address}: cannot reach the Ray cluster: nothing answers on "
                                     f"{host}:{port} ({why}); check the address (the head node's GCS port, 6379 "
                                     "by default, or ray://HEAD:10001 for Ray Client)") from None

    def close(self) -> None:
        if self._started_runtime:
            import ray

            ray.shutdown()
            self._started_runtime = False

    def _nodes(self, ray: Any) -> list[tuple[str, str, int]]:
        """(node id, address, cores) of every live node with cores, the driver's node first."""
        here = ray.get_runtime_context().get_node_id()
        nodes = [(n["NodeID"], n.get("NodeManagerAddress", "?"), int(n.get("Resources", {}).get("CPU", 0)))
                 for n in ray.nodes() if n.get("Alive")]
        nodes = [n for n in nodes if n[2] > 0]
        if not nodes:
            raise ConfigurationError(f"--ray {self.address}: the cluster has no node with a CPU to run a worker on")
        return sorted(nodes, key=lambda n: (n[0] != here, n[0]))

    def _placements(self, ray: Any, embedded: bool) -> list[tuple[str, str, float, int | None]]:
        """(node id, address, CPUs the worker takes, llama.cpp threads) of each worker to start. The embedded judge:
        one worker per node, taking the node's cores for its threads. Otherwise `workers` (default: every core of
        the cluster) one-core workers, spread over the nodes in proportion to their cores."""
        nodes = self._nodes(ray)
        if embedded:
            return [(node_id, address, cores, cores) for node_id, address, cores in nodes]
        total = sum(cores for *_, cores in nodes)
        wanted = self.workers or total
        if wanted > WORKERS_PER_CORE * total:  # each worker is a process: thousands would take the machine down
            raise ConfigurationError(f"--workers {wanted}: the Ray cluster at {self.address} has {total} cores; give "
                                     f"at most {WORKERS_PER_CORE * total} workers ({WORKERS_PER_CORE} a core), or "
                                     "leave --workers out for one a core")
        free = {node_id: float(cores) for node_id, _, cores in nodes}
        chosen: list[tuple[str, str]] = []
        while len(chosen) < wanted:  # the node with the most free cores, the driver's first among equals
            node_id, address, _ = max(nodes, key=lambda n: (free[n[0]], -nodes.index(n)))
            free[node_id] -= 1
            chosen.append((node_id, address))
        # More workers than a node's cores (--workers above the core count): they share its cores.
        share = {node_id: min(1.0, cores / sum(1 for c, _ in chosen if c == node_id))
                 for node_id, _, cores in nodes if any(c == node_id for c, _ in chosen)}
        return [(node_id, address, share[node_id], None) for node_id, address in chosen]

    def _start(self, ray: Any, setup: WorkerSetup, node_id: str, cpus: float) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = ray.remote(JudgeWorker).options(
            num_cpus=cpus,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=True),
            max_restarts=0, max_concurrency=IN_FLIGHT_PER_WORKER + 1,
            name=f"argue-judge-worker-{self._run}-{self._started}")
        self._started += 1
        return actor.remote(setup)

    async def _greet(self, ray: Any, slots: list[_Slot]) -> None:
        """Ask every new worker where it runs; one line naming the node of the first that cannot judge."""
        from judge._version import __version__

        answers = await asyncio.gather(*(_awaitable(slot.actor.hello.remote()) for slot in slots),
                                       return_exceptions=True)
        for slot, answer in zip(slots, answers, strict=True):
            if isinstance(answer, BaseException):
                raise ConfigurationError(worker_failure(answer, slot.node)) from None
            assert isinstance(answer, Hello)
            slot.node = answer.node
            if answer.version != __version__:
                raise ConfigurationError(f"the Ray worker on node {answer.node} runs argue-judge {answer.version}, "
                                         f"this driver {__version__}: install the same version on every node")
            if answer.problem:
                raise ConfigurationError(f"the Ray worker on node {answer.node} {answer.problem}; check --api-base "
                                         "and that every node of the cluster can reach the server")

    # -- the run -------------------------------------------------------------------------------------------

    async def judge(self, work: Judging, deliver: Callable[[ReportJudgment], None]) -> Judged:
        ray = self._connect()
        config = work.config
        embedded = judge_of(config.model).in_process
        cache_target = _absolute_cache(config.cache)
        placements = self._placements(ray, embedded)

        def setup(threads: int | None) -> WorkerSetup:
            return WorkerSetup(config, work.signature, work.inputs.requests, work.inputs.banks, cache_target,
                               threads if config.model.threads is None else None)

        slots: list[_Slot] = []
        tally = _Tally(work, deliver)
        running: dict[asyncio.Task[None], tuple[_Slot, int]] = {}

        def budget_left() -> float | None:
            return None if config.max_cost is None else max(0.0, config.max_cost - tally.usage.cost)

        def take(part: UnitPart) -> None:
            tally.take(part)
            if tally.stopping is None and config.max_cost is not None and tally.usage.cost > config.max_cost:
                tally.stop(BudgetExceeded("past --max-cost"), slots)

        try:  # from the first worker started: whatever ends the run, every worker it started is stopped
            slots += [_Slot(self._start(ray, setup(threads), node_id, cpus), node_id, cpus, threads, address)
                      for node_id, address, cpus, threads in placements]
            await self._greet(ray, slots)
            units = split_units(work, len(slots))
            queue: deque[int] = deque(sorted(units))
            attempts: dict[int, int] = {number: 0 for number in units}
            while queue or running:
                for slot in slots:
                    while queue and tally.stopping is None and slot.busy < IN_FLIGHT_PER_WORKER:
                        number = queue.popleft()
                        reports = [r for r in units[number] if r.key not in tally.delivered]
                        unit = Unit(number, reports, _documents_of(work, reports), budget_left(),
                                    tally.usage.stopped)
                        running[asyncio.ensure_future(_stream(slot.actor.judge.remote(unit), take))] = \
                            (slot, number)
                        slot.busy += 1
                if not running:
                    break  # stopping: the units not sent stay unjudged
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    slot, number = running.pop(task)
                    slot.busy -= 1
                    exc = task.exception()
                    if exc is None:
                        continue
                    if isinstance(exc, _OnTheDriver):
                        raise exc.error
                    cause = _cause(exc)
                    if isinstance(cause, BudgetExceeded):  # a worker's client refused to pass its budget
                        tally.stop(cause, slots)
                        continue
                    if cause is not None:  # the worker raised something else the user can act on
                        raise cause from None
                    if not _died(exc):
                        raise ConfigurationError(worker_failure(exc, slot.node)) from None
                    if tally.stopping is not None:
                        continue  # the run is ending anyway; what the worker sent is kept
                    attempts[number] += 1
                    if attempts[number] >= MAX_ATTEMPTS:
                        raise ConfigurationError(f"unit {number} of {len(units)} lost its worker "
                                                 f"{MAX_ATTEMPTS} times (last on node {slot.node}); see the "
                                                 "Ray logs of that node") from None
                    left = sum(1 for r in units[number] if r.key not in tally.delivered)
                    if left:
                        queue.appendleft(number)
                    if slot in slots:  # the first of its units to fail: start its replacement
                        await self._replace(ray, slots, slot, setup)
                    tally.events.append(("ray", f"a Ray worker on node {slot.node} died while judging unit "
                                                f"{number}; its {left} unfinished reports were judged again (the "
                                                "answers it had sent were kept)"))
            if tally.stopping is not None:  # every unit in flight has ended: the tally holds all that was spent
                raise budget_reached(tally.usage, config.max_cost)
        finally:
            for task in running:
                task.cancel()
            for slot in slots:
                ray.kill(slot.actor)
        return Judged(tally.usage, tally.kernels, tally.events)

    async def _replace(self, ray: Any, slots: list[_Slot], dead: _Slot,
                       setup: Callable[[int | None], WorkerSetup]) -> None:
        """A new worker in the place of a dead one (on the same node if it is still there, else anywhere)."""
        fresh = _Slot(self._start(ray, setup(dead.threads), dead.node_id, dead.cpus), dead.node_id, dead.cpus,
                      dead.threads, dead.node)
        slots[slots.index(dead)] = fresh
        await self._greet(ray, [fresh])


class _OnTheDriver(Exception):
    """A failure of the driver's own while taking a part (the journal, the cache, a progress callback), raised as
    it is by the run: not the worker's doing."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


async def _stream(parts: Any, take: Callable[[UnitPart], None]) -> None:
    """Read one unit's parts (a Ray ObjectRefGenerator) as the worker yields them, handing each to `take`; the
    worker's failure, or its death, is raised after the parts it sent."""
    async for ref in parts:
        part = await ref
        try:
            take(part)
        except Exception as exc:
            raise _OnTheDriver(exc) from exc


class _Tally:
    """The driver's side of the parts the workers stream: each answer into the decision cache the moment it
    arrives (so a kill, a dead worker or --max-cost loses none), each judgment into the run's stream, the usage,
    events and progress summed; and, once the run must stop, why (`stopping`)."""

    def __init__(self, work: Judging, deliver: Callable[[ReportJudgment], None]):
        self.work = work
        self.deliver = deliver
        self.usage = Usage()
        self.events: list[tuple[str, str]] = []
        self.kernels: dict[str, Any] | None = None
        self.delivered: set[tuple[str, str]] = set()
        self.stopping: BaseException | None = None

    def take(self, part: UnitPart) -> None:
        work = self.work
        if work.cache is not None and part.entries:  # answers first: a kill after this loses none
            backend = work.cache.backend
            try:
                for key, value in part.entries.items():
                    if backend.get(key) is None:  # the first answer recorded under a key is the one replayed
                        backend.set(key, value)
            except CacheBackendError as exc:
                raise OutputError(f"cannot write the decision cache in {work.cache.location}: {exc}") from exc
        add_usage(self.usage, part.usage)
        self.events.extend(part.events)
        self.kernels = part.kernels or self.kernels
        for judgment in part.judgments:
            if judgment.key in self.delivered:
                continue  # judged again after its worker died having sent it: the first one stands
            self.delivered.add(judgment.key)
            self.deliver(judgment)
            for sentence in judgment.sentences:
                for decision in sentence.decisions:
                    work.progress.decision_done(decision.cached)
                if sentence.status != "truncated":
                    work.progress.sentence_done()

    def stop(self, reason: BaseException, slots: list[_Slot]) -> None:
        """The run ends with `reason` once the units in flight end: no unit is sent any more, and every worker is
        told to ask nothing more, so the calls it has in flight end and their answers are streamed and kept."""
        if self.stopping is not None:
            return
        self.stopping = reason
        for slot in slots:
            slot.actor.stop_spending.remote()


def _cores() -> int:
    """The cores this process may run on (its CPU affinity), the local runtime's CPU count."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _init_within(ray: Any, options: dict[str, Any], timeout: float) -> None:
    """`ray.init(**options)`, given up after `timeout` seconds. It runs in a thread of its own, so the main thread
    stays free for Ctrl-C and SIGTERM meanwhile (Ray retries an unanswering cluster for minutes inside calls that
    hold the main thread)."""
    box: dict[str, BaseException] = {}

    def init() -> None:
        try:
            ray.init(**options)
        except BaseException as exc:  # noqa: BLE001 -- raised in the caller's thread
            box["error"] = exc

    quiet = _NotTheMainThread()
    worker_log = logging.getLogger("ray._private.worker")
    worker_log.addFilter(quiet)
    thread = threading.Thread(target=init, name="argue-judge-ray-init", daemon=True)
    try:
        thread.start()
        thread.join(timeout)
    finally:
        worker_log.removeFilter(quiet)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout:.0f} s")
    if "error" in box:
        raise box["error"]


class _NotTheMainThread(logging.Filter):
    """Ray warns that it sets no SIGTERM handler off the main thread: the driver keeps its own (on purpose)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "SIGTERM handler is not set" not in record.getMessage()


@contextmanager
def keeping_the_sigterm_handler() -> Iterator[None]:
    """`ray.init` replaces the driver's SIGTERM handler twice over: in Python (`sys.exit(15)`) and, as its core
    worker connects, in C (a stack dump, then abort: exit -6). Put back the one the driver had (the CLI's ends the
    run like Ctrl-C: one line, exit 143, the journal kept for --resume); signal.signal re-installs it in C too. A
    SIGTERM in the seconds `ray.init` itself takes still meets Ray's handler: blocking the signal meanwhile would
    block it in the Ray processes started then too, which inherit the mask and are stopped with SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; Ray sets none from another thread either
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)


def split_units(work: Judging, workers: int) -> dict[int, list[Any]]:
    """The reports left to judge (read from their files), grouped into units by shard_of over the unit count; in
    each unit in canonical order. Empty units are left out."""
    count = max(workers * UNITS_PER_WORKER, math.ceil(len(work.todo) / UNIT_REPORTS), 1)
    units: dict[int, list[Any]] = {}
    for entry in work.todo:
        units.setdefault(shard_of(entry.run_id, entry.request_id, count), []).append(entry)
    return {number: [work.inputs.reports.read(entry) for entry in entries] for number, entries in units.items()}


def _documents_of(work: Judging, reports: list[Any]) -> dict[str, Any]:
    """The documents the unit's reports cite (those the collection has)."""
    documents = {}
    for report in reports:
        for sentence in report.sentences:
            for doc_id in sentence.citations:
                if doc_id not in documents:
                    document = work.inputs.documents.get(doc_id)
                    if document is not None:
                        documents[doc_id] = document
    return documents


def _absolute_cache(target: Any) -> str | None:
    if target is None:
        return None
    text = str(target)
    return text if "://" in text else str(Path(text).resolve())


def _awaitable(ref: Any) -> asyncio.Future[Any]:
    return asyncio.wrap_future(ref.future())


def _cause(exc: BaseException) -> BaseException | None:
    """The user-facing error a worker raised (over budget, a refused model, a cache it could not read), if any."""
    from judge.errors import InputError

    cause = getattr(exc, "cause", None)
    known = (BudgetExceeded, ConfigurationError, OutputError, InputError)
    if isinstance(cause, known):
        return cause
    return exc if isinstance(exc, known) else None


def _died(exc: BaseException) -> bool:
    """Whether `exc` says the worker process or its node is gone (rather than that the judging failed)."""
    from ray.exceptions import ActorDiedError, ActorUnavailableError, NodeDiedError, RayActorError, WorkerCrashedError

    return isinstance(exc, ActorDiedError | ActorUnavailableError | NodeDiedError | RayActorError
                      | WorkerCrashedError)


def worker_failure(exc: BaseException, node: str) -> str:
    """One line for a worker that failed to start or to answer: the import error when there is one."""
    text = " ".join(str(exc).split())
    for marker in ("ModuleNotFoundError", "ImportError"):
        if marker in text:
            detail = text[text.index(marker):].split(" Traceback")[0][:200]
            return (f"the Ray worker on node {node} cannot import argue-judge ({detail}): install argue-judge[ray], "
                    "the driver's version, on every node")
    return f"the Ray worker on node {node} failed: {text[:300]}"

"""Does a disturbed evaluation write the same bytes as an undisturbed one?

    python -m benchmarks.faults [--rate 0.3] [--seed 7] [--concurrency 4] [--latency 0.02]
    python -m benchmarks.faults --every 3 --budgets     # the retry budgets a flaky server needs
    python -m benchmarks.faults --dead [--timeout 2]    # how long a dead server takes to fail

On the bundled example, against the local FakeEndpoint and its smart responder (never the network):

1. an undisturbed run (fresh cache) gives the reference judgments.jsonl, scores.tsv and leaderboard.tsv;
2. for each fault kind, a run (fresh cache) in which a share `--rate` of all chat requests get that fault:
   HTTP 429 / 500 / 503, a dropped connection, a truncated body, an HTML page instead of JSON, a completion
   with no choices, and an answer that is not JSON (re-asked by instructor). It prints the HTTP calls, faults
   injected, transport retries, re-asks, failed decisions, and whether the three outputs equal the reference
   byte for byte; when a decision failed (its retries or re-asks all hit faults), a second run with the same
   cache, still faulty, shows that failures are asked again rather than replayed;
3. `argue-judge eval` in a subprocess (PYTHONPATH = this checkout), killed with SIGKILL once half of the
   reference's decisions are in the cache, then run again to completion: calls of the resumed run, decisions
   asked twice, and byte equality.

`--every N` faults every N-th chat request instead of a random share. `--budgets` runs, instead of 2. and 3.,
the transport faults (500, disconnect) with each of `--attempts` transport attempts and malformed answers with
each of `--reasks` re-asks (each against an undisturbed reference with the same policy: the re-ask budget is in
the signature) and prints the failed decisions and whether the outputs equal the reference, over `--seeds`
seeds (random faults), or as many repeats (`--every`: the faulted requests are the same, their timing is not).

`--dead` runs, instead, the bundled example with the default retry policy against a port nobody listens on
(connections refused) and against a FakeEndpoint that never answers (each attempt ended by `--timeout`), and
prints the wall time, the decisions asked, failed and left unasked, and the run's failure line.

The extra fault kinds (truncated, HTML, empty choices) are injected by a FakeEndpoint subclass below; the
others use FakeEndpoint.fail_next.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import diskcache
import litellm

from benchmarks import ROOT
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.outputs import write_outputs
from judge.run.spec import EvalSpec
from judge.settings import ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint, smart_responder
from judge.testing.server import ChatHandler

litellm.suppress_debug_info = True
for noisy in ("instructor", "LiteLLM", "litellm", "httpx"):
    logging.getLogger(noisy).setLevel(logging.CRITICAL)

EXAMPLES = ROOT / "examples"
STABLE = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv")
KINDS: tuple[int | str, ...] = (429, 500, 503, "disconnect", "truncated", "html", "empty_choices", "malformed")
_BUILT_IN = {429, 500, 503, "disconnect", "malformed"}
# Backoff shortened so the benchmark takes seconds; the attempts and re-asks are the defaults (the re-ask budget
# is in the signature, so the outputs stay comparable).
FAST_RETRY = RetryPolicy(wait_multiplier=0.01, wait_max=0.05)


class FaultyEndpoint(FakeEndpoint):
    """FakeEndpoint that gives each chat request, with probability `rate` (seeded), the fault `kind`."""

    def __init__(self, kind: int | str, rate: float, seed: int, every: int | None = None, **kwargs):
        self.kind, self.rate, self.every = kind, rate, every
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self.http_calls = 0
        self.injected = 0
        super().__init__(smart_responder, **kwargs)

    def _handle_chat(self, handler: ChatHandler, request: dict) -> None:
        with self._rng_lock:
            self.http_calls += 1
            hit = self.http_calls % self.every == 0 if self.every else self._rng.random() < self.rate
            self.injected += hit
        if not hit:
            return super()._handle_chat(handler, request)
        if self.kind in _BUILT_IN:
            self.fail_next(self.kind)
            return super()._handle_chat(handler, request)
        if self.kind == "empty_choices":
            handler.send_json(200, {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0,
                                    "model": "fake", "choices": [], "usage": None})
        elif self.kind == "html":
            _send_raw(handler, 200, "text/html", b"<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>")
        elif self.kind == "truncated":
            body = b'{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [{"index": 0, "message": {"con'
            _send_raw(handler, 200, "application/json", body, declared=len(body) + 400)
        else:  # pragma: no cover - KINDS and this method go together
            raise ValueError(f"unknown fault kind {self.kind!r}")
        return None


def _send_raw(handler: ChatHandler, status: int, content_type: str, body: bytes, declared: int | None = None) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(declared or len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()
    except OSError:
        pass
    handler.close_connection = True  # a declared length longer than the body: the client sees it cut short


@dataclass
class Outcome:
    calls: int
    injected: int
    decisions: int
    retries: int
    reasks: int
    failures: int
    equal: bool


def run_once(ep: FaultyEndpoint | FakeEndpoint, cache: Path, out: Path, reference: Path | None,
             concurrency: int, retry: RetryPolicy = FAST_RETRY) -> Outcome:
    calls_before = getattr(ep, "http_calls", ep.calls)
    injected_before = getattr(ep, "injected", 0)
    config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=10.0), retry=retry,
                         cache=cache, concurrency=concurrency)
    with Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                     [EXAMPLES / "docs.jsonl"], index_dir=cache / "docstore") as inputs:
        evaluation = evaluate(inputs, config)
    write_outputs(evaluation, out)
    usage = evaluation.usage
    calls = getattr(ep, "http_calls", ep.calls) - calls_before
    return Outcome(calls, getattr(ep, "injected", 0) - injected_before, usage.decisions, usage.transport_retries,
                   calls - usage.model_calls - usage.transport_retries, usage.failures,
                   reference is not None and same_outputs(out, reference))


def same_outputs(out: Path, reference: Path) -> bool:
    return all((out / name).read_bytes() == (reference / name).read_bytes() for name in STABLE)


def kill_and_resume(root: Path, reference: Path, total: int, latency: float) -> dict[str, object]:
    """SIGKILL an `argue-judge eval` subprocess once half of `total` decisions are cached, then resume it."""
    cache, out = root / "cache", root / "out"
    with FakeEndpoint(smart_responder, latency=latency) as ep:
        args = [sys.executable, "-c", "from judge.cli.app import main; main()", "eval", str(EXAMPLES / "reports"),
                "--requests", str(EXAMPLES / "requests.jsonl"), "--docs", str(EXAMPLES / "docs.jsonl"),
                "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake", "--api-base", ep.api_base,
                "--api-key", "x", "--cache-dir", str(cache), "--out", str(out), "-j", "2"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cached_at_kill = 0
        deadline = time.monotonic() + 300
        while process.poll() is None and time.monotonic() < deadline:
            cached_at_kill = cached_entries(cache)
            if cached_at_kill >= total // 2:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
        process.wait()
        killed = process.returncode == -signal.SIGKILL
        cached_at_kill = cached_entries(cache)
        calls_killed = ep.calls
        leftovers = sorted(p.name for p in out.iterdir()) if out.exists() else []
        resumed = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        calls_resumed = ep.calls - calls_killed
    return {"killed": killed, "cached_at_kill": cached_at_kill, "calls_before_kill": calls_killed,
            "outputs_left_by_the_killed_run": leftovers, "resume_exit": resumed.returncode,
            "calls_resumed": calls_resumed, "asked_twice": calls_killed + calls_resumed - total,
            "equal": resumed.returncode == 0 and same_outputs(out, reference)}


def cached_entries(cache: Path) -> int:
    if not (cache / "decisions" / "cache.db").exists():
        return 0
    try:
        with diskcache.Cache(str(cache / "decisions")) as store:
            return len(store)
    except Exception:  # the writer holds a lock for a moment: try again on the next poll
        return 0


def refusing_port() -> int:
    """A local port with nothing listening on it: every connection is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fail_against(api_base: str, root: Path, timeout: float, concurrency: int) -> str:
    """The bundled example judged against a server that is down, with the default retry policy."""
    config = EvalSpec.of(model=ModelSettings("openai/fake", api_base, "x", timeout=timeout), cache=root / "cache",
                         concurrency=concurrency)
    started = time.perf_counter()
    with Inputs.load([EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
                     [EXAMPLES / "docs.jsonl"], index_dir=root / "docstore") as inputs:
        evaluation = evaluate(inputs, config)
    usage = evaluation.usage
    return (f"{time.perf_counter() - started:7.1f} s  {usage.model_calls} asked, {usage.transport_retries} retries, "
            f"{usage.failures} failed ({getattr(usage, 'unasked', 0)} not asked)\n    {evaluation.failure}")


def dead(root: Path, timeout: float, concurrency: int) -> None:
    refused = fail_against(f"http://127.0.0.1:{refusing_port()}/v1", root / "refused", timeout, concurrency)
    print(f"connections refused:    {refused}")
    with FakeEndpoint(smart_responder) as ep:
        ep.fail_next(["hang"] * 1_000_000)
        print(f"hangs (--timeout {timeout:g}):  {fail_against(ep.api_base, root / 'hangs', timeout, concurrency)}")


def budgets(root: Path, rate: float, every: int | None, seeds: list[int], concurrency: int, attempts: list[int],
            reasks: list[int]) -> None:
    """Failed decisions and byte equality for each transport-attempt and re-ask budget (see the docstring)."""
    references: dict[RetryPolicy, Path] = {}

    def reference(policy: RetryPolicy) -> Path:
        if policy not in references:
            references[policy] = root / f"ref-{len(references)}"
            with FakeEndpoint(smart_responder) as ep:
                run_once(ep, references[policy] / "cache", references[policy] / "out", None, concurrency, policy)
        return references[policy] / "out"

    pattern = f"every {every}th request ({len(seeds)} runs)" if every else f"{rate:.0%} of requests (seeds {seeds})"
    print(f"faults on {pattern}, concurrency {concurrency}: failed decisions per run, '=' when the outputs equal "
          "the undisturbed run's")
    sweeps = [(kind, "transport attempts", [replace(FAST_RETRY, transport_attempts=n) for n in attempts])
              for kind in (500, "disconnect")]
    sweeps.append(("malformed", "re-asks", [replace(FAST_RETRY, reasks=n) for n in reasks]))
    for kind, budget, policies in sweeps:
        cells = []
        for policy in policies:
            runs = []
            for seed in seeds:  # with --every, repeats (the faulted requests are the same, their timing is not)
                work = root / f"{kind}-{budget}-{len(cells)}-{seed}"
                with FaultyEndpoint(kind, rate, seed, every=every) as ep:
                    runs.append(run_once(ep, work / "cache", work / "out", reference(policy), concurrency, policy))
            value = policy.transport_attempts if budget == "transport attempts" else policy.reasks
            cells.append(f"{value}: " + " ".join(f"{r.failures}{'=' if r.equal else ''}" for r in runs))
        print(f"{kind!s:<11}{budget:<20}" + "  |  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=0.3, help="share of chat requests that get the fault")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer in the kill -9 test")
    parser.add_argument("--dead", action="store_true", help="time a dead and a hanging server instead")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds per request attempt with --dead")
    parser.add_argument("--every", type=int, default=None, help="fault every N-th request instead of a share")
    parser.add_argument("--budgets", action="store_true", help="sweep the retry budgets instead")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per budget with random faults")
    parser.add_argument("--attempts", default="1,2,3,4,5,6", help="transport attempts to try with --budgets")
    parser.add_argument("--reasks", default="0,1,2,3,4", help="re-ask budgets to try with --budgets")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="argue-faults-") as tmp:
        root = Path(tmp)
        if args.dead:
            dead(root, args.timeout, args.concurrency)
            return
        if args.budgets:
            budgets(root, args.rate, args.every, list(range(args.seed, args.seed + args.seeds)), args.concurrency,
                    [int(n) for n in args.attempts.split(",")], [int(n) for n in args.reasks.split(",")])
            return
        with FakeEndpoint(smart_responder) as ep:
            base = run_once(ep, root / "ref-cache", root / "ref", None, args.concurrency)
        reference = root / "ref"
        print(f"undisturbed: {base.calls} calls, {base.decisions} decisions, {base.failures} failures")
        print(f"\n{args.rate:.0%} of requests faulted, seed {args.seed}, concurrency {args.concurrency}")
        print(f"{'fault':<14}{'calls':>6}{'faults':>7}{'retries':>8}{'re-asks':>8}{'failed':>7}  equal  "
              "rerun: calls failed equal")
        for number, kind in enumerate(KINDS):
            work = root / f"kind-{number}"
            started = time.perf_counter()
            with FaultyEndpoint(kind, args.rate, args.seed + number, every=args.every) as ep:
                first = run_once(ep, work / "cache", work / "out", reference, args.concurrency)
                again = run_once(ep, work / "cache", work / "out2", reference, args.concurrency) \
                    if first.failures else None
            rerun = f"{again.calls:>6} {again.failures:>6} {'yes' if again.equal else 'NO'}" if again else "-"
            print(f"{kind!s:<14}{first.calls:>6}{first.injected:>7}{first.retries:>8}{first.reasks:>8}"
                  f"{first.failures:>7}  {'yes' if first.equal else 'NO ':<5}  {rerun:<24}"
                  f"({time.perf_counter() - started:.1f} s)")

        print(f"\nkill -9 at 50% ({base.decisions} decisions; subprocess, latency {args.latency} s, -j 2)")
        result = kill_and_resume(root / "kill", reference, base.calls, args.latency)
        for key, value in result.items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()

"""Decisions per second against the local FakeEndpoint with a fixed latency, by client concurrency.

    python -m benchmarks.throughput [--latency 0.2] [--per-slot 8] [--eval-concurrency 16]

1. `DecisionClient.ask` alone (the full instructor -> litellm -> openai -> httpx stack, no cache), distinct
   messages, a small response model (ClaimsAbsence), at concurrency 1, 2, 4, 8, 16, 32. With latency L the
   ceiling is concurrency / L decisions per second; the ratio achieved / ceiling shows what the client costs.
   The same at latency 0 gives the client's own ceiling (CPU per decision, one process).
2. The full `evaluate()` (walk, prompts, validation, scoring) on a generated workload at one concurrency
   level, no cache. Sentences need 1-3 decisions in sequence; there are enough sentences to fill the slots.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from benchmarks.workload import generate_workload, load
from judge.judging.decisions.claims_absence import ClaimsAbsence
from judge.llm.client import DecisionClient, ModelSettings
from judge.run.evaluate import evaluate
from judge.run.spec import EvalSpec
from judge.testing import FakeEndpoint, smart_responder

LEVELS = (1, 2, 4, 8, 16, 32)


def small_answer(request: dict) -> dict:
    return {"rationale": "No absence is claimed.", "claims_absence": False}


async def ask_many(ep: FakeEndpoint, concurrency: int, n: int, tag: str) -> tuple[float, int]:
    client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x"), None, concurrency=concurrency)
    messages = [[{"role": "system", "content": "Does the sentence claim that information is absent?"},
                 {"role": "user", "content": f"<sentence>\nSentence {tag}-{i}: the plant opened in 2023.\n"
                                             "</sentence>"}] for i in range(n)]
    started = time.perf_counter()
    answers = await asyncio.gather(*(client.ask(m, ClaimsAbsence, {}) for m in messages))
    seconds = time.perf_counter() - started
    failed = sum(a.response is None for a in answers)
    return seconds, failed


def client_table(latency: float, per_slot: int) -> None:
    with FakeEndpoint(small_answer, latency=latency) as ep:
        asyncio.run(ask_many(ep, 4, 8, f"warm-{latency}"))  # imports, connections, litellm's first-call work
        print(f"\nDecisionClient.ask, latency {latency:g}s, no cache, {per_slot} decisions per slot (min 16)")
        print(f"{'concurrency':>11} {'decisions':>9} {'seconds':>8} {'decisions/s':>11} {'limit/s':>9} "
              f"{'achieved/limit':>14}")
        for c in LEVELS:
            n = max(16, per_slot * c)
            before = ep.calls
            seconds, failed = asyncio.run(ask_many(ep, c, n, f"{latency}-{c}"))
            assert ep.calls - before == n and not failed, "one call per decision, none failed"
            rate = n / seconds
            if latency > 0:
                limit = c / latency
                print(f"{c:>11} {n:>9} {seconds:>8.2f} {rate:>11.1f} {limit:>9.1f} {rate / limit:>14.2f}")
            else:
                print(f"{c:>11} {n:>9} {seconds:>8.2f} {rate:>11.1f} {'inf':>9} {'-':>14}  "
                      f"({1000 / rate:.1f} ms per decision)")


def evaluate_row(latency: float, concurrency: int, runs: int, requests: int) -> None:
    with tempfile.TemporaryDirectory(prefix="argue-throughput-") as tmp, \
            FakeEndpoint(smart_responder, latency=latency) as ep:
        root = Path(tmp)
        inputs = load(generate_workload(root / "data", runs, requests), root / "docstore")
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=None,
                             concurrency=concurrency)
        evaluation = evaluate(inputs, config)
        decisions = evaluation.usage.decisions
        assert ep.calls == decisions and evaluation.usage.failures == 0
        rate, limit = decisions / evaluation.seconds, concurrency / latency
        sentences = sum(len(j.sentences) for j in evaluation.judgments)
        print(f"\nevaluate() on {len(inputs.reports)} reports ({sentences} sentences), latency {latency:g}s, "
              f"concurrency {concurrency}, no cache")
        print(f"{decisions} decisions in {evaluation.seconds:.2f}s = {rate:.1f} decisions/s; "
              f"limit {limit:.1f}/s; achieved/limit {rate / limit:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--per-slot", type=int, default=8, help="decisions per concurrency slot per level")
    parser.add_argument("--eval-concurrency", type=int, default=16)
    parser.add_argument("--eval-runs", type=int, default=3)
    parser.add_argument("--eval-requests", type=int, default=30)
    args = parser.parse_args()
    client_table(args.latency, args.per_slot)
    client_table(0.0, args.per_slot)
    evaluate_row(args.latency, args.eval_concurrency, args.eval_runs, args.eval_requests)


if __name__ == "__main__":
    main()

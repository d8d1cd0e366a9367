"""How fast is a fully cached re-run of `evaluate`?

    python -m benchmarks.cached_rerun [--runs 10] [--requests 100] [--sentences 8] [--concurrency 64]

Generates the synthetic evaluation of benchmarks/workload.py (runs x requests reports of N sentences, some
cited; documents and v3 nugget banks to match) in a temporary directory, judges it once cold against the local
FakeEndpoint (latency 0) to fill the decision cache, then judges it again with the same settings: every decision
must come from the cache. Prints wall time and decisions/s of both passes, and the endpoint calls the re-run made (must
be 0).

The judge is the shared `smart_responder` of `judge.testing.responders` (the one the tests use): valid answers to
every decision, cheap to compute.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import litellm

from benchmarks.workload import generate_workload, load
from judge.llm.client import ModelSettings
from judge.run.evaluate import evaluate
from judge.run.outputs import write_outputs
from judge.run.score import score
from judge.run.spec import EvalSpec
from judge.testing import FakeEndpoint, smart_responder

litellm.suppress_debug_info = True
for noisy in ("instructor", "LiteLLM", "litellm", "httpx"):
    logging.getLogger(noisy).setLevel(logging.CRITICAL)


# ------------------------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="argue-cached-rerun-") as tmp, FakeEndpoint(smart_responder) as ep:
        root = Path(tmp)
        started = time.perf_counter()
        paths = generate_workload(root / "data", args.runs, args.requests, args.sentences)
        inputs = load(paths, root / "docstore")
        sentences = sum(len(r.sentences) for r in inputs.reports)
        print(f"workload: {len(inputs.reports)} reports ({args.runs} runs x {args.requests} requests), "
              f"{sentences} sentences, {len(inputs.documents)} documents; generated and loaded in "
              f"{time.perf_counter() - started:.1f}s")
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x"), cache=root / "cache",
                             concurrency=args.concurrency)

        cold = evaluate(inputs, config)
        cold_calls = ep.calls
        print(f"cold run:    {cold.usage.decisions:6d} decisions in {cold.seconds:7.2f}s = "
              f"{cold.usage.decisions / cold.seconds:8.1f} decisions/s  (endpoint calls: {cold_calls}, "
              f"failures: {cold.usage.failures}, concurrency {args.concurrency}, latency 0)")

        inputs = load(paths, root / "docstore")  # a fresh process would reopen the inputs too
        cached = evaluate(inputs, config)
        rerun_calls = ep.calls - cold_calls
        print(f"cached run:  {cached.usage.decisions:6d} decisions in {cached.seconds:7.2f}s = "
              f"{cached.usage.decisions / cached.seconds:8.1f} decisions/s  (cache hits: "
              f"{cached.usage.cache_hits}, endpoint calls during the re-run: {rerun_calls})")
        started = time.perf_counter()
        score(cached.judgments, cached.judge_signature.short())
        print(f"  of which scoring the judgments (no model, no cache): {time.perf_counter() - started:.2f}s")
        started = time.perf_counter()
        write_outputs(cached, root / "out")
        print(f"write_outputs (judgments, scores, leaderboard, summary, cache log): "
              f"{time.perf_counter() - started:.2f}s")
        print(f"speed-up of the cached re-run: {cold.seconds / cached.seconds:.1f}x")
        if rerun_calls != 0 or cached.usage.model_calls != 0:
            raise SystemExit(f"FAIL: the cached re-run reached the endpoint {rerun_calls} times")


if __name__ == "__main__":
    main()

"""Batch jobs against online calls on the NeuCLIR example run (9 requests, ../shared/data/neuclir24/example-run):
rounds, requests per round, wall time and the cost at the batch and the online price, with the fake batch API taking
`--turnaround` seconds per job (a provider takes minutes to hours; the rounds are what a slow window multiplies).

    python -m benchmarks.batch_rounds [--turnaround 5] [--price-as gpt-4o-mini]

Both runs are judged by the same fake endpoint (judge.testing.smart_responder) with no cache, so they ask the same
questions; the script checks that their judgments are identical. Costs are the tokens each run reported, priced as
`--price-as` online (litellm's price map) and at its batch price (judge.llm.batch.batch_cost).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import litellm

import judge
from benchmarks import ROOT
from judge.formats.judgments import dumps
from judge.llm.batch import batch_cost
from judge.testing import FakeEndpoint, smart_responder
from judge.testing.batch_server import FakeBatchServer

DATA = Path(os.environ.get("ARGUE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "neuclir24"
RUN = DATA / "example-run"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turnaround", type=float, default=5.0, help="seconds each fake job stays in progress")
    parser.add_argument("--price-as", default="gpt-4o-mini", help="the model whose prices the tokens are costed at")
    args = parser.parse_args()
    inputs = {"requests": str(RUN / "requests.jsonl"), "docs": str(RUN / "docs.jsonl"),
              "nuggets": str(DATA / "nuggets")}
    with FakeEndpoint(smart_responder) as chat, FakeBatchServer(chat, turnaround=args.turnaround) as batches:
        common = {"model": "openai/fake", "api_base": batches.api_base, "api_key": "x", "cache": None, **inputs}
        started = time.perf_counter()
        online = judge.evaluate(str(RUN / "reports.jsonl"), **common)
        online_seconds = time.perf_counter() - started
        started = time.perf_counter()
        batch = judge.evaluate(str(RUN / "reports.jsonl"), batch=True, batch_poll=0.5, **common)
        batch_seconds = time.perf_counter() - started
        per_round = [job["request_counts"]["total"] for job in batches.jobs]
    same = [dumps(j) for j in online.judgments] == [dumps(j) for j in batch.judgments]
    tokens_in, tokens_out = batch.usage.prompt_tokens, batch.usage.completion_tokens
    online_in, online_out = litellm.cost_per_token(model=args.price_as, prompt_tokens=tokens_in,
                                                   completion_tokens=tokens_out)
    at_batch = batch_cost(args.price_as, tokens_in, tokens_out)
    print(json.dumps({
        "reports": len(batch.judgments), "requests": sum(per_round), "online_calls": online.usage.model_calls,
        "rounds": batch.run["batch"]["rounds"], "requests_per_round": per_round,
        "turnaround_seconds": args.turnaround, "wall_online_seconds": round(online_seconds, 1),
        "wall_batch_seconds": round(batch_seconds, 1), "tokens_in": tokens_in, "tokens_out": tokens_out,
        f"cost_online_{args.price_as}": round(online_in + online_out, 4),
        f"cost_batch_{args.price_as}": None if at_batch is None else round(at_batch, 4),
        "judgments_identical": same}, indent=1))


if __name__ == "__main__":
    main()

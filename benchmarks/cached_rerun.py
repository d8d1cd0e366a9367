"""How fast is a fully cached re-run of `evaluate`?

    python benchmarks/cached_rerun.py [--runs 10] [--requests 100] [--sentences 8] [--concurrency 64]

Generates a synthetic evaluation (runs x requests reports of N sentences, some cited; documents and v3
nugget banks to match) in a temporary directory, judges it once cold against the local FakeEndpoint
(latency 0) to fill the decision cache, then judges it again with the same settings: every decision must come
from the cache. Prints wall time and decisions/s of both passes, and the endpoint calls the re-run made (must
be 0).

The judge is the shared `smart_responder` of `judge.testing.responders` (the one the tests use): valid answers to
every decision, cheap to compute. Also importable: `generate_workload` is reused by benchmarks/throughput.py.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no price fetch
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import litellm  # noqa: E402

from judge.llm.client import ModelSettings  # noqa: E402
from judge.run.evaluate import EvalConfig, Inputs, evaluate, score, write_outputs  # noqa: E402
from judge.testing import FakeEndpoint, smart_responder  # noqa: E402

litellm.suppress_debug_info = True
for noisy in ("instructor", "LiteLLM", "litellm", "httpx"):
    logging.getLogger(noisy).setLevel(logging.CRITICAL)

TOWNS = ["Avenor", "Brisk", "Calderra", "Dunmore", "Elstow", "Farrow", "Glenmark", "Hollin", "Istra",
         "Jarrow", "Kestel", "Lorne", "Marrow", "Norwick", "Oldham", "Penrith"]
PROJECTS = ["bridge", "tram line", "harbour wall", "library", "water plant", "solar farm", "ring road",
            "hospital"]
LEAD_INS = ["", "Records show that ", "Reports say that ", "It is documented that ", "Sources state that "]


# ------------------------------------------------------------------------------------------------------------
# A synthetic evaluation
# ------------------------------------------------------------------------------------------------------------

def _facts(q: int) -> dict[str, str]:
    town, project = TOWNS[q % len(TOWNS)], PROJECTS[(q // len(TOWNS)) % len(PROJECTS)]
    return {"town": town, "project": f"the {town} {project} {q}", "year": str(2000 + q % 24),
            "workers": str(50 + q * 7), "firm": f"{TOWNS[(q + 5) % 16]} Works {q}"}


def generate_workload(root: Path, runs: int, requests: int, sentences: int = 8) -> dict[str, Path]:
    """Requests, 4 documents and a nugget bank per request, and one report per (run, request).

    Per report: an intro (uncited), cited facts (one per document, some with a wrong number so they are not
    supported), an uncited new claim and an absence claim; repeated in turn up to `sentences`. Runs word the
    same facts differently, so their decisions differ.
    """
    (root / "reports").mkdir(parents=True, exist_ok=True)
    (root / "nuggets").mkdir(exist_ok=True)
    with (root / "requests.jsonl").open("w") as req_out, (root / "docs.jsonl").open("w") as doc_out:
        for q in range(requests):
            f, rid = _facts(q), f"req-{q}"
            problem = (f"Report on {f['project']}: when it began, who built it, how many people work on it "
                       "and what it cost.")
            request = {"request_id": rid, "title": f["project"].capitalize(),
                       "background": "A synthetic request.", "problem_statement": problem}
            req_out.write(json.dumps(request) + "\n")
            docs = [f"Work on {f['project']} began in {f['year']}. Crews cleared the site first.",
                    f"{f['firm']} builds {f['project']}. The firm is based in {f['town']}.",
                    f"{f['project'].capitalize()} employs {f['workers']} workers. Most of them live nearby.",
                    f"The council of {f['town']} approved {f['project']} after a long debate."]
            for d, text in enumerate(docs):
                doc_out.write(json.dumps({"doc_id": f"{rid}-d{d}", "title": f"Doc {d} on {f['project']}",
                                          "text": text}) + "\n")
            bank = {
                "When did it begin?": {"question_id": f"{rid}-q1", "aggregator_type": "OR",
                                       "importance": "vital",
                                       "answers": {f["year"]: {"answer": f["year"],
                                                               "references": [{"doc_id": f"{rid}-d0"}]}}},
                "Who builds it?": {"question_id": f"{rid}-q2", "aggregator_type": "OR", "importance": "okay",
                                   "answers": {f["firm"]: {"answer": f["firm"],
                                                           "references": [{"doc_id": f"{rid}-d1"}]}}},
                "How many people work on it?": {
                    "question_id": f"{rid}-q3", "aggregator_type": "OR", "importance": "okay",
                    "answers": {f"{f['workers']} workers": {"answer": f"{f['workers']} workers",
                                                            "references": [{"doc_id": f"{rid}-d2"}]}}},
                "Has the cost been published?": {"question_id": f"{rid}-q4", "aggregator_type": "OR",
                                                 "importance": "okay", "absence": True,
                                                 "answers": {"No": {"answer": "No", "references": []}}},
            }
            (root / "nuggets" / f"nuggets_{rid}.v3.json").write_text(
                json.dumps({"query_id": rid, "format_version": "v3", "nugget_bank": bank}))
    for r in range(runs):
        with (root / "reports" / f"run-{r:02d}.jsonl").open("w") as out:
            for q in range(requests):
                f, rid, lead = _facts(q), f"req-{q}", LEAD_INS[r % len(LEAD_INS)]
                wrong = str(int(f["workers"]) + 1 + r)
                pool = [
                    (f"This report (version {r}) is about {f['project']}.", []),
                    (f"{lead}work on {f['project']} began in {f['year']} (run {r}).", [f"{rid}-d0"]),
                    (f"{lead}{f['firm']} builds {f['project']} (run {r}).", [f"{rid}-d1"]),
                    (f"{lead}{f['project']} employs {wrong} workers (run {r}).", [f"{rid}-d2"]),
                    (f"{lead}{f['project']} employs {f['workers']} workers (run {r}).", [f"{rid}-d2"]),
                    (f"{lead}the council of {f['town']} approved {f['project']} (run {r}).", [f"{rid}-d3"]),
                    (f"{lead}{f['project']} will open in {2030 + r} (run {r}).", []),
                    (f"{lead}the cost of {f['project']} has not been published (run {r}).", []),
                ]
                chosen = [pool[i % len(pool)] for i in range(sentences)]
                out.write(json.dumps({"metadata": {"run_id": f"run-{r:02d}", "topic_id": rid},
                                      "responses": [{"text": t[:1].upper() + t[1:], "citations": c}
                                                    for t, c in chosen]}) + "\n")
    return {"reports": root / "reports", "requests": root / "requests.jsonl", "docs": root / "docs.jsonl",
            "nuggets": root / "nuggets"}


def load(paths: dict[str, Path], index_dir: Path) -> Inputs:
    return Inputs.load([paths["reports"]], paths["requests"], [paths["nuggets"]], [paths["docs"]], index_dir)


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
        config = EvalConfig(model=ModelSettings("openai/fake", ep.api_base, "x"), cache_dir=root / "cache",
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

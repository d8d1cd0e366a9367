"""Floors of the client stack: decisions/s and client CPU per call, layer by layer, one zero-latency endpoint.

    python -m benchmarks.client_floor [--reports 200] [--concurrency 32] [--rounds 1] [--modes a,b,...]

First records the decisions a real run asks (`judge.run.evaluate.evaluate` on `--reports` generated reports, the
workload of benchmarks/scale.py: every (messages, response model, validation context, contract) that
`DecisionClient.ask` received), then replays them all, at `--concurrency` in flight, against one
`judge.testing.FakeEndpoint` of zero latency in another process (so its threads take neither this process's GIL
nor its CPU figure), through each layer of the stack:

    aiohttp     a bare aiohttp POST of the request body instructor would send, the answer parsed with json
    openai      the OpenAI SDK's AsyncOpenAI.chat.completions.create, same body (max_retries 0)
    litellm     litellm.acompletion with the same messages and response_format json_schema: no instructor
    instructor  instructor.from_litellm(litellm.acompletion, JSON_SCHEMA).create_with_completion, exactly as
                DecisionClient calls it (response model, validation context, re-ask budget), without our retry
                loop, cache or accounting
    ask         DecisionClient.ask, the judge's full path, no cache (eval --cache none)
    ask-disk    DecisionClient.ask with a fresh disk decision cache (eval's default)

Each mode replays the same recorded decisions (distinct questions, so every one is a model call), after a
warm-up of 64 calls; with `--rounds N` the modes alternate N times. Prints, per mode and round, decisions/s and
the CPU time of this process per call (user + system; the figure other load on the machine distorts least).
Figures only: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.scale import RUNS, EndpointProcess, cpu_seconds
from benchmarks.workload import generate_workload

MODES = ("aiohttp", "openai", "litellm", "instructor", "ask", "ask-disk")
WARM_UP = 64


def record_decisions(api_base: str, reports: int, root: Path) -> list[tuple[Any, ...]]:
    """Every ask of a real evaluation of `reports` generated reports, in the order they were asked."""
    import math

    import judge.run.evaluate as evaluate_module
    from judge.llm.client import DecisionClient, ModelSettings
    from judge.run.evaluate import evaluate
    from judge.run.inputs import Inputs
    from judge.run.spec import EvalSpec

    recorded: list[tuple[Any, ...]] = []

    class Recording(DecisionClient):
        async def ask(self, messages, response_model, context, contract=""):
            recorded.append((messages, response_model, context, contract))
            return await super().ask(messages, response_model, context, contract)

    paths = generate_workload(root / "data", RUNS, math.ceil(reports / RUNS), 8)
    inputs = Inputs.load([paths["reports"]], paths["requests"], [paths["nuggets"]], [paths["docs"]],
                         root / "docstore")
    config = EvalSpec.of(model=ModelSettings("openai/fake", api_base, "x"), cache=None, concurrency=32)
    real = evaluate_module.DecisionClient
    evaluate_module.DecisionClient = Recording  # type: ignore[misc]
    try:
        evaluate(inputs, config)
    finally:
        evaluate_module.DecisionClient = real  # type: ignore[misc]
    return recorded


class Layers:
    """One callable per mode, each taking one recorded decision and making one model call."""

    def __init__(self, api_base: str, root: Path, concurrency: int, model: str = "openai/fake"):
        import aiohttp
        import instructor
        import litellm
        from openai import AsyncOpenAI

        from judge.llm.cache.store import open_decision_cache
        from judge.llm.client import DecisionClient, ModelSettings
        from judge.llm.instructor_compat import Untemplated, as_templated, instructor_model

        litellm.suppress_debug_info = True
        self.api_base = api_base
        self.settings = ModelSettings(model, api_base, "x")
        self.litellm = litellm
        self.instructor = instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)
        self.instructor_model, self.as_templated, self.Untemplated = instructor_model, as_templated, Untemplated
        self.openai = AsyncOpenAI(base_url=api_base, api_key="x", max_retries=0)
        self.aiohttp = aiohttp
        self.session: Any = None
        # As eval at this concurrency: DecisionClient lets litellm's logging worker run 4 handlers per call in
        # flight (judge.llm.client.keep_up_with_logging), for every mode alike.
        self.clients = {"ask": DecisionClient(self.settings, None, concurrency=concurrency),
                        "ask-disk": DecisionClient(self.settings, open_decision_cache(root / "cache"),
                                                   concurrency=concurrency)}

    def body(self, decision: tuple[Any, ...]) -> dict[str, Any]:
        """The request instructor sends for this decision (messages as its templating renders them)."""
        from textwrap import dedent

        messages, response_model, context, _ = decision
        wrapper = self.instructor_model(response_model)
        sent = [{**m, "content": dedent(m["content"])} for m in messages] if context else messages
        return {"model": "fake", "messages": sent, **self.settings.sampling(),
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": wrapper.__name__,
                                                    "schema": wrapper.model_json_schema()}}}

    async def call(self, mode: str, decision: tuple[Any, ...]) -> None:
        messages, response_model, context, contract = decision
        if mode == "aiohttp":
            if self.session is None:
                self.session = self.aiohttp.ClientSession()
            async with self.session.post(f"{self.api_base}/chat/completions", json=self.body(decision),
                                         headers={"Authorization": "Bearer x"}) as response:
                answer = json.loads(await response.read())
            json.loads(answer["choices"][0]["message"]["content"])
        elif mode == "openai":
            completion = await self.openai.chat.completions.create(**self.body(decision))
            json.loads(completion.choices[0].message.content)
        elif mode == "litellm":
            body = self.body(decision)
            completion = await self.litellm.acompletion(
                model=self.settings.model, api_base=self.api_base, api_key="x", messages=body["messages"],
                response_format=body["response_format"], timeout=self.settings.timeout, num_retries=0,
                drop_params=True, **self.settings.sampling())
            json.loads(completion.choices[0].message.content)
        elif mode == "instructor":
            await self.instructor.chat.completions.create_with_completion(
                messages=self.as_templated(messages) if context else messages,
                response_model=self.instructor_model(response_model), context=self.Untemplated(context),
                max_retries=1,
                model=self.settings.model, api_base=self.api_base, api_key="x", timeout=self.settings.timeout,
                num_retries=0, drop_params=True, **self.settings.sampling())
        else:
            answered = await self.clients[mode].ask(messages, response_model, context, contract)
            if answered.response is None:
                raise RuntimeError(f"{mode}: {answered.error}")

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None


def retagged(decisions: list[tuple[Any, ...]], tag: str) -> list[tuple[Any, ...]]:
    """The decisions with `tag` appended to their last message: new questions (a cache has not seen them)."""
    return [([*d[0][:-1], {**d[0][-1], "content": d[0][-1]["content"] + f"\n\n({tag})"}], *d[1:])
            for d in decisions]


async def replay(layers: Layers, mode: str, decisions: list[tuple[Any, ...]], concurrency: int
                 ) -> tuple[float, float]:
    """(seconds, CPU seconds) to make every decision's call through `mode`, `concurrency` at a time."""
    slots = asyncio.Semaphore(concurrency)

    async def one(decision: tuple[Any, ...]) -> None:
        async with slots:
            await layers.call(mode, decision)

    await asyncio.gather(*(one(d) for d in retagged(decisions[:WARM_UP], f"warm-up {mode}")))
    cpu, started = cpu_seconds(), time.perf_counter()
    await asyncio.gather(*(one(d) for d in decisions))
    return time.perf_counter() - started, cpu_seconds() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reports", type=int, default=200, help="generated reports whose decisions are replayed")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1, help="alternate the modes this many times")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--model", default="openai/fake",
                        help="litellm model id the replay calls (the recording uses openai/fake), e.g. "
                             "hosted_vllm/fake for litellm's own HTTP handler instead of the OpenAI SDK")
    parser.add_argument("--json", action="store_true", help="also print one JSON line per measurement")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}")

    endpoint = EndpointProcess(0.0)
    try:
        with tempfile.TemporaryDirectory(prefix="argue-floor-") as tmp:
            root = Path(tmp)
            decisions = record_decisions(endpoint.api_base, args.reports, root)
            print(f"{len(decisions)} decisions recorded from {args.reports} reports; replayed at concurrency "
                  f"{args.concurrency}, zero-latency endpoint in another process")
            print(f"{'round':>5} {'mode':>10} {'calls':>6} {'seconds':>8} {'decisions/s':>11} {'CPU ms/call':>11}")

            async def run_all() -> None:
                layers = Layers(endpoint.api_base, root, args.concurrency, args.model)
                try:
                    for round_ in range(1, args.rounds + 1):
                        for mode in modes:
                            # ask-disk would answer a second round from its cache: give it fresh questions
                            batch = decisions if mode != "ask-disk" else retagged(decisions, f"round {round_}")
                            seconds, cpu = await replay(layers, mode, batch, args.concurrency)
                            n = len(batch)
                            print(f"{round_:>5} {mode:>10} {n:>6} {seconds:>8.2f} {n / seconds:>11.1f} "
                                  f"{1000 * cpu / n:>11.2f}", flush=True)
                            if args.json:
                                print(json.dumps({"round": round_, "mode": mode, "calls": n,
                                                  "seconds": round(seconds, 3),
                                                  "decisions_per_s": round(n / seconds, 1),
                                                  "cpu_ms_per_call": round(1000 * cpu / n, 3)}), flush=True)
                finally:
                    await layers.close()

            asyncio.run(run_all())
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()

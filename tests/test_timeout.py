"""`--timeout`: a server that accepts the connection and never answers costs at most timeout x transport attempts
per decision, and the decision is recorded failed (never a verdict); the timeout is in run-summary.json and in
no signature or cache key."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from conftest import smart_responder

from judge.judging.decisions.claims_absence import ClaimsAbsence
from judge.judging.signature import JudgeSignature
from judge.llm.cache import DecisionCache
from judge.llm.client import DecisionClient
from judge.run.evaluate import EvalConfig, Inputs, evaluate, write_outputs
from judge.settings import JudgeSettings, ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TWO_ATTEMPTS = RetryPolicy(transport_attempts=2, wait_multiplier=0.01, wait_max=0.05)
MESSAGES = [{"role": "user", "content": "<sentence>\nThe plant opened in 2023.\n</sentence>"}]


def test_a_hanging_server_costs_at_most_timeout_x_attempts_and_the_decision_fails(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        ep.fail_next(["hang"] * 10)
        cache = DecisionCache(tmp_path / "cache")
        client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x", timeout=0.5), cache,
                                retry=TWO_ATTEMPTS)
        started = time.monotonic()
        answered = asyncio.run(client.ask(MESSAGES, ClaimsAbsence, {}))
        elapsed = time.monotonic() - started
        assert ep.calls == 2 and ep.faults_served == ["hang", "hang"]  # both attempts were sent, and both hung
        cache.close()
    assert 0.9 < elapsed < 10  # two attempts of 0.5 s each (plus start-up), not 120 s x 6
    assert answered.response is None and answered.error and "Timeout" in answered.error
    assert client.usage.failures == 1 and client.usage.transport_retries == 1
    # a timeout is a transport failure, not an answer: it is not cached, so the next run asks again
    assert DecisionCache(tmp_path / "cache").stats()["entries"] == 0


def test_eval_against_a_server_that_never_answers_finishes_in_bounded_time(tmp_path):
    report = (EXAMPLES / "reports" / "run-cited.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "one.jsonl").write_text(report + "\n", encoding="utf-8")
    with FakeEndpoint(smart_responder) as ep, Inputs.load(
            [tmp_path / "one.jsonl"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
            [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore") as inputs:
        ep.fail_next(["hang"] * 1000)
        config = EvalConfig(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=0.5), retry=TWO_ATTEMPTS,
                            cache_dir=tmp_path / "cache", concurrency=8)
        started = time.monotonic()
        evaluation = evaluate(inputs, config, out=tmp_path / "out")
        elapsed = time.monotonic() - started
        write_outputs(evaluation, tmp_path / "out")
    # 6 sentences, at most 8 decisions in flight, each given up after 2 x 0.5 s: a few seconds, never minutes
    assert elapsed < 20
    decisions = [d for j in evaluation.judgments for s in j.sentences for d in s.decisions]
    assert decisions and all(d.verdict is None and d.error for d in decisions)
    assert all(s.status == "failed" for j in evaluation.judgments for s in j.sentences if s.status != "truncated")
    summary = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["run"]["timeout_seconds"] == 0.5
    assert summary["usage"]["failures"] == len(decisions)


@pytest.mark.parametrize("timeout", [0.5, 120.0, 600.0])
def test_the_timeout_is_in_no_signature(timeout):
    settings = ModelSettings("openai/fake", timeout=timeout)
    assert "timeout" not in settings.sampling()  # the cache key's sampling part
    assert JudgeSignature.of(settings, RetryPolicy(), JudgeSettings()).short() == \
        JudgeSignature.of(ModelSettings("openai/fake"), RetryPolicy(), JudgeSettings()).short()
    assert ModelSettings("m").timeout == 120.0  # the documented default

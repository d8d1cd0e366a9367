"""`--timeout`: a server that accepts the connection and never answers costs at most timeout x transport attempts
per decision, and the decision is recorded failed (never a verdict); the timeout is in run-summary.json and in
no signature or cache key."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from judge.judging.decisions.claims_absence import ClaimsAbsence
from judge.judging.signature import JudgeSignature
from judge.llm.cache.store import open_decision_cache
from judge.llm.client import DecisionClient
from judge.run.evaluate import evaluate
from judge.run.inputs import Inputs
from judge.run.outputs import write_outputs
from judge.run.spec import EvalSpec
from judge.settings import JudgeSettings, ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TWO_ATTEMPTS = RetryPolicy(transport_attempts=2, wait_multiplier=0.01, wait_max=0.05)
MESSAGES = [{"role": "user", "content": "<sentence>\nThe plant opened in 2023.\n</sentence>"}]


def test_a_hanging_server_costs_at_most_timeout_x_attempts_and_the_decision_fails(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        ep.fail_next(["hang"] * 10)
        cache = open_decision_cache(tmp_path / "cache")
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
    assert open_decision_cache(tmp_path / "cache").stats()["entries"] == 0


def test_eval_against_a_server_that_never_answers_finishes_in_bounded_time(tmp_path):
    report = (EXAMPLES / "reports" / "run-cited.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "one.jsonl").write_text(report + "\n", encoding="utf-8")
    with FakeEndpoint(smart_responder) as ep, Inputs.load(
            [tmp_path / "one.jsonl"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
            [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore") as inputs:
        ep.fail_next(["hang"] * 1000)
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=0.5), retry=TWO_ATTEMPTS,
                             cache=tmp_path / "cache", concurrency=8)
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


# A dead or hanging server is given up on after RetryPolicy.give_up_after transport failures in a
# row (--give-up-after): the rest is left unasked (recorded failed, not cached) and the run exits 5 in seconds.

def refusing_api_base() -> str:
    """A local port nobody listens on: every connection is refused at once."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_a_server_refusing_connections_fails_the_run_in_seconds_naming_it(tmp_path):
    from typer.testing import CliRunner

    from judge.api import read_judgments
    from judge.cli.app import app

    api_base = refusing_api_base()
    args = ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"), "--docs",
            str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"), "--model", "openai/fake",
            "--api-base", api_base, "--api-key", "x", "--timeout", "2", "--cache-dir", str(tmp_path / "cache"),
            "--out", str(tmp_path / "out")]
    started = time.monotonic()
    result = CliRunner().invoke(app, args)  # the default retry policy: backoff from 0.5 s, 6 attempts
    elapsed = time.monotonic() - started
    assert result.exit_code == 5, result.output
    [line] = [line for line in result.stderr.splitlines() if line.strip()]
    assert line.startswith(f"argue-judge: run failed: gave up on {api_base} after 16 transport failures in a row")
    assert "--resume" in line
    assert elapsed < 30  # 77 s before (every decision spent its 6 attempts and their backoff); ~7 s now
    summary = json.loads((tmp_path / "out" / "run-summary.json").read_text(encoding="utf-8"))
    assert summary["usage"]["unasked"] > 0 and summary["usage"]["stopped"] == summary["failed"]
    decisions = [d for j in read_judgments(tmp_path / "out" / "judgments.jsonl") for s in j.sentences
                 for d in s.decisions if d.judge == "openai/fake"]
    assert decisions and all(d.verdict is None and d.error for d in decisions)
    # (a question asked twice at once shares one answer, so records can outnumber the decisions left unasked)
    assert sum(d.error.startswith("not asked: gave up on") for d in decisions) >= summary["usage"]["unasked"]
    assert open_decision_cache(tmp_path / "cache").stats()["entries"] == 0  # nothing unasked (or failed) is cached


def test_a_hanging_server_is_given_up_on_after_k_timeouts_in_a_row(tmp_path):
    with FakeEndpoint(smart_responder) as ep, Inputs.load(
            [EXAMPLES / "reports"], EXAMPLES / "requests.jsonl", [EXAMPLES / "nuggets"],
            [EXAMPLES / "docs.jsonl"], index_dir=tmp_path / "docstore") as inputs:
        ep.fail_next(["hang"] * 1000)
        config = EvalSpec.of(model=ModelSettings("openai/fake", ep.api_base, "x", timeout=0.5),
                             retry=RetryPolicy(wait_multiplier=0.01, wait_max=0.05, give_up_after=8),
                             cache=tmp_path / "cache", concurrency=4)
        started = time.monotonic()
        evaluation = evaluate(inputs, config)
        elapsed = time.monotonic() - started
        hung, api_base = ep.calls, ep.api_base
    # 8 timeouts, 4 at a time, of 0.5 s each: about 1 s, where every decision's 6 attempts took minutes before
    assert elapsed < 15 and 8 <= hung <= 8 + 4
    assert evaluation.usage.stopped and evaluation.failure == evaluation.usage.stopped
    assert f"gave up on {api_base} after 8 transport failures in a row" in evaluation.failure
    assert evaluation.usage.unasked > 0 and evaluation.usage.failures >= evaluation.usage.unasked


def test_an_answer_between_transport_failures_starts_the_count_again(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        # 2 failures, an answer, 2 failures, an answer: never 3 in a row, so a limit of 3 is never reached
        ep.fail_next([500, 500])
        client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x", timeout=5.0), None,
                                retry=RetryPolicy(wait_multiplier=0.01, wait_max=0.05, give_up_after=3))

        async def two_decisions():
            first = await client.ask(MESSAGES, ClaimsAbsence, {})
            ep.fail_next([500, 500])
            return first, await client.ask(MESSAGES[:1] + [{"role": "user", "content": "again"}], ClaimsAbsence, {})

        first, second = asyncio.run(two_decisions())
    assert first.error is None and second.error is None and client.usage.stopped is None
    assert client.usage.transport_retries == 4 and client.usage.unasked == 0


def test_rate_limits_neither_count_towards_giving_up_nor_end_a_row(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        ep.fail_next([500, 429, 429, 429, 500])  # 2 failures and 3 rate limits: a limit of 3 is not reached ...
        client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x", timeout=5.0), None,
                                retry=RetryPolicy(wait_multiplier=0.01, wait_max=0.05, give_up_after=3))

        async def decisions():
            first = await client.ask(MESSAGES, ClaimsAbsence, {})
            ep.fail_next([500, 429, 500, 500])  # ... and 3 failures with rate limits between them reach it
            return first, await client.ask([{"role": "user", "content": "again"}], ClaimsAbsence, {})

        first, second = asyncio.run(decisions())
    assert first.error is None and second.error and second.error.startswith("not asked: gave up on")
    assert client.usage.stopped and "after 3 transport failures in a row" in client.usage.stopped

"""Reasoning judges, against fake endpoints that think before they answer: a `<think>` block before the JSON (vLLM or
Ollama without a reasoning parser) or `reasoning_content` beside it. The reasoning is kept apart from the answer by
design, counted, priced and (when asked) kept in the records; the effort is passed where litellm passes it, keyed
and signed; nothing changes when no effort is set and no reasoning is kept."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from judge.cli.app import app
from judge.llm.cache.store import open_decision_cache
from judge.llm.client import DecisionClient
from judge.llm.judges import judge_of
from judge.llm.reasoning import split_reasoning
from judge.settings import ModelSettings, RetryPolicy
from judge.testing import FakeEndpoint
from tests.conftest import smart_responder

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FAST = RetryPolicy(wait_multiplier=0.0, reasks=1, transport_attempts=2)
ANSWER = '{"rationale": "the document says so", "verdict": true}'
# Thinking that trips a parser looking for the first `{`: braces, and a draft of another answer.
TRICKY = 'The report says "{not json}". Draft: {"verdict": false}. No: it is supported.'
runner = CliRunner()


class Verdict(BaseModel):
    rationale: str
    verdict: bool


def ask(ep: FakeEndpoint, model: str = "openai/fake", cache=None, **settings):
    client = DecisionClient(ModelSettings(model, ep.api_base, "x", **settings), cache, retry=FAST)
    answered = asyncio.run(client.ask([{"role": "user", "content": "Is it supported?"}], Verdict, {}))
    return answered, client


@pytest.mark.parametrize("content", [
    f"<think>{TRICKY}</think>{ANSWER}",
    f"\n<think>\n{TRICKY}\n</think>\n\n{ANSWER}",      # a server that starts with a new line
    f"{TRICKY}</think>\n{ANSWER}",                    # a chat template that opened the block in the prompt
])
def test_a_think_block_before_the_json_is_never_parsed_as_the_answer(content):
    with FakeEndpoint(lambda request: content) as ep:
        answered, _ = ask(ep, keep_reasoning=True)
        assert answered.error is None
        assert answered.response.model_dump() == {"rationale": "the document says so", "verdict": True}
        assert answered.reasoning == TRICKY
        assert ep.calls == 1  # parsed at the first attempt, not after a re-ask


def test_the_reasoning_is_kept_only_when_asked():
    with FakeEndpoint(lambda request: ANSWER, reasoning=lambda request: TRICKY) as ep:
        answered, _ = ask(ep)
        assert answered.response is not None and answered.reasoning is None


def test_reasoning_content_beside_the_answer_is_kept_apart():
    with FakeEndpoint(lambda request: ANSWER, reasoning=lambda request: TRICKY, reasoning_as="field") as ep:
        answered, _ = ask(ep, keep_reasoning=True)
        assert answered.response is not None and answered.reasoning == TRICKY


@pytest.mark.parametrize("split", [
    (f"<think>a</think>{ANSWER}", ("a", ANSWER)),
    (ANSWER, (None, ANSWER)),
    ('{"rationale": "quotes </think>{ here", "verdict": true}', (None, '{"rationale": "quotes </think>{ here", '
                                                                       '"verdict": true}')),
    ('```json\n{"rationale": "quotes </think>{", "verdict": true}\n```', (None, '```json\n{"rationale": "quotes '
                                                                              '</think>{", "verdict": true}\n```')),
    ("<think>cut off at max_tokens, no answer yet {", ("cut off at max_tokens, no answer yet {", "")),
    ("prose without a block", (None, "prose without a block")),
])
def test_split_reasoning(split):
    content, expected = split
    assert split_reasoning(content) == expected


def test_a_think_block_cut_off_before_its_answer_fails_the_decision_as_cut_off():
    with FakeEndpoint(lambda request: "<think>" + "hmm " * 50) as ep:
        ep.fail_next("truncated")
        answered, _ = ask(ep)
        assert answered.response is None and "cut off at --max-tokens" in answered.error


def test_reasoning_tokens_are_counted_and_priced():
    thought = "x" * 400  # the fake endpoint counts len // 4 tokens: 100
    with FakeEndpoint(lambda request: ANSWER, reasoning=lambda request: thought, reasoning_as="field") as ep:
        client = DecisionClient(ModelSettings("openai/fake", ep.api_base, "x"), None, retry=FAST, price_per_1k=2.0)
        asyncio.run(client.ask([{"role": "user", "content": "Is it supported?"}], Verdict, {}))
        asyncio.run(client.ask([{"role": "user", "content": "And this one?"}], Verdict, {}))
    assert client.usage.reasoning_tokens == 200
    assert client.usage.reasoning_cost == pytest.approx(200 / 1000 * 2.0)
    assert client.usage.completion_tokens >= 200  # reasoning is billed as completion tokens


def test_the_effort_is_passed_keyed_and_the_mode_suits_a_reasoning_model(tmp_path):
    cache = open_decision_cache(tmp_path)
    with FakeEndpoint(lambda request: ANSWER, reasoning=lambda request: TRICKY) as ep:
        plain, _ = ask(ep, "hosted_vllm/fake", cache)
        reasoned, client = ask(ep, "hosted_vllm/fake", cache, reasoning_effort="high")
        again, _ = ask(ep, "hosted_vllm/fake", cache, reasoning_effort="high")
        first, second = ep.requests[0], ep.requests[1]
    assert plain.response == reasoned.response and again.cached and ep.calls == 2  # keyed: asked once per effort
    assert "reasoning_effort" not in first and second["reasoning_effort"] == "high"
    # litellm cannot hold this server to a schema: the schema goes in the prompt, the answer is read after the
    # reasoning (instructor's MD_JSON), instead of a grammar that would stop the model from thinking at all
    assert "response_format" in first and "response_format" not in second
    assert client.judge.mode == "md_json" and '"verdict"' in second["messages"][0]["content"]
    assert judge_of(ModelSettings("openai/o4-mini", reasoning_effort="high")).mode == "json_schema"


def test_an_effort_litellm_does_not_pass_on_is_dropped_with_a_note():
    with FakeEndpoint(lambda request: ANSWER) as ep:
        answered, client = ask(ep, "openai/gpt-4o-mini", reasoning_effort="low")
        assert "reasoning_effort" not in ep.requests[0] and client.settings.reasoning_effort is None
    assert judge_of(ModelSettings("openai/gpt-4o-mini", reasoning_effort="low")).unapplied == (
        "--reasoning-effort low has no effect: litellm passes no reasoning effort to openai/gpt-4o-mini; the "
        "signature records none",)


def test_a_kept_reasoning_comes_back_warm_and_an_older_entry_without_it_is_asked_again(tmp_path):
    cache = open_decision_cache(tmp_path)
    with FakeEndpoint(lambda request: ANSWER, reasoning=lambda request: TRICKY) as ep:
        ask(ep, cache=cache)                                    # cached without the reasoning
        cold, _ = ask(ep, cache=cache, keep_reasoning=True)     # asked again, to keep it
        warm, _ = ask(ep, cache=cache, keep_reasoning=True)
        assert ep.calls == 2
    assert not cold.cached and warm.cached and cold.reasoning == warm.reasoning == TRICKY


def eval_args(ep: FakeEndpoint, out: Path, *extra: str) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
            "--model", "openai/fake", "--api-base", ep.api_base, "--api-key", "x", "--no-cache", "--out", str(out),
            *extra]


def test_eval_with_a_thinking_judge_writes_the_same_judgments_and_keeps_the_reasoning_when_asked(tmp_path):
    with FakeEndpoint(smart_responder) as ep:
        plain = runner.invoke(app, eval_args(ep, tmp_path / "plain"))
        plain_lp = runner.invoke(app, eval_args(ep, tmp_path / "plain-lp", "--logprobs"))
    with FakeEndpoint(smart_responder, reasoning=lambda request: TRICKY) as ep:
        thinking = runner.invoke(app, eval_args(ep, tmp_path / "thinking"))
        thinking_lp = runner.invoke(app, eval_args(ep, tmp_path / "thinking-lp", "--logprobs"))
        kept = runner.invoke(app, eval_args(ep, tmp_path / "kept", "--keep-reasoning"))
    for result in (plain, plain_lp, thinking, thinking_lp, kept):
        assert result.exit_code == 0, result.output
    for name in ("judgments.jsonl", "scores.tsv", "leaderboard.tsv"):
        assert (tmp_path / "thinking" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
        # the log-probabilities spell the block and the answer; each confidence is read from the answer's
        assert (tmp_path / "thinking-lp" / name).read_bytes() == (tmp_path / "plain-lp" / name).read_bytes()
    assert '"confidence"' in (tmp_path / "thinking-lp" / "judgments.jsonl").read_text()
    records = [json.loads(line) for line in (tmp_path / "kept" / "judgments.jsonl").read_text().splitlines()]
    decisions = [d for r in records for s in r["sentences"] for d in s["decisions"] if d["judge"] == "openai/fake"]
    assert decisions and all(d["reasoning"] == TRICKY for d in decisions)
    for decision in decisions:
        del decision["reasoning"]
    plain_records = [json.loads(line) for line in (tmp_path / "plain" / "judgments.jsonl").read_text().splitlines()]
    assert records == plain_records
    assert "reasoning, $" in thinking.output  # the usage line shows the reasoning tokens and their cost


def test_eval_refuses_an_effort_for_the_embedded_judge_in_one_line(tmp_path):
    result = runner.invoke(app, ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
                                 "--docs", str(EXAMPLES / "docs.jsonl"), "--reasoning-effort", "low", "--no-cache",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "the embedded judge" in result.output and "has no reasoning mode" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out" / "judgments.jsonl").exists()


def test_eval_refuses_an_unknown_effort(tmp_path):
    result = runner.invoke(app, ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
                                 "--docs", str(EXAMPLES / "docs.jsonl"), "--reasoning-effort", "max"])
    assert result.exit_code == 2 and "choose one of low, medium, high" in result.output


def test_the_api_takes_the_effort_and_refuses_it_for_the_embedded_judge():
    import judge

    with pytest.raises(ValueError, match="has no reasoning mode"):
        judge.evaluate(str(EXAMPLES / "reports"), requests=str(EXAMPLES / "requests.jsonl"),
                       docs=str(EXAMPLES / "docs.jsonl"), cache=None, reasoning_effort="low")
    with pytest.raises(ValueError, match="reasoning_effort='max': choose one of low, medium, high"):
        ModelSettings("openai/o4-mini", reasoning_effort="max")  # type: ignore[arg-type]
    with FakeEndpoint(smart_responder, reasoning=lambda request: "thought") as ep:
        evaluation = judge.evaluate(str(EXAMPLES / "reports"), requests=str(EXAMPLES / "requests.jsonl"),
                                    docs=str(EXAMPLES / "docs.jsonl"), nuggets=str(EXAMPLES / "nuggets"),
                                    model="hosted_vllm/fake", api_base=ep.api_base, api_key="x", cache=None,
                                    reasoning_effort="medium", keep_reasoning=True)
        assert all(request["reasoning_effort"] == "medium" for request in ep.requests)
    assert "|effort:medium|" in evaluation.signature.short()
    kept = [d.reasoning for j in evaluation.judgments for s in j.sentences for d in s.decisions
            if d.judge == "hosted_vllm/fake"]
    assert kept and set(kept) == {"thought"}


def test_a_cached_reasoning_is_sealed_with_its_answer():
    from judge.llm.cache.store import CachedAnswer, UnreadableEntry, canonical_json, seal, unseal

    answer = CachedAnswer({"verdict": True}, 10, 2, 0.0, reasoning=TRICKY)
    assert unseal("k", seal("k", answer)) == answer
    assert '"reasoning"' not in seal("k", CachedAnswer({"verdict": True}))  # entries without it are as they were
    body = {"response": {}, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "reasoning": 7}
    forged = json.loads(seal("k", CachedAnswer({})))
    forged["answer"] = body
    import hashlib

    forged["sha256"] = hashlib.sha256(f"k\n{canonical_json(body)}".encode()).hexdigest()
    with pytest.raises(UnreadableEntry, match="the reasoning is not text"):
        unseal("k", json.dumps(forged))

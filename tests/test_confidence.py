"""Confidence per decision: log-probabilities asked for, cached with the answer, turned into the
probability of the verdict the judge wrote, and recorded in each decision record (null where there are none).
Everything runs against the local FakeEndpoint, whose log-probabilities we choose, so the expected confidence is
computed by hand."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import diskcache
import litellm
import pytest
from typer.testing import CliRunner

from judge.api import read_judgments
from judge.cli.app import app
from judge.formats.judgments import DecisionRecord
from judge.judging.decisions import REGISTRY, supports_citation
from judge.judging.decisions.asker import Decider, confidence_of, verdict_values
from judge.llm.cache.store import (
    CachedAnswer,
    DecisionCache,
    UnreadableEntry,
    canonical_json,
    open_decision_cache,
    seal,
    unseal,
)
from judge.llm.client import Answered, DecisionClient
from judge.llm.logprob import asks_logprobs, compact_logprobs
from judge.settings import ModelSettings, PassagePolicy, RetryPolicy
from judge.testing import FakeEndpoint
from judge.testing.logprobs import verdict_index
from judge.types import Document, Request
from tests.conftest import smart_responder

litellm.suppress_debug_info = True
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REQUEST = Request(request_id="r1", problem_statement="What about the bridge?")
DOCUMENT = Document(doc_id="d1", text="The bridge opened to traffic in 1932 after four years of work on it.")
FAST = RetryPolicy(wait_multiplier=0.01, wait_max=0.05)
runner = CliRunner()


def doubtful_verdict(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """The verdict word at 0.5, its rival label at 0.25, 'cannot_judge' at 0.05 and a token that spells no
    label at 0.1; every other token certain (log-probability 0, no alternatives)."""
    out: list[list[tuple[str, float]]] = [[(t, 0.0)] for t in tokens]
    if "verdict" in tokens:
        i = verdict_index(tokens)
        rival = "supported" if tokens[i] == "not_supported" else "not_supported"
        out[i] = [(tokens[i], math.log(0.5)), (rival, math.log(0.25)), ("xyz", math.log(0.1)),
                  ("cannot_judge", math.log(0.05))]
    return out


class SilentEndpoint(FakeEndpoint):
    """A provider that accepts `logprobs` but never returns any."""

    def _completion(self, request: dict, content: str, seq: int) -> dict:
        body = super()._completion(request, content, seq)
        body["choices"][0]["logprobs"] = None
        return body


def ask(endpoint: FakeEndpoint, cache: DecisionCache | None, sentence: str, logprobs: bool | None = True
        ) -> tuple[DecisionRecord, DecisionClient]:
    settings = ModelSettings("openai/fake", endpoint.api_base, "x", logprobs=logprobs)
    client = DecisionClient(settings, cache, retry=FAST)
    prepared = supports_citation.prepare(REQUEST, sentence, [DOCUMENT], PassagePolicy())
    return asyncio.run(Decider(client).ask(prepared)), client


SUPPORTED = "The bridge opened to traffic in 1932."
UNSUPPORTED = "The bridge is painted bright red."


@pytest.mark.parametrize(("sentence", "verdict"), [(SUPPORTED, True), (UNSUPPORTED, False)])
def test_confidence_is_the_renormalised_probability_of_the_verdict(tmp_path, sentence, verdict):
    with FakeEndpoint(smart_responder, logprobs=doubtful_verdict) as endpoint:
        record, _ = ask(endpoint, open_decision_cache(tmp_path), sentence)
        request = endpoint.requests[-1]
    assert request["logprobs"] is True and request["top_logprobs"] == 5
    assert record.verdict is verdict
    # by hand: the chosen label against the labels the field allows (the "xyz" token spells none of them)
    assert record.confidence == pytest.approx(0.5 / (0.5 + 0.25 + 0.05), abs=1e-6)
    assert json.loads(record.model_dump_json())["confidence"] == record.confidence


class BareEndpoint(FakeEndpoint):
    """A provider that sends each token's log-probability but no alternatives."""

    def _completion(self, request: dict, content: str, seq: int) -> dict:
        body = super()._completion(request, content, seq)
        for entry in body["choices"][0]["logprobs"]["content"]:
            entry["top_logprobs"] = []
        return body


def test_without_alternatives_the_confidence_is_the_raw_probability_of_the_value_tokens(tmp_path):
    with BareEndpoint(smart_responder) as endpoint:  # every token at log-probability -0.01 (the default)
        record, _ = ask(endpoint, None, SUPPORTED)
    # the value '"supported"' is three tokens: '"', 'supported', '"'
    assert record.confidence == pytest.approx(round(math.exp(-0.03), 6), abs=1e-12)


def test_no_confidence_when_the_provider_sends_no_logprobs_or_none_are_asked(tmp_path):
    with SilentEndpoint(smart_responder) as endpoint:
        silent, _ = ask(endpoint, open_decision_cache(tmp_path / "a"), SUPPORTED)
        calls = endpoint.calls
        again, _ = ask(endpoint, open_decision_cache(tmp_path / "a"), SUPPORTED)
        assert endpoint.calls == calls  # "asked, none given" is cached too: no re-ask on every run
    assert silent.verdict is True and silent.confidence is None and again.cached and again.confidence is None
    with FakeEndpoint(smart_responder, logprobs=doubtful_verdict) as endpoint:
        hosted, client = ask(endpoint, None, SUPPORTED, logprobs=None)  # hosted default: not asked
        assert "logprobs" not in endpoint.requests[-1] and not client.logprobs
    assert hosted.verdict is True and hosted.confidence is None
    assert "confidence" not in json.loads(hosted.model_dump_json())  # left out of the judgments file


def test_a_rerun_gives_the_same_confidence_from_the_cache(tmp_path):
    with FakeEndpoint(smart_responder, logprobs=doubtful_verdict) as endpoint:
        first, _ = ask(endpoint, open_decision_cache(tmp_path), UNSUPPORTED)
        calls = endpoint.calls
        second, _ = ask(endpoint, open_decision_cache(tmp_path), UNSUPPORTED)
        assert endpoint.calls == calls
        # a run that does not ask gets no confidence even from a cache that has one (cold = warm)
        plain, _ = ask(endpoint, open_decision_cache(tmp_path), UNSUPPORTED, logprobs=False)
        assert endpoint.calls == calls
    assert second.cached and second.confidence == first.confidence == pytest.approx(0.625, abs=1e-6)
    assert dumps_record(first) == dumps_record(second)
    assert plain.cached and plain.confidence is None


def test_an_answer_cached_without_logprobs_is_asked_again_when_they_are_wanted(tmp_path):
    with FakeEndpoint(smart_responder, logprobs=doubtful_verdict) as endpoint:
        plain, _ = ask(endpoint, open_decision_cache(tmp_path), SUPPORTED, logprobs=False)
        calls = endpoint.calls
        wanted, _ = ask(endpoint, open_decision_cache(tmp_path), SUPPORTED)
        assert endpoint.calls == calls + 1 and not wanted.cached
        replay, _ = ask(endpoint, open_decision_cache(tmp_path), SUPPORTED)
        assert endpoint.calls == calls + 1 and replay.cached  # the new entry holds them
    assert plain.confidence is None and wanted.confidence == replay.confidence == pytest.approx(0.625, abs=1e-6)


def dumps_record(record: DecisionRecord) -> str:
    return json.dumps(record.model_dump(mode="json"), sort_keys=True)


# ---------------------------------------------------------------------------------------------------------------
# the cache value format
# ---------------------------------------------------------------------------------------------------------------

def test_answers_without_logprobs_are_sealed_exactly_as_before():
    answer = CachedAnswer({"verdict": "supported"}, 10, 2, 0.5)
    body = {"response": {"verdict": "supported"}, "prompt_tokens": 10, "completion_tokens": 2, "cost": 0.5}
    import hashlib

    checksum = hashlib.sha256(f"k\n{canonical_json(body)}".encode()).hexdigest()
    assert seal("k", answer) == canonical_json({"v": 2, "answer": body, "sha256": checksum})  # the old layout
    assert unseal("k", seal("k", answer)) == answer


def test_logprobs_round_trip_through_the_seal_and_edits_are_caught():
    content = [{"token": "true", "logprob": -0.2, "bytes": list(b"true"),
                "top_logprobs": [{"token": "true", "logprob": -0.2, "bytes": list(b"true")},
                                 {"token": "false", "logprob": -1.7, "bytes": list(b"false")}]},
               {"token": "\u00e9", "logprob": float("-inf"), "bytes": [0xC3]}]
    compact = compact_logprobs(content)
    assert "bytes" not in compact[0] and compact[1]["bytes"] == [0xC3]  # kept only where they differ
    assert compact[1]["logprob"] == -1e4  # -inf is not JSON
    answer = CachedAnswer({"x": True}, 1, 1, 0.0, logprobs=compact, output='{"x": true}')
    assert unseal("k", seal("k", answer)) == answer
    tampered = seal("k", answer).replace("-0.2", "-0.1")
    with pytest.raises(UnreadableEntry, match="checksum"):
        unseal("k", tampered)


@pytest.mark.parametrize(("logprobs", "output"), [([{"token": "a", "logprob": 0.5}], "a"),
                                                  ([{"token": "a"}], "a"), ("nope", "a"), ([], None)])
def test_malformed_logprobs_in_a_sealed_entry_are_unreadable(logprobs, output):
    body = {"response": {}, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "logprobs": logprobs}
    if output is not None:
        body["output"] = output
    import hashlib

    raw = canonical_json({"v": 2, "answer": body,
                          "sha256": hashlib.sha256(f"k\n{canonical_json(body)}".encode()).hexdigest()})
    with pytest.raises(UnreadableEntry):
        unseal("k", raw)


def test_the_disk_cache_keeps_logprobs_and_text(tmp_path):
    cache = open_decision_cache(tmp_path)
    answer = CachedAnswer({"x": 1}, 3, 4, 0.0, logprobs=[{"token": "1", "logprob": -0.5, "top_logprobs": []}],
                          output='{"x": 1}')
    cache.put("key", answer)
    cache.close()
    assert open_decision_cache(tmp_path).get("key") == answer
    with diskcache.Cache(str(tmp_path / "decisions")) as raw:
        assert '"output":"{\\"x\\": 1}"' in raw["key"]


# ---------------------------------------------------------------------------------------------------------------
# the Decider's side
# ---------------------------------------------------------------------------------------------------------------

def test_every_verdict_field_exists_with_the_values_it_may_take():
    assert verdict_values("supports_citation") == ("supported", "not_supported", "cannot_judge")
    for spec in REGISTRY:
        if spec.takes_threshold:
            assert spec.response_model.verdict_field in spec.response_model.model_fields, spec.name
            assert verdict_values(spec.name) in ((True, False), verdict_values("supports_citation"))
    assert verdict_values("answers_nugget") is None and verdict_values("absence_nugget") is None


def test_decisions_without_a_single_verdict_field_get_no_confidence():
    text = '{"rationale": "r", "answer_labels": ["A1"]}'
    answered = Answered(REGISTRY["answers_nugget"].response_model(rationale="r", answer_labels=["A1"]), None, False,
                        logprobs=[{"token": text, "logprob": -0.1, "top_logprobs": []}], output=text)
    assert confidence_of("answers_nugget", answered) is None
    claims = '{"rationale": "r", "claims_absence": true}'
    tokens = [{"token": claims[:-5], "logprob": 0.0}, {"token": "true", "logprob": math.log(0.8),
              "top_logprobs": [{"token": "true", "logprob": math.log(0.8)}, {"token": "false",
                                                                              "logprob": math.log(0.1)}]},
              {"token": "}", "logprob": 0.0}]
    answered = Answered(REGISTRY["claims_absence"].response_model(rationale="r", claims_absence=True), None, False,
                        logprobs=tokens, output=claims)
    assert confidence_of("claims_absence", answered) == pytest.approx(0.8 / 0.9, abs=1e-6)


def test_judgments_stay_byte_identical_without_confidence_and_round_trip_with_it():
    plain = DecisionRecord(decision="needs_citation", verdict=True)
    assert set(json.loads(plain.model_dump_json())) == {"decision", "verdict", "doc_ids", "matches", "rationale",
                                                       "evidence", "evidence_numbers", "judge", "prompt_hash", "error"}
    sure = plain.model_copy(update={"confidence": 0.731})
    assert json.loads(sure.model_dump_json())["confidence"] == 0.731
    assert DecisionRecord.model_validate_json(sure.model_dump_json()) == sure
    with pytest.raises(ValueError):
        DecisionRecord(decision="needs_citation", verdict=True, confidence=1.5)


def test_the_embedded_judge_asks_for_logprobs_by_default_hosted_models_on_request():
    assert asks_logprobs(ModelSettings("argue-local/qwen"))
    assert not asks_logprobs(ModelSettings("openai/gpt-4o-mini"))
    assert asks_logprobs(ModelSettings("openai/gpt-4o-mini", logprobs=True))
    assert not asks_logprobs(ModelSettings("argue-local/qwen", logprobs=False))


# ---------------------------------------------------------------------------------------------------------------
# eval end to end
# ---------------------------------------------------------------------------------------------------------------

def eval_args(ep: FakeEndpoint, cache: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", str(EXAMPLES / "reports"), "--requests", str(EXAMPLES / "requests.jsonl"),
            "--docs", str(EXAMPLES / "docs.jsonl"), "--nuggets", str(EXAMPLES / "nuggets"),
            "--model", "openai/fake", "--api-base", ep.api_base, "--api-key", "x", "--cache-dir", str(cache),
            "--out", str(out), *extra]


RIVALS = {"supported": "not_supported", "not_supported": "supported", "true": "false", "false": "true"}


def four_to_one(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """Every verdict word at 0.8 against its rival at 0.2; every other token certain."""
    return [[(t, math.log(0.8)), (RIVALS[t], math.log(0.2))] if t in RIVALS else [(t, 0.0)] for t in tokens]


def test_eval_with_logprobs_records_confidence_and_reruns_byte_identical(tmp_path):
    with FakeEndpoint(smart_responder, logprobs=four_to_one) as ep:
        cold = runner.invoke(app, eval_args(ep, tmp_path / "cache", tmp_path / "a", "--logprobs"))
        assert cold.exit_code == 0, cold.output
        warm = runner.invoke(app, eval_args(ep, tmp_path / "cache", tmp_path / "b", "--logprobs"))
        assert warm.exit_code == 0, warm.output
    assert (tmp_path / "a" / "judgments.jsonl").read_bytes() == (tmp_path / "b" / "judgments.jsonl").read_bytes()
    records = [d for j in read_judgments(tmp_path / "a" / "judgments.jsonl") for s in j.sentences for d in s.decisions]
    by_decision: dict[str, set] = {}
    for d in records:
        if d.error is None and d.prompt_hash is not None:  # asked of the model
            by_decision.setdefault(d.decision, set()).add(d.confidence)
    assert by_decision["supports_citation"] == by_decision["needs_citation"] == {0.8}
    assert by_decision["answers_nugget"] == {None}  # a list of labels: no single verdict value
    assert "|lp:yes" in read_judgments(tmp_path / "a" / "judgments.jsonl")[0].signature

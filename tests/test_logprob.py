"""The probability of a verdict from token log-probabilities (synthetic OpenAI-shaped lists; the real embedded
model in test_embedded_provider.py)."""

from __future__ import annotations

import math

import pytest

from judge.llm.logprob import field_value_span, verdict_probability

SUPPORT_VALUES = ["supported", "not_supported", "cannot_judge"]


def tok(text: str, p: float, alternatives: list[tuple[str, float]] | None = None, raw: bytes | None = None) -> dict:
    entry = {"token": text, "logprob": math.log(p), "bytes": list(raw if raw is not None else text.encode())}
    entry["top_logprobs"] = [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())}
                             for t, q in (alternatives or [])]
    return entry


def not_supported_tokens() -> tuple[list[dict], str]:
    tokens = [
        tok('{"', 1.0), tok("rationale", 1.0), tok('":', 1.0), tok(' "', 1.0), tok("ok", 0.5), tok('",', 1.0),
        tok(' "', 1.0), tok("verdict", 1.0), tok('":', 1.0), tok(' "', 0.98),
        tok("not", 0.6, [("not", 0.6), ("supported", 0.3), ("cannot", 0.05), ("Not", 0.04)]),
        tok("_supported", 0.9, [("_supported", 0.9), ("_support", 0.05), ("_sure", 0.04)]),
        tok('"}', 1.0),
    ]
    return tokens, '{"rationale": "ok", "verdict": "not_supported"}'


def test_renormalised_over_the_alternatives_that_can_spell_an_allowed_value():
    tokens, text = not_supported_tokens()
    # "Not" and "_sure" cannot start or continue any allowed value; "_support" spells the same value as
    # "_supported" (it is no rival); the opening quote is a token of its own
    expected = 0.98 * (0.6 / (0.6 + 0.3 + 0.05)) * 1.0
    assert verdict_probability(tokens, text, values=SUPPORT_VALUES) == pytest.approx(expected)


def test_without_values_every_listed_alternative_counts():
    tokens, text = not_supported_tokens()
    expected = 0.98 * (0.6 / (0.6 + 0.3 + 0.05 + 0.04)) * ((0.9 + 0.05) / (0.9 + 0.05 + 0.04))
    assert verdict_probability(tokens, text) == pytest.approx(expected)


def test_raw_product_when_no_alternatives_are_listed():
    tokens, text = not_supported_tokens()
    for entry in tokens:
        entry["top_logprobs"] = []
    assert verdict_probability(tokens, text, values=SUPPORT_VALUES) == pytest.approx(0.98 * 0.6 * 0.9)


def test_other_tokenizations_of_the_written_value_count_for_it():
    """What the embedded model does: the grammar lets it write "no" + "t" where "not" was the other path."""
    tokens = [tok('{"verdict": "', 1.0),
              tok("no", 0.5, [("no", 0.5), ("not", 0.3), ("supported", 0.1), ("s", 0.05)]),
              tok("t", 1e-9, [("t", 1e-9)]), tok("_supported", 0.6, [("_supported", 0.6), ("_s", 0.2)]),
              tok('"}', 1.0)]
    text = '{"verdict": "not_supported"}'
    assert verdict_probability(tokens, text, values=SUPPORT_VALUES) == pytest.approx(0.8 / 0.95)


def test_booleans_and_a_token_that_carries_the_space():
    tokens = [tok('{"', 1.0), tok("verdict", 1.0), tok('":', 1.0),
              tok(" true", 0.7, [(" true", 0.7), (" false", 0.2), (" maybe", 0.1)]), tok("}", 1.0)]
    assert verdict_probability(tokens, '{"verdict": true}', values=[True, False]) == pytest.approx(0.7 / 0.9)


def test_tokens_are_aligned_by_bytes_across_a_split_character():
    e_acute = "é".encode()
    tokens = [tok('{"rationale": "caf', 1.0), tok("\ufffd", 0.5, raw=e_acute[:1]), tok("\ufffd", 0.5, raw=e_acute[1:]),
              tok('", "verdict": "', 1.0), tok("supported", 0.8, [("supported", 0.8), ("not", 0.15)]),
              tok('"}', 1.0)]
    text = '{"rationale": "café", "verdict": "supported"}'
    assert verdict_probability(tokens, text, values=SUPPORT_VALUES) == pytest.approx(0.8 / 0.95)


@pytest.mark.parametrize("content", [None, []])
def test_no_logprobs_no_confidence(content):
    assert verdict_probability(content, '{"verdict": "supported"}') is None


def test_unknown_when_tokens_do_not_spell_the_text_or_the_field_is_missing():
    tokens, text = not_supported_tokens()
    assert verdict_probability(tokens, text.replace("not_supported", "supported")) is None
    assert verdict_probability(tokens, text, field="answer") is None
    cut = tokens[:-2]  # generation stopped inside the value
    assert verdict_probability(cut, '{"rationale": "ok", "verdict": "not') is None


def test_only_a_top_level_field_counts():
    text = '{"matches": [{"verdict": "x", "n": {"verdict": 1}}], "verdict" : "supported", "z": null}'
    start, end = field_value_span(text, "verdict")
    assert text[start:end] == '"supported"'
    assert field_value_span('{"a": 1}', "verdict") is None
    assert field_value_span("not json", "verdict") is None


def test_litellm_objects_are_read_like_dicts():
    from litellm.types.utils import ChatCompletionTokenLogprob, TopLogprob

    tokens, text = not_supported_tokens()
    objects = [ChatCompletionTokenLogprob(token=t["token"], logprob=t["logprob"], bytes=t["bytes"],
                                          top_logprobs=[TopLogprob(**a) for a in t["top_logprobs"]])
               for t in tokens]
    assert verdict_probability(objects, text, values=SUPPORT_VALUES) == pytest.approx(
        verdict_probability(tokens, text, values=SUPPORT_VALUES))


def test_a_draft_of_the_answer_in_the_thinking_is_not_where_the_confidence_is_read():
    """A reasoning judge may write its answer in a `<think>` block first (the tokens spell the block and the
    answer; the text parsed is the answer alone): the confidence is the answer's, the last copy."""
    answer, text = not_supported_tokens()
    draft = [{**entry, "logprob": math.log(0.5) if entry["token"] == "not" else entry["logprob"]}
             for entry in answer]
    tokens = [tok("<think>", 1.0), *draft, tok("</think>", 1.0), *answer]
    assert verdict_probability(tokens, text, values=SUPPORT_VALUES) == \
        pytest.approx(verdict_probability(answer, text, values=SUPPORT_VALUES))

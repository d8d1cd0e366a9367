"""The fake OpenAI-compatible endpoint, driven through the real instructor -> litellm -> openai stack.

Nothing here touches the network: every request goes to 127.0.0.1.  Besides checking the fake
itself, these tests pin down the retry/timeout behaviour of litellm + the openai SDK + instructor
that the notes on retry layers beside the retry policy document (so an upgrade that changes it fails here),
and the token log-probabilities the endpoint returns on request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from enum import Enum
from typing import Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported: no fetch

import instructor
import litellm
import pytest
from instructor.core import InstructorRetryException
from pydantic import BaseModel, Field

from judge.testing import (
    CREATED,
    DEFAULT_LOGPROB,
    NO_SDK_RETRIES,
    FakeEndpoint,
    default_responder,
    fake_endpoint,
    minimal_instance,
    schema_name,
    schema_of,
    tokenize,
)

litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on expected errors

MESSAGES = [
    {"role": "system", "content": "You judge citations."},
    {"role": "user", "content": "Does [1] support the sentence?"},
]


class SupportsCitation(BaseModel):
    supported: bool
    rationale: str


class Grade(str, Enum):
    good = "good"
    bad = "bad"


class Span(BaseModel):
    start: int = Field(ge=1)
    end: int
    text: str | None


class Rich(BaseModel):
    label: Literal["yes", "no", "partial"]
    grade: Grade
    score: float = Field(gt=0, le=1)
    count: int
    flags: list[bool]
    spans: list[Span] = Field(min_length=1)
    best: Span | None
    when: datetime
    note: str = "n/a"
    maybe: int | None = None


@pytest.fixture
def ep():
    yield from fake_endpoint()


def client(mode=instructor.Mode.JSON_SCHEMA):
    return instructor.from_litellm(litellm.completion, mode=mode)


def aclient():
    return instructor.from_litellm(litellm.acompletion, mode=instructor.Mode.JSON_SCHEMA)


def ask(ep: FakeEndpoint, response_model=SupportsCitation, mode=instructor.Mode.JSON_SCHEMA, **kw):
    return client(mode).chat.completions.create(
        model="openai/fake",
        api_base=ep.api_base,
        api_key="x",
        response_model=response_model,
        messages=MESSAGES,
        **kw,
    )


def raw_litellm(ep: FakeEndpoint, **kw):
    return litellm.completion(model="openai/fake", api_base=ep.api_base, api_key="x", messages=MESSAGES, **kw)


def post(ep: FakeEndpoint, body: dict) -> tuple[int, dict, dict]:
    req = urllib.request.Request(
        ep.api_base + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


JSON_SCHEMA_BODY = {
    "model": "fake",
    "messages": MESSAGES,
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": "SupportsCitation", "schema": SupportsCitation.model_json_schema()},
    },
}


# --------------------------------------------------------------------------------------------------
# the server itself
# --------------------------------------------------------------------------------------------------


def test_api_base_and_models(ep):
    assert ep.api_base == f"http://127.0.0.1:{ep.port}/v1"
    with urllib.request.urlopen(ep.api_base + "/models", timeout=10) as resp:
        body = json.loads(resp.read())
    assert body["object"] == "list"
    assert [m["id"] for m in body["data"]] == ["fake"]


def test_response_is_openai_shaped(ep):
    status, _, body = post(ep, JSON_SCHEMA_BODY)
    assert status == 200
    assert body["id"].startswith("chatcmpl-")
    assert body["object"] == "chat.completion"
    assert body["created"] == CREATED
    assert body["model"] == "fake"
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    content = choice["message"]["content"]
    assert json.loads(content) == {"supported": False, "rationale": ""}
    prompt_len = sum(len(m["content"]) for m in MESSAGES)
    assert body["usage"] == {
        "prompt_tokens": max(1, prompt_len // 4),
        "completion_tokens": max(1, len(content) // 4),
        "total_tokens": max(1, prompt_len // 4) + max(1, len(content) // 4),
    }


def test_context_manager_and_stop():
    with FakeEndpoint() as ep:
        url = ep.api_base + "/models"
        urllib.request.urlopen(url, timeout=10).close()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)
    ep.stop()  # idempotent


def test_stop_wakes_a_sleeping_timeout_fault():
    ep = FakeEndpoint(timeout_delay=30)
    ep.fail_next(["timeout"])
    t = threading.Thread(target=lambda: post_quietly(ep), daemon=True)
    t.start()
    deadline = time.monotonic() + 5
    while ep.calls == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    ep.stop()
    assert time.monotonic() - start < 5


def post_quietly(ep):
    with contextlib.suppress(OSError, ValueError):  # the server goes away mid-request
        post(ep, JSON_SCHEMA_BODY)


# --------------------------------------------------------------------------------------------------
# answers through instructor (JSON_SCHEMA mode)
# --------------------------------------------------------------------------------------------------


def test_default_responder_output_validates(ep):
    result = ask(ep, response_model=Rich, num_retries=0, max_retries=0)
    assert isinstance(result, Rich)
    assert result.label == "yes" and result.grade is Grade.good
    assert 0 < result.score <= 1
    assert result.spans and result.spans[0].start >= 1
    assert result.best is None and result.flags == []
    assert ep.calls == 1
    assert ep.calls_by_schema == {"Rich": 1}


def test_request_shape_seen_by_the_server(ep):
    ask(ep, num_retries=0)
    (request,) = ep.requests
    assert request["model"] == "fake"
    assert request["messages"] == MESSAGES
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "SupportsCitation"
    assert schema_of(request)["properties"].keys() == {"supported", "rationale"}
    assert schema_name(request) == "SupportsCitation"


def test_custom_responder_per_schema_title(ep):
    seen = []

    def supports(request):
        seen.append(request["messages"][-1]["content"])
        return {"supported": True, "rationale": "quoted verbatim"}

    ep.on("SupportsCitation", supports)

    @ep.on("Span")
    def span(request):
        return Span(start=3, end=9, text="hello")  # pydantic models are accepted too

    # (compare dumps: instructor attaches the raw completion as a private attribute)
    assert ask(ep, num_retries=0).model_dump() == {"supported": True, "rationale": "quoted verbatim"}
    assert ask(ep, response_model=Span, num_retries=0).model_dump() == {"start": 3, "end": 9, "text": "hello"}
    assert ask(ep, response_model=Rich, num_retries=0).label == "yes"  # falls back to the default
    assert seen == [MESSAGES[-1]["content"]]
    assert ep.calls == 3
    assert ep.calls_by_schema == {"SupportsCitation": 1, "Span": 1, "Rich": 1}


def test_endpoint_level_responder():
    with FakeEndpoint(lambda req: {"supported": True, "rationale": req["model"]}) as ep:
        assert ask(ep, num_retries=0).rationale == "fake"


def test_other_instructor_modes_work(ep):
    for mode in (instructor.Mode.TOOLS, instructor.Mode.JSON, instructor.Mode.MD_JSON):
        ep.on("SupportsCitation", lambda req: {"supported": True, "rationale": "ok"})
        assert ask(ep, mode=mode, num_retries=0, max_retries=0).supported is True, mode
    assert ep.calls_by_schema == {"SupportsCitation": 3}


def test_latency_is_respected():
    with FakeEndpoint(latency=0.2) as ep:
        start = time.perf_counter()
        ask(ep, num_retries=0)
        assert time.perf_counter() - start >= 0.2


def test_concurrent_async_calls_overlap():
    with FakeEndpoint(latency=0.2) as ep:
        ac = aclient()

        def one():
            return ac.chat.completions.create(
                model="openai/fake",
                api_base=ep.api_base,
                api_key="x",
                response_model=SupportsCitation,
                messages=MESSAGES,
                num_retries=0,
            )

        async def run():
            # The first async litellm call in a process pays a one-off 0.5-1 s of lazy set-up
            # (imports, client construction): warm up so the timing below measures concurrency.
            await one()
            start = time.perf_counter()
            results = await asyncio.gather(*[one() for _ in range(10)])
            return results, time.perf_counter() - start

        results, elapsed = asyncio.run(run())
    assert len(results) == 10 and all(isinstance(r, SupportsCitation) for r in results)
    assert ep.calls == 11
    assert 0.2 <= elapsed < 1.5  # serial would be >= 2.0 s


# --------------------------------------------------------------------------------------------------
# faults and retries
# --------------------------------------------------------------------------------------------------


def test_fault_queue_is_consumed_in_order_then_normal(ep):
    ep.fail_next([429, 500, "malformed"])
    assert post(ep, JSON_SCHEMA_BODY)[0] == 429
    assert post(ep, JSON_SCHEMA_BODY)[0] == 500
    status, _, body = post(ep, JSON_SCHEMA_BODY)
    assert status == 200 and body["choices"][0]["message"]["content"] == "not json"
    assert post(ep, JSON_SCHEMA_BODY)[0] == 200
    assert ep.faults_served == [429, 500, "malformed"] and ep.pending_faults == []
    assert ep.calls == 4


def test_fail_next_rejects_unknown_faults(ep):
    with pytest.raises(ValueError):
        ep.fail_next(["slow"])
    with pytest.raises(ValueError):
        ep.fail_next([200])


def test_429_has_retry_after_and_openai_error_body(ep):
    ep.fail_next([429])
    status, headers, body = post(ep, JSON_SCHEMA_BODY)
    assert status == 429
    assert headers["Retry-After"] == "0"
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert {"message", "type", "param", "code"} <= body["error"].keys()


@pytest.mark.parametrize(
    ("status", "exc"),
    [(429, litellm.RateLimitError), (500, litellm.InternalServerError)],
)
@pytest.mark.parametrize("no_retry", [{"num_retries": 0}, {"max_retries": 0}])
def test_http_errors_surface_from_litellm_without_sdk_retries(ep, status, exc, no_retry):
    ep.fail_next([status] * 5)
    with pytest.raises(exc):
        raw_litellm(ep, **no_retry)
    assert ep.calls == 1  # no hidden SDK retry


def test_openai_sdk_retries_twice_by_default(ep):
    """Without retry arguments the openai SDK (max_retries=2) silently retries 429/5xx."""
    ep.fail_next([500, 500])
    raw_litellm(ep)  # succeeds on the 3rd HTTP request (~1.5 s of SDK backoff)
    assert ep.calls == 3


def test_instructor_max_retries_does_not_reach_litellm(ep):
    """Through instructor, ``max_retries`` is instructor's re-ask budget; use ``num_retries=0``."""
    ep.fail_next([500, 500])
    ask(ep, max_retries=0)  # SDK still retried: 3 HTTP requests
    assert ep.calls == 3

    ep.reset()
    ep.fail_next([500] * 5)
    with pytest.raises(InstructorRetryException) as info:
        ask(ep, max_retries=3, **NO_SDK_RETRIES)
    assert isinstance(info.value.__cause__, litellm.InternalServerError)  # wrapped, not re-asked
    assert ep.calls == 1


def test_async_errors_without_sdk_retries(ep):
    ep.fail_next([429])

    async def run():
        return await litellm.acompletion(
            model="openai/fake", api_base=ep.api_base, api_key="x", messages=MESSAGES, **NO_SDK_RETRIES
        )

    with pytest.raises(litellm.RateLimitError):
        asyncio.run(run())
    assert ep.calls == 1


def test_timeout_fault_raises_litellm_timeout():
    with FakeEndpoint(timeout_delay=3) as ep:
        ep.fail_next(["timeout"])
        start = time.perf_counter()
        with pytest.raises(litellm.Timeout):
            raw_litellm(ep, timeout=0.5, **NO_SDK_RETRIES)
        assert time.perf_counter() - start < 3
        assert ep.calls == 1

        ep.fail_next(["timeout"])
        with pytest.raises(InstructorRetryException) as info:
            ask(ep, timeout=0.5, **NO_SDK_RETRIES)
        assert isinstance(info.value.__cause__, litellm.Timeout)
        assert ep.calls == 2


def test_disconnect_fault(ep):
    ep.fail_next(["disconnect"])
    with pytest.raises((litellm.APIConnectionError, litellm.InternalServerError)):
        raw_litellm(ep, **NO_SDK_RETRIES)
    assert ep.calls == 1


def test_malformed_makes_instructor_reask(ep):
    ep.fail_next(["malformed"])
    result = ask(ep, max_retries=1, **NO_SDK_RETRIES)
    assert result.model_dump() == {"supported": False, "rationale": ""}
    assert ep.calls == 2
    reask = ep.requests[1]["messages"]
    assert {"role": "assistant", "content": "not json"} in reask  # the bad answer is fed back

    ep.reset()
    ep.fail_next(["malformed"])
    with pytest.raises(InstructorRetryException):
        ask(ep, max_retries=0, **NO_SDK_RETRIES)
    assert ep.calls == 1


def test_instructor_default_reask_budget_is_three(ep):
    ep.fail_next(["malformed"] * 10)
    with pytest.raises(InstructorRetryException) as info:
        ask(ep, **NO_SDK_RETRIES)
    assert info.value.n_attempts == 4
    assert ep.calls == 4


# --------------------------------------------------------------------------------------------------
# schema helpers
# --------------------------------------------------------------------------------------------------


def test_minimal_instance_validates_pydantic_schemas():
    for model in (SupportsCitation, Span, Rich):
        model.model_validate(minimal_instance(model.model_json_schema()))


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, ""),
        ({"type": "string", "minLength": 3}, "xxx"),
        ({"type": "string", "format": "date"}, "1970-01-01"),
        ({"type": "boolean"}, False),
        ({"type": "integer"}, 0),
        ({"type": "integer", "minimum": 2}, 2),
        ({"type": "integer", "exclusiveMinimum": 2}, 3),
        ({"type": "number", "maximum": -1.5}, -1.5),
        ({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, 0.5),
        ({"type": "array", "items": {"type": "integer"}}, []),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [0, 0]),
        ({"enum": ["b", "a"]}, "b"),
        ({"const": 7}, 7),
        ({"type": ["string", "null"]}, None),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 0),
        ({"type": "null"}, None),
        ({}, None),
        (
            {
                "$defs": {
                    "A": {"type": "object", "properties": {"x": {"$ref": "#/$defs/B"}}},
                    "B": {"enum": [1]},
                },
                "allOf": [{"$ref": "#/$defs/A"}],
            },
            {"x": 1},
        ),
        ({"type": "object", "properties": {"a": {"type": "integer", "default": 5}}}, {"a": 5}),
    ],
)
def test_minimal_instance_cases(schema, expected):
    assert minimal_instance(schema) == expected


def test_schema_of_fallbacks():
    schema = SupportsCitation.model_json_schema()
    tools_request = {
        "tools": [{"type": "function", "function": {"name": "SupportsCitation", "parameters": schema}}],
        "tool_choice": {"type": "function", "function": {"name": "SupportsCitation"}},
    }
    assert schema_of(tools_request) == schema and schema_name(tools_request) == "SupportsCitation"
    system = f"Answer in json that matches this json_schema:\n\n{json.dumps(schema, indent=2)}\n\nThanks {{}}"
    json_object_request = {
        "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "{not a schema"}],
    }
    assert schema_of(json_object_request) == schema
    assert schema_name(json_object_request) == "SupportsCitation"
    assert schema_of({"messages": [{"role": "user", "content": "hi"}]}) is None
    assert default_responder({"messages": []}) == {}


def test_unnamed_requests_are_counted(ep):
    post(ep, {"model": "fake", "messages": [{"role": "user", "content": "hi"}]})
    assert ep.calls_by_schema == {"<none>": 1}



# --------------------------------------------------------------------------------------------------
# token log-probabilities
# --------------------------------------------------------------------------------------------------

DEFAULT_CONTENT = '{"supported": false, "rationale": ""}'  # the default responder's answer to JSON_SCHEMA_BODY


def doubtful(request: dict, tokens: list[str]) -> list[list[tuple[str, float]]]:
    """70% sure of the verdict token "false" (30% "true"); certain of every other token."""
    return [[("false", math.log(0.7)), ("true", math.log(0.3))] if t == "false" else [(t, 0.0)] for t in tokens]


def test_tokenize_joins_back_to_the_text():
    tokens = tokenize(DEFAULT_CONTENT)
    assert "".join(tokens) == DEFAULT_CONTENT
    assert tokens[:7] == ["{", '"', "supported", '"', ":", " ", "false"]
    assert tokenize("Größe 3,5  m") == ["Größe", " ", "3", ",", "5", "  ", "m"]


def test_no_logprobs_unless_asked(ep):
    _, _, body = post(ep, JSON_SCHEMA_BODY)
    assert body["choices"][0]["logprobs"] is None


def test_default_logprobs_in_openai_shape(ep):
    _, _, body = post(ep, {**JSON_SCHEMA_BODY, "logprobs": True})
    entries = body["choices"][0]["logprobs"]["content"]
    assert "".join(e["token"] for e in entries) == body["choices"][0]["message"]["content"] == DEFAULT_CONTENT
    assert len(entries) == 17
    assert all(e["logprob"] == DEFAULT_LOGPROB and e["top_logprobs"] == [] for e in entries)
    assert all(bytes(e["bytes"]).decode() == e["token"] for e in entries)
    assert body["choices"][0]["logprobs"]["refusal"] is None


@pytest.mark.parametrize("top", [1, 2, 5])
def test_logprob_source_and_top_logprobs(top):
    with FakeEndpoint(logprobs=doubtful) as endpoint:
        _, _, body = post(endpoint, {**JSON_SCHEMA_BODY, "logprobs": True, "top_logprobs": top})
    entries = body["choices"][0]["logprobs"]["content"]
    [verdict] = [e for e in entries if e["token"] == "false"]
    assert verdict["logprob"] == pytest.approx(math.log(0.7))
    expected = [{"token": "false", "logprob": pytest.approx(math.log(0.7)), "bytes": list(b"false")},
                {"token": "true", "logprob": pytest.approx(math.log(0.3)), "bytes": list(b"true")}][:top]
    assert verdict["top_logprobs"] == expected
    assert entries[0] == {"token": "{", "logprob": 0.0, "bytes": [123],
                          "top_logprobs": [{"token": "{", "logprob": 0.0, "bytes": [123]}]}


def test_logprobs_through_litellm(ep):
    ep.logprobs = doubtful
    response = raw_litellm(ep, response_format=JSON_SCHEMA_BODY["response_format"], logprobs=True, top_logprobs=2)
    content = response.choices[0].logprobs.content
    assert "".join(t.token for t in content) == response.choices[0].message.content == DEFAULT_CONTENT
    [verdict] = [t for t in content if t.token == "false"]
    assert math.exp(verdict.logprob) == pytest.approx(0.7)
    assert [(alt.token, round(math.exp(alt.logprob), 6)) for alt in verdict.top_logprobs] == [("false", 0.7),
                                                                                             ("true", 0.3)]
    assert ep.requests[-1]["logprobs"] is True and ep.requests[-1]["top_logprobs"] == 2


def test_a_logprob_source_that_contradicts_the_answer_is_a_loud_500():
    def wrong_token(request, tokens):
        return [[("x", -0.1)] for _ in tokens]

    def positive(request, tokens):
        return [[(t, 0.5)] for t in tokens]

    def too_short(request, tokens):
        return [[(t, -0.1)] for t in tokens[1:]]

    for source, message in ((wrong_token, "must list the emitted token '{' first"),
                            (positive, "outside (-inf, 0]"), (too_short, "gave 16 positions for 17 tokens")):
        with FakeEndpoint(logprobs=source) as endpoint:
            status, _, body = post(endpoint, {**JSON_SCHEMA_BODY, "logprobs": True})
        assert status == 500 and message in body["error"]["message"], (source.__name__, body)


def test_tool_call_answers_carry_no_logprobs(ep):
    tool = {"type": "function", "function": {"name": "SupportsCitation",
                                             "parameters": SupportsCitation.model_json_schema()}}
    _, _, body = post(ep, {"model": "fake", "messages": MESSAGES, "tools": [tool], "logprobs": True,
                           "tool_choice": {"type": "function", "function": {"name": "SupportsCitation"}}})
    assert body["choices"][0]["message"]["content"] is None and body["choices"][0]["logprobs"] is None


# -- reasoning -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reasoning_as", ["think", "field"])
def test_a_reasoning_endpoint_thinks_before_it_answers_and_counts_the_reasoning_tokens(reasoning_as):
    with FakeEndpoint(lambda request: {"ok": True}, reasoning=lambda request: "x" * 40,
                      reasoning_as=reasoning_as) as ep:
        status, _, body = post(ep, {"model": "fake", "messages": [{"role": "user", "content": "hi"}],
                                    "reasoning_effort": "low"})
        assert ep.requests[0]["reasoning_effort"] == "low"
    message, usage = body["choices"][0]["message"], body["usage"]
    assert status == 200 and usage["completion_tokens_details"] == {"reasoning_tokens": 10}
    if reasoning_as == "think":  # a server without a reasoning parser: the block is in the content, no field
        assert message["content"] == '<think>' + "x" * 40 + '</think>\n\n{"ok": true}'
        assert message["reasoning_content"] is None
    else:
        assert message["content"] == '{"ok": true}' and message["reasoning_content"] == "x" * 40
        assert usage["completion_tokens"] == 10 + len('{"ok": true}') // 4
    with pytest.raises(ValueError, match="reasoning_as='both'"):
        FakeEndpoint(reasoning_as="both", start=False)

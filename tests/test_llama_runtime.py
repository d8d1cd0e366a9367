"""The embedded model's runtime: thread choice, saved prompt states (with a fake Llama that counts evaluated
tokens), greedy grammar sampling (with a fake llama.cpp grammar) and, marked `embedded`, the real model."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

import ctypes
import math
from types import SimpleNamespace

import numpy as np
import pytest

from judge.errors import ConfigurationError
from judge.llm.embedded import threads
from judge.llm.embedded.runtime import LlamaRuntime, PromptStates, common_prefix
from judge.llm.embedded.sampling import GreedyGrammarSampler, greedy_under_grammar
from judge.llm.embedded.threads import choose_threads
from judge.llm.embedded.weights import EMBEDDED_MODEL, embedded_available

# ------------------------------------------------------------------------------------------------ threads


@pytest.mark.parametrize(("cpus", "busy", "expected"), [
    (2, 0.1, 2),   # idle machine: every usable CPU
    (2, 0.9, 1),   # another process holds about one core
    (2, 1.4, 1),
    (2, 5.0, 1),   # overloaded: still one thread
    (8, 2.6, 5),
])
def test_threads_follow_the_free_cores(monkeypatch, cpus, busy, expected):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cpus)), raising=False)
    monkeypatch.setattr(threads, "busy_cores", lambda: busy)
    assert choose_threads() == expected
    assert choose_threads(3) == 3  # an explicit --threads wins over the load


def test_busy_cores_are_measured_from_the_kernel_counters_not_the_lagging_load(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    samples = iter([
        "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0\ncpu1 50 0 50 400 0\n",
        # 400 more ticks, 100 of them idle: 3/4 of two cores busy = 1.5 cores
        "cpu  250 0 250 900 0 0 0 0 0 0\ncpu0 125 0 125 450 0\ncpu1 125 0 125 450 0\n",
    ])
    real_read = type(stat).read_text
    monkeypatch.setattr(type(stat), "read_text", lambda self, **kw: next(samples) if self == stat
                        else real_read(self, **kw))
    monkeypatch.setattr(os, "getloadavg", lambda: (7.0, 7.0, 7.0), raising=False)  # stale: must not be used
    assert threads.busy_cores(stat, window=0.0) == pytest.approx(1.5)


def test_busy_cores_fall_back_to_the_load_average_without_proc_stat(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (0.7, 0.7, 0.7), raising=False)
    assert threads.busy_cores(tmp_path / "absent", window=0.0) == 0.7


def test_threads_must_be_positive():
    with pytest.raises(ConfigurationError, match="--threads must be at least 1, got 0"):
        choose_threads(0)


# ------------------------------------------------------------------------------------------ prompt states


class CountingLlama:
    """llama-cpp-python's prompt handling in miniature: words are tokens; the KV cache holds
    ``input_ids[:n_tokens]``; a prompt evaluates what follows its longest common prefix with them (at least one
    token); the answer's tokens are evaluated too, except the last. Counts every evaluated token."""

    ANSWER = ["{", "ok", "}"]

    def __init__(self):
        self.vocabulary: dict[str, int] = {}
        self.input_ids = np.zeros(4096, dtype=np.intc)
        self.n_tokens = 0
        self.evaluated = 0
        self.last_prompt_evaluated = 0
        self.prompt_states: PromptStates | None = None

    def tokens(self, text: str) -> list[int]:
        return [self.vocabulary.setdefault(word, len(self.vocabulary)) for word in text.split()]

    def create_chat_completion(self, messages, **_kwargs):
        prompt = self.tokens(" ".join(m["content"] for m in messages))
        if self.prompt_states is not None:
            self.prompt_states.before_prompt(self, prompt)
        shared = common_prefix(self.input_ids[: self.n_tokens].tolist(), prompt)
        shared = min(shared, len(prompt) - 1)
        self.last_prompt_evaluated = len(prompt) - shared
        answer = self.tokens(" ".join(self.ANSWER))
        held = prompt + answer[:-1]
        self.evaluated += self.last_prompt_evaluated + len(answer) - 1
        self.input_ids[: len(held)] = held
        self.n_tokens = len(held)
        return {"choices": [{"message": {"role": "assistant", "content": "{ok}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(answer)}}

    def snapshot(self):
        return tuple(self.input_ids[: self.n_tokens].tolist())  # a "state" is the tokens its KV cells hold

    def restore(self, tokens, state):
        assert tuple(tokens) == state, "restored a state under another state's tokens"
        self.input_ids[: len(tokens)] = tokens
        self.n_tokens = len(tokens)

    def token_bytes(self, token: int) -> bytes:
        return next(w for w, i in self.vocabulary.items() if i == token).encode()


SYSTEM = " ".join(f"rule{i}" for i in range(40))  # 40 tokens shared by every prompt


def document(name: str, n: int = 200) -> str:
    return " ".join(f"{name}-w{i}" for i in range(n))


def ask(runtime: LlamaRuntime, doc: str, sentence: str):
    return runtime.complete(messages=[{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": f"{doc} SENTENCE {sentence}"}])


def test_consecutive_prompts_about_one_document_evaluate_only_the_sentence():
    fake = CountingLlama()
    runtime = LlamaRuntime(llama_factory=lambda _r: fake, n_threads=1)
    first = ask(runtime, document("a"), "one two three")
    assert (first.prompt_tokens, first.reused_tokens) == (40 + 200 + 4, 0)
    second = ask(runtime, document("a"), "four five")
    assert second.prompt_tokens == 40 + 200 + 3
    assert second.reused_tokens == 40 + 200 + 1  # system, document and the word SENTENCE
    assert fake.last_prompt_evaluated == 2
    assert runtime.states.saved == 0  # nothing worth saving was thrown away


@pytest.mark.parametrize(("slots", "expected_evaluated"), [
    # a, b, a, b, c, a: without saved states every switch re-reads the document (only the system prompt is
    # shared); with 3 slots each document is read once and later visits evaluate only the sentence.
    (0, [244, 204, 204, 204, 204, 204]),
    (3, [244, 204, 3, 3, 204, 3]),
])
def test_saved_states_let_documents_alternate(slots, expected_evaluated):
    fake = CountingLlama()
    runtime = LlamaRuntime(llama_factory=lambda _r: fake, n_threads=1, state_slots=slots)
    evaluated = []
    for i, name in enumerate("ababca"):
        completion = ask(runtime, document(name), f"s{i} x y")
        evaluated.append(completion.prompt_tokens - completion.reused_tokens)
        assert completion.prompt_tokens - completion.reused_tokens == fake.last_prompt_evaluated
    assert evaluated == expected_evaluated
    assert runtime.states.restored == (3 if slots else 0)


@pytest.mark.parametrize(("slots", "expected_evaluated"), [
    (1, [244, 204, 204, 204]),  # saving c evicted a (the oldest): a is read again in full
    (2, [244, 204, 204, 3]),
])
def test_oldest_saved_state_is_evicted(slots, expected_evaluated):
    fake = CountingLlama()
    runtime = LlamaRuntime(llama_factory=lambda _r: fake, n_threads=1, state_slots=slots)
    evaluated = [ask(runtime, document(name), f"s{i} x y") for i, name in enumerate("abca")]
    assert [c.prompt_tokens - c.reused_tokens for c in evaluated] == expected_evaluated
    assert len(runtime.states) == slots


def test_litellm_usage_reports_reused_prompt_tokens():
    import litellm

    from judge.llm.embedded import provider as lp

    fake = CountingLlama()
    previous = lp.use_runtime(LlamaRuntime(llama_factory=lambda _r: fake, n_threads=1))
    try:
        lp.register_embedded_provider(prepare=False)
        msgs = lambda sentence: [{"role": "system", "content": SYSTEM},  # noqa: E731
                                 {"role": "user", "content": f"{document('a')} SENTENCE {sentence}"}]
        cold = litellm.completion(model=EMBEDDED_MODEL, messages=msgs("one two"))
        warm = litellm.completion(model=EMBEDDED_MODEL, messages=msgs("three four five"))
    finally:
        lp.use_runtime(previous)
    assert (cold.usage.prompt_tokens, cold.usage.prompt_tokens_details.cached_tokens) == (243, 0)
    assert (warm.usage.prompt_tokens, warm.usage.prompt_tokens_details.cached_tokens) == (244, 241)


def test_a_restored_state_leaves_the_lru_and_is_saved_again_when_left():
    fake = CountingLlama()
    states = PromptStates(slots=3, min_saved=1)
    fake.prompt_states = states
    for name in "abab":
        fake.create_chat_completion([{"content": document(name, 10)}])
    # b saves a; a saves b and takes a back; b saves a and takes b back
    assert (states.saved, states.restored, len(states)) == (3, 2, 1)
    assert fake.last_prompt_evaluated == 1  # the whole prompt was held: one token re-evaluated for its logits


# ---------------------------------------------------------------------------------- greedy grammar sampling


class _TokenData(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int32), ("logit", ctypes.c_float), ("p", ctypes.c_float)]


class _TokenDataArray(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(_TokenData)), ("size", ctypes.c_size_t),
                ("selected", ctypes.c_int64), ("sorted", ctypes.c_bool)]


class FakeGrammarLib:
    """The few llama_cpp functions the sampler calls; the "grammar" is a set of allowed tokens per step."""

    llama_token_data = _TokenData
    llama_token_data_array = _TokenDataArray
    llama_token_data_p = ctypes.POINTER(_TokenData)

    def __init__(self, steps: list[tuple[np.ndarray, set[int]]]):
        self.steps = steps  # (logits, allowed token ids) per generated token
        self.step = 0
        self.candidates_checked = 0
        self.accepted: list[int] = []

    def llama_sampler_init_grammar(self, vocab, grammar, root):
        return 1

    def llama_sampler_free(self, sampler):
        pass

    def llama_get_logits_ith(self, ctx, idx):
        return self.steps[self.step][0].ctypes.data_as(ctypes.POINTER(ctypes.c_float))

    def llama_sampler_apply(self, sampler, ref):
        array = ref._obj
        allowed = self.steps[self.step][1]
        self.candidates_checked += array.size
        for i in range(array.size):
            if array.data[i].id not in allowed:
                array.data[i].logit = -math.inf

    def llama_sampler_accept(self, sampler, token):
        self.accepted.append(token)
        self.step += 1

    def llama_sampler_reset(self, sampler):
        self.step = 0


def _steps(seed: int, n_vocab: int = 300, n: int = 40) -> list[tuple[np.ndarray, set[int]]]:
    rng = np.random.default_rng(seed)
    steps = []
    for k in range(n):
        logits = rng.normal(size=n_vocab).astype(np.float32)
        logits[rng.integers(n_vocab, size=3)] = logits.max()  # ties for the maximum
        if k % 3 == 0:
            allowed = set(range(n_vocab))                   # free text: the greedy token passes
        else:
            allowed = set(rng.choice(n_vocab, size=int(rng.integers(1, 30)), replace=False).tolist())
        steps.append((logits, allowed))
    return steps


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_grammar_sampler_picks_what_the_full_grammar_pass_picks(seed):
    steps = _steps(seed)
    lib = FakeGrammarLib(steps)
    sampler = GreedyGrammarSampler(lib, vocab=None, n_vocab=300, grammar=SimpleNamespace(_grammar="g", _root="r"),
                                   top_logprobs=3)
    picked = [sampler.sample(SimpleNamespace(ctx=None), -1) for _ in steps]
    expected = [greedy_under_grammar(logits, lambda ids, a=allowed: np.isin(ids, list(a)))
                for logits, allowed in steps]
    # the reference, spelled out: the first maximum among allowed tokens
    assert expected == [min(t for t in allowed if logits[t] == max(logits[u] for u in allowed))
                        for logits, allowed in steps]
    assert picked == expected == lib.accepted
    # the whole vocabulary is asked about only when the greedy token is not allowed
    rejected = sum(int(np.argmax(logits)) not in allowed for logits, allowed in steps)
    assert sampler.full_vocabulary_passes == rejected < len(steps)
    # per token: the greedy token, then either the whole vocabulary or the 20 likeliest (for top_logprobs)
    assert lib.candidates_checked == len(steps) + 300 * rejected + 20 * (len(steps) - rejected)

    for choice, (logits, allowed) in zip(sampler.choices, steps):
        log_total = math.log(np.exp(logits.astype(np.float64)).sum())
        assert choice.logprob == pytest.approx(float(logits[choice.token]) - log_total, abs=1e-5)
        assert all(t in allowed for t, _ in choice.alternatives) and 1 <= len(choice.alternatives) <= 3
        assert choice.alternatives[0][0] == choice.token  # the chosen token is the likeliest allowed one
        assert [lp for _, lp in choice.alternatives] == sorted((lp for _, lp in choice.alternatives), reverse=True)


def test_sampler_without_logprobs_records_nothing():
    steps = _steps(5, n=6)
    lib = FakeGrammarLib(steps)
    sampler = GreedyGrammarSampler(lib, vocab=None, n_vocab=300, grammar=SimpleNamespace(_grammar="g", _root="r"))
    for _ in steps:
        sampler.sample(SimpleNamespace(ctx=None), -1)
    assert sampler.choices == []


# ------------------------------------------------------------------------------------------ the real model

_UNAVAILABLE = embedded_available()

_SCHEMA = {"type": "object", "properties": {
    "rationale": {"type": "string", "maxLength": 200},
    "verdict": {"type": "string", "enum": ["supported", "not_supported"]}},
    "required": ["rationale", "verdict"]}
_DOCS = {
    "dam": "The Hoover Dam is a concrete arch-gravity dam in the Black Canyon of the Colorado River, on the border "
           "between Nevada and Arizona. It was constructed between 1931 and 1936 and was dedicated on September "
           "30, 1935, by President Franklin D. Roosevelt.",
    "bridge": "The Golden Gate Bridge is a suspension bridge spanning the Golden Gate strait in California. It "
              "opened in 1937 and was, at the time, the longest suspension bridge main span in the world.",
}
_QUESTIONS = [("dam", "The Hoover Dam was dedicated by Franklin D. Roosevelt in 1935."),
              ("bridge", "The Golden Gate Bridge opened in 1937."),
              ("dam", "The Hoover Dam is in Oregon."),
              ("bridge", "The Golden Gate Bridge was designed by Frank Lloyd Wright.")]


def _messages(doc: str, sentence: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You check whether a document supports a sentence. Reply in JSON."},
            {"role": "user", "content": f"Document:\n{_DOCS[doc]}\n\nSentence: {sentence}"}]


def _call(runtime: LlamaRuntime, doc: str, sentence: str, **extra):
    return runtime.complete(messages=_messages(doc, sentence), max_tokens=120, repeat_penalty=1.0,
                            response_format={"type": "json_object", "schema": _SCHEMA}, **extra)


@pytest.fixture(scope="module")
def real_runtime():
    runtime = LlamaRuntime(state_slots=3)
    yield runtime
    runtime.close()


@pytest.mark.embedded
@pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))
def test_real_fast_sampling_writes_what_llama_cpp_python_writes(real_runtime):
    """Same prompts, each evaluated from scratch, sampled by llama-cpp-python's chain and by ours."""
    llama = real_runtime.llama()
    outputs: dict[bool, list[str]] = {True: [], False: []}
    for doc, sentence in _QUESTIONS[:3]:
        for fast in (False, True):
            llama.fast_sampling = fast
            llama.reset()
            real_runtime.states.clear()
            outputs[fast].append(_call(real_runtime, doc, sentence).result["choices"][0]["message"]["content"])
    llama.fast_sampling = True
    assert outputs[True] == outputs[False]
    assert all('"verdict"' in text for text in outputs[True])


@pytest.mark.embedded
@pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))
def test_real_saved_states_reuse_a_document_after_another(real_runtime):
    llama = real_runtime.llama()
    llama.reset()
    real_runtime.states.clear()
    first, other, again = (_call(real_runtime, d, s) for d, s in (_QUESTIONS[0], _QUESTIONS[1], _QUESTIONS[2]))
    assert first.reused_tokens == 0
    # the dam prompt after the bridge prompt: the dam document's state comes back from the saved states
    assert real_runtime.states.restored == 1
    assert again.reused_tokens > other.reused_tokens and again.reused_tokens >= 60
    assert again.prompt_tokens - again.reused_tokens <= 25  # about the sentence, not the document

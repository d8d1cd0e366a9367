"""Greedy decoding under a grammar without running the grammar over the whole vocabulary at every token.

llama-cpp-python's sampler chain (penalties → grammar → greedy) asks the grammar about all 151,936 tokens of
Qwen's vocabulary before picking the most likely one; profiles of the embedded judge put half of the model
thread's time there. :class:`GreedyGrammarSampler` does what llama.cpp's own ``common_sampler`` does instead: take
the most likely token, ask the grammar about that one token, and only when the grammar rejects it mask the whole
vocabulary and take the most likely allowed token. At temperature 0 this picks exactly the token the chain picks
(the same first maximum, see :func:`greedy_under_grammar`), so answers and cache entries do not change.

It also records what OpenAI-style ``logprobs`` need for each generated token: the token's log-probability under
the model (log-softmax of the raw logits) and the most likely *grammar-allowed* alternatives, so a caller can
renormalise a verdict's probability over the answers that could actually have been written.

Nothing here imports llama_cpp at module import; the sampler is built by :mod:`judge.llm.embedded.runtime`.
"""

from __future__ import annotations

import ctypes
import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

# Alternatives checked against the grammar for ``top_logprobs`` (OpenAI allows at most 20).
MAX_TOP_LOGPROBS = 20
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])  # llama_token_data, 12 bytes, no padding


@dataclass(frozen=True)
class TokenChoice:
    """One generated token: its log-probability and the likeliest alternatives the grammar allowed."""

    token: int
    logprob: float
    alternatives: tuple[tuple[int, float], ...]  # (token id, log-probability), most likely first


def greedy_under_grammar(logits: np.ndarray, allowed: Any) -> int:
    """Reference semantics (used by the tests): the first maximum of the logits among allowed tokens.

    ``allowed(ids) -> bool array``. Equal to llama.cpp's greedy sampler after the grammar sampler, which sets
    rejected logits to -inf and keeps the first index holding the maximum.
    """
    token = int(np.argmax(logits))
    if allowed(np.array([token]))[0]:
        return token
    masked = np.where(allowed(np.arange(len(logits))), logits, -np.inf)
    return int(np.argmax(masked))


class GreedyGrammarSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` (``sample(ctx, idx)``) for greedy decoding.

    ``grammar`` is a llama_cpp ``LlamaGrammar`` or None; ``top_logprobs`` None records nothing, an int n records
    each token's log-probability and up to n grammar-allowed alternatives (:attr:`choices`).
    """

    def __init__(self, llama_cpp: Any, vocab: Any, n_vocab: int, grammar: Any = None,
                 top_logprobs: int | None = None):
        self._lib = llama_cpp
        self._n_vocab = n_vocab
        self._top_logprobs = None if top_logprobs is None else max(0, min(int(top_logprobs), MAX_TOP_LOGPROBS))
        self.choices: list[TokenChoice] = []
        self.full_vocabulary_passes = 0  # how often the greedy token was rejected (for tests and benchmarks)
        self._grammar = None
        if grammar is not None:
            self._grammar = llama_cpp.llama_sampler_init_grammar(
                vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
            if not self._grammar:
                raise ValueError("llama.cpp could not compile the response grammar")
            weakref.finalize(self, llama_cpp.llama_sampler_free, self._grammar)
        # Token-data buffers handed to the grammar: a small one for the greedy token and the alternatives, the
        # full-vocabulary one only allocated the first time the greedy token is rejected.
        self._small, self._small_view = self._buffer(MAX_TOP_LOGPROBS + 1)
        self._full: Any = None
        self._full_view: np.ndarray | None = None

    # -- the LlamaSampler interface that Llama.generate/sample use

    def sample(self, ctx: Any, idx: int = -1) -> int:
        pointer = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))
        token = int(np.argmax(logits))
        masked = None
        if self._grammar is not None and not self._allowed(np.array([token], dtype=np.int32), logits)[0]:
            masked = self._mask_all(logits)
            token = int(np.argmax(masked))
            self.full_vocabulary_passes += 1
        if self._top_logprobs is not None:
            self.choices.append(self._choice(token, logits, masked))
        if self._grammar is not None:
            self._lib.llama_sampler_accept(self._grammar, token)
        return token

    def accept(self, token: int) -> None:  # the chain's sample() already accepted; kept for interface parity
        pass

    def reset(self) -> None:
        if self._grammar is not None:
            self._lib.llama_sampler_reset(self._grammar)
        self.choices.clear()

    def close(self) -> None:
        """Nothing to do: the grammar sampler is freed when this object is collected."""

    # -- grammar queries

    def _buffer(self, size: int) -> tuple[Any, np.ndarray]:
        buffer = (self._lib.llama_token_data * size)()
        return buffer, np.frombuffer(buffer, dtype=_TOKEN_DATA)

    def _apply(self, buffer: Any, size: int) -> None:
        array = self._lib.llama_token_data_array(
            data=ctypes.cast(buffer, self._lib.llama_token_data_p), size=size, selected=-1, sorted=False)
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(array))

    def _allowed(self, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """Which of a few token ids the grammar allows next (one grammar pass over len(ids) candidates)."""
        n = len(ids)
        view = self._small_view[:n]
        view["id"] = ids
        view["logit"] = 0.0  # any finite value: the grammar only ever writes -inf over rejected tokens
        view["p"] = 0.0
        self._apply(self._small, n)
        return np.isfinite(view["logit"])

    def _mask_all(self, logits: np.ndarray) -> np.ndarray:
        """The logits with every token the grammar rejects set to -inf (one pass over the vocabulary)."""
        if self._full is None:
            self._full, self._full_view = self._buffer(self._n_vocab)
            self._full_view["id"] = np.arange(self._n_vocab, dtype=np.int32)  # the grammar never reorders
        assert self._full_view is not None
        self._full_view["logit"] = logits
        self._full_view["p"] = 0.0
        self._apply(self._full, self._n_vocab)
        return self._full_view["logit"].copy()

    # -- log-probabilities

    def _choice(self, token: int, logits: np.ndarray, masked: np.ndarray | None) -> TokenChoice:
        raw = logits.astype(np.float64)
        peak = float(raw.max())
        log_total = peak + math.log(float(np.exp(raw - peak).sum()))
        n = self._top_logprobs or 0
        alternatives: list[tuple[int, float]] = []
        if n:
            if masked is not None:  # the whole vocabulary was masked already: its best allowed tokens are exact
                candidates = _top_ids(masked, n)
                candidates = candidates[np.isfinite(masked[candidates])]
            else:
                candidates = _top_ids(logits, MAX_TOP_LOGPROBS)
                if self._grammar is not None:
                    candidates = candidates[self._allowed(candidates.astype(np.int32), logits)]
            alternatives = [(int(i), float(raw[i]) - log_total) for i in candidates[:n]]
        return TokenChoice(token=token, logprob=float(raw[token]) - log_total, alternatives=tuple(alternatives))


def _top_ids(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first (ties: lower index first, as the greedy sampler)."""
    k = min(k, len(values))
    part = np.argpartition(-values, k - 1)[:k]
    return part[np.lexsort((part, -values[part]))]

"""The embedded judge's model where it runs: one llama.cpp ``Llama``, its threads, its kernels, its saved prompts.

A run keeps it in a worker process of its own (:mod:`judge.llm.embedded.worker`, driven by
:class:`judge.llm.embedded.worker_runtime.WorkerRuntime`), so that a crash of native code cannot take the run down;
tests and benchmarks may also use it in their own process.

:class:`LlamaRuntime` loads the bundled GGUF on first use and serves one chat completion at a time (llama.cpp is
not thread-safe). Three things make it faster than a bare ``Llama.create_chat_completion``:

* **Threads from the free cores.** llama.cpp's worker threads wait for each other at every layer, so one thread
  more than the cores actually free can make a run several times slower (the bundled example took ~40 minutes
  instead of ~6 with one of two cores busy). :func:`judge.llm.embedded.threads.choose_threads` takes the CPUs
  this process may use minus the current load, at least one; ``n_threads`` overrides it (the CLI's ``--threads``).
* **Greedy sampling that asks the grammar about one token** (:mod:`judge.llm.embedded.sampling`), with the same
  output at temperature 0.
* **Prompt prefixes processed once.** llama-cpp-python already keeps the KV state of the previous prompt and
  evaluates only the part after the longest common token prefix. :class:`PromptStates` adds a small LRU of saved
  KV states, so that returning to a document after a question about another one (or another decision in
  between) reuses the document's prefix too. Every completion reports the prompt tokens evaluated and reused.

The same numbers as :class:`judge.llm.client.ModelSettings` are the defaults (temperature 0, seed 0, 512 new
tokens), so a direct litellm call behaves like a judge call.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from judge.errors import ConfigurationError
from judge.llm.embedded import threads
from judge.llm.embedded.kernels import KernelChoice, resolve_kernels
from judge.llm.embedded.sampling import GreedyGrammarSampler, TokenChoice
from judge.llm.embedded.weights import INSTALL_HINT, ensure_model_file

N_CTX = 8192
DEFAULT_TEMPERATURE = 0.0
DEFAULT_SEED = 0
DEFAULT_MAX_TOKENS = 512
STATE_SLOTS = 3           # documents whose prompt prefix is kept besides the live one
MIN_SAVED_TOKENS = 64     # a state is worth saving only if a prompt would throw away at least this many tokens


# ------------------------------------------------------------------------------------------ prompt states


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


class PromptStates:
    """An LRU of saved KV states keyed by their tokens, for prompts that return to an earlier prefix.

    Works on any model object with ``input_ids``/``n_tokens`` (llama-cpp-python's record of what the KV cache
    holds), ``snapshot()`` and ``restore(tokens, state)``. Before a prompt is evaluated, :meth:`before_prompt`

    * saves the live state when the prompt would throw away more than half of it (and at least ``min_saved``
      tokens): another document is coming, this one may come back. A prompt about the same document throws away
      only the previous sentence and answer, so it saves nothing;
    * restores the saved state sharing the longest prefix with the prompt, when that is longer than what the live
      state shares. A restored state leaves the LRU (it is live now, and is saved again when left).

    llama-cpp-python then evaluates only the prompt tokens after the common prefix.
    """

    def __init__(self, slots: int = STATE_SLOTS, min_saved: int = MIN_SAVED_TOKENS):
        self.slots = slots
        self.min_saved = min_saved
        self._states: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self.saved = 0
        self.restored = 0

    def __len__(self) -> int:
        return len(self._states)

    def before_prompt(self, model: Any, prompt: Sequence[int]) -> None:
        if self.slots <= 0:
            return
        live = tuple(int(t) for t in model.input_ids[: model.n_tokens])
        live_shared = common_prefix(live, prompt)
        best, best_shared = None, live_shared
        for tokens in self._states:
            shared = common_prefix(tokens, prompt)
            if shared > best_shared:
                best, best_shared = tokens, shared
        restoring = self._states.pop(best) if best is not None else None
        discarded = len(live) - live_shared
        if discarded >= self.min_saved and discarded * 2 > len(live):
            self._states[live] = model.snapshot()
            self.saved += 1
            while len(self._states) > self.slots:
                self._states.popitem(last=False)
        if best is not None:
            model.restore(best, restoring)
            self.restored += 1

    def clear(self) -> None:
        self._states.clear()


# ---------------------------------------------------------------------------------------------- llama


@cache
def _runtime_llama_class() -> type:
    """llama_cpp.Llama with the runtime's hooks: greedy grammar sampling, saved states, evaluation counts."""
    try:
        import llama_cpp
        from llama_cpp import Llama
    except ImportError as exc:
        raise ConfigurationError(f"llama-cpp-python is not installed; run: {INSTALL_HINT}") from exc

    class RuntimeLlama(Llama):  # type: ignore[misc, valid-type]
        prompt_states: PromptStates | None = None
        model_param_overrides: dict[str, Any] = {}
        fast_sampling = True
        top_logprobs_request: int | None = None
        last_sampler: GreedyGrammarSampler | None = None
        last_prompt_evaluated = 0
        _counting_prompt = False

        def __init__(self, *args: Any, model_param_overrides: dict[str, Any] | None = None, **kw: Any):
            self.model_param_overrides = dict(model_param_overrides or {})
            super().__init__(*args, **kw)

        @property
        def model_params(self) -> Any:
            return self._model_params

        @model_params.setter
        def model_params(self, params: Any) -> None:
            # Llama.__init__ assigns llama_model_default_params() here, sets the fields its keywords cover and then
            # loads the model with it: the one place to set fields it has no keyword for (use_extra_bufts).
            for name, value in self.model_param_overrides.items():
                setattr(params, name, value)
            self._model_params = params

        def _init_sampler(self, **kw: Any) -> Any:  # Llama.generate and Llama.sample pass keywords only
            neutral = (kw.get("temp") == 0.0 and kw.get("repeat_penalty", 1.0) == 1.0
                       and not kw.get("frequency_penalty") and not kw.get("presence_penalty")
                       and not kw.get("mirostat_mode") and kw.get("logits_processor") is None)
            if not (self.fast_sampling and neutral):
                self.last_sampler = None
                return super()._init_sampler(**kw)
            self.last_sampler = GreedyGrammarSampler(llama_cpp, self._model.vocab, self._n_vocab,
                                                     kw.get("grammar"), self.top_logprobs_request)
            return self.last_sampler

        def generate(self, tokens: Sequence[int], *args: Any, **kw: Any) -> Any:
            tokens = list(tokens)
            if self.prompt_states is not None:
                self.prompt_states.before_prompt(self, tokens)
            self._counting_prompt = True
            return super().generate(tokens, *args, **kw)

        def eval(self, tokens: Sequence[int]) -> None:
            if self._counting_prompt:  # generate's first eval is the part of the prompt not reused
                self.last_prompt_evaluated = len(tokens)
                self._counting_prompt = False
            super().eval(tokens)

        def snapshot(self) -> Any:
            """The KV cells of sequence 0 (what input_ids[:n_tokens] describes)."""
            size = llama_cpp.llama_state_seq_get_size(self._ctx.ctx, 0)
            buffer = (ctypes.c_uint8 * size)()
            written = llama_cpp.llama_state_seq_get_data(self._ctx.ctx, buffer, size, 0)
            if written != size:
                raise RuntimeError(f"llama.cpp saved {written} of {size} bytes of the prompt state")
            return buffer

        def restore(self, tokens: Sequence[int], state: Any) -> None:
            self._ctx.kv_cache_seq_rm(0, -1, -1)  # a sequence restore does not clear the sequence first
            if llama_cpp.llama_state_seq_set_data(self._ctx.ctx, state, len(state), 0) == 0:
                self.n_tokens = 0
                raise RuntimeError("llama.cpp could not restore a saved prompt state")
            self.input_ids[: len(tokens)] = tokens
            self.n_tokens = len(tokens)
            self._requires_eval = True  # the restored cells carry no logits: generate evaluates >= 1 token

        def token_bytes(self, token: int) -> bytes:
            return bytes(self._model.detokenize([token]))  # as the completion text spells it

    return RuntimeLlama


@dataclass(frozen=True)
class Completion:
    """llama-cpp-python's response dict plus what the provider reports beside it."""

    result: dict[str, Any]
    prompt_tokens: int
    reused_tokens: int                       # prompt tokens whose KV state was reused, not evaluated
    choices: list[TokenChoice] | None        # one per completion token when log-probabilities were asked for
    token_bytes: Callable[[int], bytes]


class LlamaRuntime:
    """The embedded model: loaded on first use, one completion at a time, defaults as in ModelSettings.

    ``n_threads`` None chooses from the free cores at load time (:func:`threads.choose_threads`). ``state_slots`` is the
    number of saved prompt states (0 keeps only llama.cpp's live one). ``fast_sampling`` False uses
    llama-cpp-python's own sampler chain (the benchmark's "old" runtime). ``llama_factory(runtime)`` builds the
    model object; tests pass a fake. ``kernels`` chooses llama.cpp's CPU kernels (:mod:`judge.llm.embedded.kernels`;
    None: ``auto`` for this CPU).
    """

    def __init__(self, model_path: Path | str | None = None, *, n_ctx: int = N_CTX, n_threads: int | None = None,
                 seed: int = DEFAULT_SEED, state_slots: int = STATE_SLOTS, fast_sampling: bool = True,
                 kernels: KernelChoice | None = None, llama_factory: Callable[[LlamaRuntime], Any] | None = None):
        self.model_path = Path(model_path) if model_path is not None else None
        self.n_ctx = n_ctx
        self.requested_threads = n_threads
        self.n_threads: int | None = None  # chosen at load
        self.seed = seed
        self.fast_sampling = fast_sampling
        self.kernels = kernels or resolve_kernels()
        self.states = PromptStates(state_slots)
        self.load_seconds: float | None = None
        self._factory = llama_factory or _load_llama
        self._llama: Any = None
        self._lock = threading.RLock()
        # With no --threads, the count follows the machine's load: re-decided before each completion, since a job
        # that held a core when the model loaded may be gone a minute later (and one may start).
        self.load = threads.MachineLoad()
        self.thread_history: list[tuple[int, int]] = []  # (completion number, threads from then on)
        self._completions = 0

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    def llama(self) -> Any:
        """The loaded model (loading it, and assembling the weights, on first use)."""
        with self._lock:
            if self._llama is None:
                self.n_threads = threads.choose_threads(self.requested_threads)
                started = time.perf_counter()
                llama = self._factory(self)
                self.load_seconds = time.perf_counter() - started
                llama.prompt_states = self.states
                llama.fast_sampling = self.fast_sampling
                self._llama = llama
            return self._llama

    def set_threads(self, n_threads: int | None) -> None:
        """Use ``n_threads`` (None: choose from the free cores) from the next completion on."""
        with self._lock:
            self.requested_threads = n_threads
            if self._llama is not None and hasattr(self._llama, "ctx"):
                import llama_cpp

                self.n_threads = threads.choose_threads(n_threads)
                llama_cpp.llama_set_n_threads(self._llama.ctx, self.n_threads, self.n_threads)

    def _follow_load(self, llama: Any) -> None:
        """Re-decide the thread count from the load other processes put on the cores since the last completion
        (only without a fixed --threads); llama.cpp takes a new count for the next call."""
        self._completions += 1
        if not self.thread_history:
            self.thread_history.append((self._completions, self.n_threads or 1))
        if self.requested_threads is not None:
            return
        others = self.load.others_busy()
        if others is None:
            return
        chosen = threads.threads_for(threads.usable_cpus(), others)
        if chosen != self.n_threads:
            if hasattr(llama, "ctx"):
                import llama_cpp

                llama_cpp.llama_set_n_threads(llama.ctx, chosen, chosen)
            self.n_threads = chosen
            self.thread_history.append((self._completions, chosen))

    def complete(self, top_logprobs: int | None = None, **kwargs: Any) -> Completion:
        """``Llama.create_chat_completion(**kwargs)`` under the lock, with prompt reuse and log-probabilities.

        ``top_logprobs`` None asks for no log-probabilities; an int n (0..20) records each completion token's
        log-probability and up to n grammar-allowed alternatives (greedy decoding only).
        """
        kwargs.setdefault("temperature", DEFAULT_TEMPERATURE)
        kwargs.setdefault("seed", self.seed)
        kwargs.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        with self._lock:
            llama = self.llama()
            self._follow_load(llama)
            llama.top_logprobs_request = top_logprobs
            llama.last_sampler = None
            llama.last_prompt_evaluated = 0
            result = llama.create_chat_completion(**kwargs)
            usage = result.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens", 0))
            completion_tokens = int(usage.get("completion_tokens", 0))
            reused = max(0, prompt_tokens - int(llama.last_prompt_evaluated))
            sampler = llama.last_sampler
            choices = None
            if top_logprobs is not None and sampler is not None:
                choices = list(sampler.choices[:completion_tokens])  # the end-of-generation token is not text
            return Completion(result, prompt_tokens, reused, choices, llama.token_bytes)

    def close(self) -> None:
        """Free the model (tests and benchmarks that load several runtimes)."""
        with self._lock:
            if self._llama is not None and hasattr(self._llama, "close"):
                self._llama.close()
            self._llama = None
            self.states.clear()


def _load_llama(runtime: LlamaRuntime) -> Any:
    path = runtime.model_path or ensure_model_file()
    threads = runtime.n_threads or 1
    return _runtime_llama_class()(
        model_path=str(path), n_ctx=runtime.n_ctx, n_threads=threads, n_threads_batch=threads,
        seed=runtime.seed, verbose=False, model_param_overrides=runtime.kernels.model_params(),
    )


"""The QA systems that take the EXAM: a small protocol, the LLM reader, and `load_qa` for CLI specs.

A QA system reads only the report's sentences (no citations, no documents) and answers one question:

    qa.answer(question, sentences, answers=()) -> QAAnswer(text | None, score, sentence_index)

`text` None means "no answer in this report". `score` is the system's own confidence (comparable only within
one system). `sentence_index` is the position in `sentences` the answer came from, when known.
`answers` is the nugget's answer key. Free readers (ExtractiveQA, LLMReaderQA) must ignore it; only a
retrieve-and-verify reader (EmbeddingQA) uses it, and says so in its signature.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from judge.baselines.answers import AnswerMatcher, best_span
from judge.errors import ConfigurationError


@dataclass(frozen=True)
class QAAnswer:
    text: str | None
    score: float = 0.0
    sentence_index: int | None = None


NO_ANSWER = QAAnswer(None, 0.0, None)


@runtime_checkable
class QASystem(Protocol):
    def answer(self, question: str, sentences: Sequence[str], answers: Sequence[str] = ()) -> QAAnswer: ...


def qa_signature(qa: object) -> str:
    sig = getattr(qa, "signature", None)
    return sig() if callable(sig) else type(qa).__name__


def locate(text: str, sentences: Sequence[str]) -> int | None:
    """The sentence an answer most likely came from: the first with the best token-F1 span (> 0) or None."""
    best, where = 0.0, None
    for i, sentence in enumerate(sentences):
        span = best_span(sentence, text, AnswerMatcher("f1", 1e-9))
        if span is not None and span.f1 > best:
            best, where = span.f1, i
    return where


Ask = Callable[[str, str], "str | None | Awaitable[str | None]"]


class LLMReaderQA:
    """An LLM reads the whole report text and answers the question (or returns None / "" for no answer).

    `ask(question, report_text)` may be sync or async; it is not tied to any LLM library. The report text is
    the sentences joined with spaces. Called from inside a running event loop, `answer` runs the coroutine in
    a worker thread; async code should await `aanswer` instead.
    """

    def __init__(self, ask: Ask, name: str = "llm"):
        self.ask = ask
        self.name = name

    def signature(self) -> str:
        return f"qa=llm-reader({self.name}; reads the report text, no answer key)"

    @staticmethod
    def _clean(raw: object) -> str | None:
        if raw is None:
            return None
        text = str(raw).strip()
        return text or None

    def _result(self, raw: object, sentences: Sequence[str]) -> QAAnswer:
        text = self._clean(raw)
        if text is None:
            return NO_ANSWER
        return QAAnswer(text, 1.0, locate(text, sentences))

    async def aanswer(self, question: str, sentences: Sequence[str], answers: Sequence[str] = ()) -> QAAnswer:
        raw = self.ask(question, " ".join(sentences))
        if inspect.isawaitable(raw):
            raw = await raw
        return self._result(raw, sentences)

    def answer(self, question: str, sentences: Sequence[str], answers: Sequence[str] = ()) -> QAAnswer:
        raw = self.ask(question, " ".join(sentences))
        if inspect.isawaitable(raw):
            raw = _run_coroutine(raw)
        return self._result(raw, sentences)


def _run_coroutine(awaitable: Awaitable) -> object:
    async def wrap() -> object:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    box: dict[str, object] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(wrap())
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def load_qa(spec: str, *, k: int = 3, matcher: AnswerMatcher | None = None, null_threshold: float = 0.0,
            device: str = "cpu") -> QASystem:
    """A QA system from a CLI spec: `embedding`, `embedding:PATH` (a sentence-transformers directory) or
    `extractive:PATH` (a local AutoModelForQuestionAnswering checkpoint directory)."""
    kind, _, path = spec.partition(":")
    if kind == "embedding":
        from judge.baselines.embedding_qa import EmbeddingQA

        return EmbeddingQA(model_path=path or None, k=k, matcher=matcher, device=device)
    if kind == "extractive":
        if not path:
            raise ConfigurationError("--qa extractive needs a model directory: "
                                     "extractive:/path/to/squad2-model")
        from judge.baselines.extractive_qa import ExtractiveQA

        return ExtractiveQA(path, null_threshold=null_threshold, device=device)
    raise ConfigurationError(f"unknown QA system {spec!r}; use embedding, embedding:PATH or extractive:PATH")

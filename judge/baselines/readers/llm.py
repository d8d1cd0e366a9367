"""LLMReaderQA: an LLM reads the whole report text and answers the question; not tied to any LLM library."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from judge.baselines.readers.base import NO_ANSWER, QAAnswer, locate
from judge.event_loop import run_sync

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
            raw = run_sync(raw)
        return self._result(raw, sentences)

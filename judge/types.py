"""Domain types: what the readers produce and the walker consumes. Immutable, validated, format-agnostic."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from judge.labels import IMPORTANCE_WEIGHT, Aggregator, Importance, LimitUnit


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Request(_Frozen):
    """A report request (TREC NeuCLIR / RAGTIME / RAG). `limit` is the report length limit, counted in
    `limit_unit` (characters unless the request gave a `word_limit`)."""

    request_id: str
    title: str | None = None
    background: str = ""
    problem_statement: str
    limit: int | None = None
    limit_unit: LimitUnit = "characters"
    collection_ids: tuple[str, ...] = ()

    def length_of(self, text: str) -> int:
        """How much of the limit `text` uses: characters, or whitespace-separated words."""
        return len(text.split()) if self.limit_unit == "words" else len(text)


class Answer(_Frozen):
    """One acceptable answer to a nugget question and the documents that attest it (may be none)."""

    text: str
    doc_ids: tuple[str, ...] = ()


class Nugget(_Frozen):
    """A nugget: a question with acceptable answers. OR: any answer earns it; AND: all answers are needed.

    An absence nugget (`absence=True`) records that the collection lacks some requested information;
    a report earns it by saying so (outcome #8).
    """

    nugget_id: str
    question: str
    aggregator: Aggregator = "OR"
    importance: Importance = "okay"
    absence: bool = False
    answers: tuple[Answer, ...] = ()

    @property
    def weight(self) -> int:
        return IMPORTANCE_WEIGHT[self.importance]

    def answers_attested_by(self, doc_ids: set[str] | frozenset[str]) -> tuple[Answer, ...]:
        return tuple(a for a in self.answers if doc_ids.intersection(a.doc_ids))


class NuggetBank(_Frozen):
    request_id: str
    nuggets: tuple[Nugget, ...] = ()

    def by_id(self) -> dict[str, Nugget]:
        return {n.nugget_id: n for n in self.nuggets}


class Sentence(_Frozen):
    """One segment of a report exactly as its writer segmented it (we never re-split)."""

    index: int
    text: str
    citations: tuple[str, ...] = ()


class Report(_Frozen):
    run_id: str
    request_id: str
    team_id: str | None = None
    sentences: tuple[Sentence, ...] = ()
    # Where the report came from, so later errors can name the file and line.
    source: str | None = Field(default=None, description="path:line of the report in its input file")

    @property
    def key(self) -> tuple[str, str]:
        return (self.run_id, self.request_id)


class Document(_Frozen):
    doc_id: str
    title: str | None = None
    text: str


class DocumentLookup(Protocol):
    """Anything with `get(doc_id) -> Document | None`: a DocumentStore (the documents as the model is shown them),
    or a plain dict in tests."""

    def get(self, doc_id: str) -> Document | None: ...

"""Nugget banks from documents: `create_banks` drafts questions with short answers from each request's
documents, binds every answer to the documents that attest it (eval's supports_citation decision), merges
near-duplicate questions and keeps at most K nuggets per request.

Per request:
1. the documents: all that are given, or (`max_docs`) the top ones by the document_relevance decision (ties in
   input order);
2. drafting: one draft_nuggets call per document (and per gold report, whose sentences are a source of questions
   but never attest anything);
3. merging: a drafted question whose content words overlap an earlier one's by at least `merge_overlap`
   (Jaccard, judge.nuggets.text) is the same nugget; answers with the same normalised text are one answer;
4. binding: each answer's claim is put to supports_citation against the document it was drafted from and
   against up to `max_extra_bindings` other documents of the request that contain most of the answer's words.
   The claim is the drafted statement when it gives the answer (holds `claim_share` of the answer's words), else
   the question followed by the answer: a drafted statement that leaves the answer out would bind the document to
   something else than the answer;
   an answer bound to no document is dropped (a bank never holds an unattested answer), and so is a nugget left
   without answers;
5. the K kept: vital before okay, then by the number of attesting documents, then in drafting order.

Every drafted item, every binding asked and why an item was dropped are in the review rows, which the command
writes beside the banks for a person to read before the banks are used.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from judge.chart import DOCUMENT_RELEVANCE, DRAFT_NUGGETS, SUPPORTS_CITATION
from judge.errors import InputError
from judge.formats.nugget_fields import derived_id
from judge.judging.decisions import document_relevance, draft_nuggets, supports_citation
from judge.judging.decisions.asker import Decider
from judge.judging.decisions.spec import DocumentLookup
from judge.labels import Importance
from judge.nuggets.calls import Calls, ask
from judge.nuggets.settings import NuggetSettings
from judge.nuggets.text import claim_of, normalised, overlap, share_in
from judge.settings import PassagePolicy
from judge.types import Answer, Document, Nugget, NuggetBank, Report, Request

CREATION_DECISIONS = (DOCUMENT_RELEVANCE, DRAFT_NUGGETS, SUPPORTS_CITATION)


@dataclass
class Drafted:
    """One drafted answer on its way to a bank (or not), as the review row shows it."""

    request_id: str
    source: str                     # the document (or gold:<run>) it was drafted from
    question: str
    answer: str
    statement: str
    importance: Importance
    nugget_id: str = ""
    bindings: list[dict[str, Any]] = field(default_factory=list)
    status: str = "drafted"         # kept | dropped: <why>
    claim: str = ""                 # what supports_citation is asked (see claim_of)

    def row(self) -> dict[str, Any]:
        return {"kind": "answer", "request_id": self.request_id, "source": self.source,
                "nugget_id": self.nugget_id, "question": self.question, "answer": self.answer,
                "statement": self.statement, "claim": self.claim, "importance": self.importance,
                "bindings": self.bindings, "status": self.status}


@dataclass
class RequestCreation:
    """What creation made of one request."""

    bank: NuggetBank
    statements: dict[tuple[str, str, str], str]
    review: list[dict[str, Any]]
    calls: Calls
    seconds: float


async def create_request(request: Request, documents: list[Document], decider: Decider, settings: NuggetSettings,
                         gold: list[Report] = (), passages: PassagePolicy = PassagePolicy()) -> RequestCreation:
    """One request's bank from its documents (see the module's steps)."""
    started = time.perf_counter()
    calls = Calls()
    review: list[dict[str, Any]] = []
    chosen = await _choose(request, documents, decider, settings, calls, review)
    sources: list[Document] = chosen + [_gold_source(report) for report in gold]
    drafts = await asyncio.gather(*(ask(decider, draft_nuggets.prepare(request, doc, settings.per_document), calls)
                                    for doc in sources))
    drafted: list[Drafted] = []
    for doc, draft in zip(sources, drafts, strict=True):
        if draft.response is None:
            review.append({"kind": "draft_failed", "request_id": request.request_id, "source": doc.doc_id,
                           "error": draft.record.error})
            continue
        for item in draft.response.nuggets:  # type: ignore[attr-defined]
            drafted.append(Drafted(request.request_id, doc.doc_id, item.question.strip(), item.answer.strip(),
                                   item.statement.strip(), item.importance))
    _merge(drafted, settings)
    by_id = {doc.doc_id: doc for doc in chosen}
    await asyncio.gather(*(_bind(request, d, chosen, by_id, decider, settings, passages, calls) for d in drafted))
    bank, statements = _bank(request.request_id, drafted, settings)
    review.extend(d.row() for d in drafted)
    return RequestCreation(bank, statements, review, calls, time.perf_counter() - started)


async def _choose(request: Request, documents: list[Document], decider: Decider, settings: NuggetSettings,
                  calls: Calls, review: list[dict[str, Any]]) -> list[Document]:
    if settings.max_docs is None or len(documents) <= settings.max_docs:
        return documents
    responses = [asked.response for asked in await asyncio.gather(
        *(ask(decider, document_relevance.prepare(request, doc), calls) for doc in documents))]
    grades = [document_relevance.GRADE[r.relevance] if r is not None else -1  # type: ignore[attr-defined]
              for r in responses]
    order = sorted(range(len(documents)), key=lambda i: (-grades[i], i))
    kept = set(order[: settings.max_docs])
    for i, doc in enumerate(documents):
        relevance = responses[i].relevance if responses[i] is not None else None  # type: ignore[attr-defined]
        review.append({"kind": "document", "request_id": request.request_id, "doc_id": doc.doc_id,
                       "relevance": relevance, "chosen": i in kept})
    return [doc for i, doc in enumerate(documents) if i in kept]


def _gold_source(report: Report) -> Document:
    """A gold report as a drafting source: its sentences, without citations. It attests nothing."""
    return Document(doc_id=f"gold:{report.run_id}", title=None, text=" ".join(s.text for s in report.sentences))


def _merge(drafted: list[Drafted], settings: NuggetSettings) -> None:
    """Give near-duplicate questions one nugget id (the first question's)."""
    firsts: list[Drafted] = []
    for item in drafted:
        same = next((f for f in firsts if overlap(f.question, item.question) >= settings.merge_overlap), None)
        if same is None:
            item.nugget_id = derived_id(item.question)
            firsts.append(item)
        else:
            item.nugget_id = same.nugget_id


async def _bind(request: Request, item: Drafted, chosen: list[Document], by_id: dict[str, Document],
                decider: Decider, settings: NuggetSettings, passages: PassagePolicy, calls: Calls) -> None:
    """Ask supports_citation of the drafting document and of the others that hold most of the answer's words."""
    item.claim = claim_of(item.question, item.answer, item.statement, settings.claim_share)
    probe = item.answer if share_in(item.answer, item.answer) else item.claim
    targets = [by_id[item.source]] if item.source in by_id else []
    others = [d for d in chosen if d.doc_id != item.source and share_in(probe, d.text) >= settings.bind_share]
    targets += others[: settings.max_extra_bindings]
    records = [asked.record for asked in await asyncio.gather(*(ask(
        decider, supports_citation.prepare(request, item.claim, [doc], passages), calls) for doc in targets))]
    for doc, record in zip(targets, records, strict=True):
        # model_verdict and threshold say when eval's threshold flipped the model's verdict (else None)
        item.bindings.append({"doc_id": doc.doc_id, "verdict": record.verdict, "evidence": record.evidence,
                              "confidence": record.confidence, "model_verdict": record.model_verdict,
                              "threshold": record.threshold, "error": record.error})


def _bank(request_id: str, drafted: list[Drafted], settings: NuggetSettings
          ) -> tuple[NuggetBank, dict[tuple[str, str, str], str]]:
    questions: dict[str, str] = {}
    importance: dict[str, Importance] = {}
    answers: dict[str, dict[str, tuple[str, dict[str, None], str]]] = {}  # nugget -> normalised -> (text, docs, st)
    order: list[str] = []
    for item in drafted:
        attested = [b["doc_id"] for b in item.bindings if b["verdict"] is True]
        if not attested:
            item.status = ("dropped: no document was asked (the answer's words are in none)" if not item.bindings
                           else "dropped: no document attests it")
            continue
        item.status = "kept"
        if item.nugget_id not in questions:
            questions[item.nugget_id] = item.question
            order.append(item.nugget_id)
        if item.importance == "vital":
            importance[item.nugget_id] = "vital"
        importance.setdefault(item.nugget_id, item.importance)
        held = answers.setdefault(item.nugget_id, {})
        key = normalised(item.answer)
        text, docs, statement = held.get(key, (item.answer, {}, item.claim))
        docs.update(dict.fromkeys(attested))
        held[key] = (text, docs, statement)
    def rank(nugget_id: str) -> tuple[int, int, int]:
        documents = {d for _, docs, _ in answers[nugget_id].values() for d in docs}
        return (importance[nugget_id] != "vital", -len(documents), order.index(nugget_id))
    kept = sorted(order, key=rank)[: settings.max_nuggets]
    for item in drafted:
        if item.status == "kept" and item.nugget_id not in kept:
            item.status = f"dropped: beyond the {settings.max_nuggets} nuggets kept for the request"
    nuggets = []
    statements: dict[tuple[str, str, str], str] = {}
    for nugget_id in sorted(kept, key=order.index):
        held = answers[nugget_id]
        nuggets.append(Nugget(nugget_id=nugget_id, question=questions[nugget_id], importance=importance[nugget_id],
                              answers=tuple(Answer(text=t, doc_ids=tuple(d)) for t, d, _ in held.values())))
        for text, _, statement in held.values():
            statements[(request_id, nugget_id, text)] = statement
    return NuggetBank(request_id=request_id, nuggets=tuple(nuggets)), statements


def documents_of(request_ids: list[str], doc_lists: dict[str, list[str]] | None, all_ids: list[str],
                 store: DocumentLookup, where: str) -> dict[str, list[Document]]:
    """Each request's documents found in the store: its list (or every document given); a request left with
    none is an InputError (a bank drafted from nothing would be empty, not a bank)."""
    found: dict[str, list[Document]] = {}
    for request_id in request_ids:
        ids = doc_lists.get(request_id, []) if doc_lists is not None else all_ids
        docs = [d for d in (store.get(i) for i in ids) if d is not None]
        if not docs:
            listed = f"{len(ids)} listed, none in the documents given" if ids else "none listed"
            raise InputError(f"no documents for request {request_id!r} ({listed}); list its documents or drop the "
                             "request", where)
        found[request_id] = docs
    return found

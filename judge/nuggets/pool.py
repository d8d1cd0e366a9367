"""More answers for a bank's questions, from runs' reports (the ARGUE paper's answer pooling), each attested by a
document the report cites.

For every cited sentence of a report whose request has a bank:
1. answers_question: which of the bank's questions the sentence answers, with what answer and statement; the
   claim asked next is that statement when it gives the answer, else the question and the answer
   (judge.nuggets.text.claim_of);
2. answers_nugget (eval's decision, over the answers the bank holds for that question, references ignored):
   whether the claim restates an answer the bank holds; if so it is no candidate;
3. supports_citation (eval's decision): whether a document the sentence cites supports the claim; an answer
   no cited document attests is refused.
The same new answer (normalised text) to the same question from several sentences is one candidate, with every
sentence, run and attesting document that led to it. Candidates are only proposals: `accept` adds the ones a
person marked `"accept": true` to the bank, as `pooled` answers.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass, field
from typing import Any

from judge.chart import ANSWERS_NUGGET, ANSWERS_QUESTION, SUPPORTS_CITATION
from judge.errors import InputError
from judge.judging.decisions import answers_nugget, answers_question, supports_citation
from judge.judging.decisions.asker import Decider
from judge.judging.decisions.spec import DocumentLookup
from judge.nuggets.calls import Calls, ask
from judge.nuggets.settings import NuggetSettings
from judge.nuggets.text import claim_of, normalised
from judge.settings import PassagePolicy
from judge.types import Answer, NuggetBank, Report, Request, Sentence

POOL_DECISIONS = (ANSWERS_QUESTION, ANSWERS_NUGGET, SUPPORTS_CITATION)


@dataclass
class PoolCounts:
    """What pooling saw, for its summary."""

    sentences: int = 0            # cited sentences asked about
    answers: int = 0              # (sentence, question) answers the judge extracted
    restated: int = 0             # of those, restating an answer the bank holds
    unattested: int = 0           # new, but no cited document attests it
    attested: int = 0             # new and attested (before merging into candidates)
    failed: int = 0               # decisions that failed (counted, never taken as "no")

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Candidate:
    request_id: str
    nugget_id: str
    question: str
    answer: str
    statement: str
    claim: str
    doc_ids: dict[str, None] = field(default_factory=dict)
    sentences: list[dict[str, Any]] = field(default_factory=list)
    confidences: list[float] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        confidence = round(statistics.fmean(self.confidences), 4) if self.confidences else None
        runs = sorted({s["run_id"] for s in self.sentences})
        return {"request_id": self.request_id, "nugget_id": self.nugget_id, "question": self.question,
                "answer": self.answer, "statement": self.statement, "claim": self.claim,
                "doc_ids": list(self.doc_ids),
                "sentences": self.sentences, "runs": runs, "confidence": confidence, "accept": None}


@dataclass
class Pooled:
    candidates: list[dict[str, Any]]
    refused: list[dict[str, Any]]
    counts: PoolCounts
    calls: Calls


def check_banks(banks: dict[str, NuggetBank], requests: dict[str, Request], where: str) -> None:
    """A bank for a request the requests file lacks cannot be pooled (its prompt needs the request)."""
    unknown = sorted(set(banks) - set(requests))
    if unknown:
        raise InputError(f"a nugget bank for unknown request {unknown[0]!r}"
                         f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}; give its request in "
                         "--requests or drop the bank", where)


async def pool(reports: list[Report], banks: dict[str, NuggetBank], requests: dict[str, Request],
               documents: DocumentLookup, decider: Decider, settings: NuggetSettings = NuggetSettings(),
               passages: PassagePolicy = PassagePolicy()) -> Pooled:
    counts, calls = PoolCounts(), Calls()
    found: dict[tuple[str, str, str], Candidate] = {}
    refused: list[dict[str, Any]] = []
    work = [(report, sentence) for report in reports if report.request_id in banks
            for sentence in report.sentences if sentence.citations]
    results = await asyncio.gather(*(_sentence(report, sentence, banks[report.request_id],
                                               requests[report.request_id], documents, decider, settings, passages,
                                               calls, counts)
                                     for report, sentence in work))
    for (report, sentence), outcomes in zip(work, results, strict=True):
        for outcome in outcomes:
            where = {"run_id": report.run_id, "index": sentence.index, "text": sentence.text,
                     "citations": list(sentence.citations)}
            if outcome["status"] != "attested":
                if outcome["status"] == "unattested":
                    refused.append({**outcome["item"], "sentence": where, "why": "no cited document attests it"})
                continue
            item = outcome["item"]
            key = (report.request_id, item["nugget_id"], normalised(item["answer"]))
            candidate = found.setdefault(key, Candidate(report.request_id, item["nugget_id"], item["question"],
                                                        item["answer"], item["statement"], item["claim"]))
            candidate.doc_ids.update(dict.fromkeys(outcome["doc_ids"]))
            candidate.sentences.append(where)
            candidate.confidences.extend(outcome["confidences"])
    return Pooled([c.row() for c in found.values()], refused, counts, calls)


async def _sentence(report: Report, sentence: Sentence, bank: NuggetBank, request: Request,
                    documents: DocumentLookup, decider: Decider, settings: NuggetSettings, passages: PassagePolicy,
                    calls: Calls,
                    counts: PoolCounts) -> list[dict[str, Any]]:
    questions = [n for n in bank.nuggets if not n.absence]
    if not questions:
        return []
    counts.sentences += 1
    cited = tuple(sentence.citations)
    response = (await ask(decider, answers_question.prepare(request, sentence.text, questions, cited), calls)).response
    if response is None:
        counts.failed += 1
        return []
    by_label = dict(zip((f"Q{n}" for n in range(1, len(questions) + 1)), questions, strict=True))
    outcomes = []
    for given in response.answers:  # type: ignore[attr-defined]
        counts.answers += 1
        nugget = by_label[given.label]
        answer = given.answer.strip()
        statement = given.statement.strip()
        item = {"nugget_id": nugget.nugget_id, "question": nugget.question, "answer": answer,
                "statement": statement, "claim": claim_of(nugget.question, answer, statement, settings.claim_share)}
        held = [a.text for a in nugget.answers if a.text.strip()]
        if held:
            record = (await ask(decider, answers_nugget.prepare(request, item["claim"], [(nugget, held)], cited),
                                calls)).record
            if record.verdict is None:
                counts.failed += 1
                continue
            if record.verdict:
                counts.restated += 1
                outcomes.append({"status": "restated", "item": item})
                continue
        found = [d for d in (documents.get(i) for i in cited) if d is not None]
        records = [asked.record for asked in await asyncio.gather(*(ask(
            decider, supports_citation.prepare(request, item["claim"], [doc], passages), calls)
            for doc in found))]
        counts.failed += sum(r.verdict is None for r in records)
        attesting = [doc.doc_id for doc, r in zip(found, records, strict=True) if r.verdict is True]
        if not attesting:
            counts.unattested += 1
            outcomes.append({"status": "unattested", "item": item})
            continue
        counts.attested += 1
        outcomes.append({"status": "attested", "item": item, "doc_ids": attesting,
                         "confidences": [r.confidence for r in records if r.verdict and r.confidence is not None]})
    return outcomes


def accept(banks: dict[str, NuggetBank], reviewed: list[tuple[int, dict[str, Any]]], where: str
           ) -> tuple[dict[str, NuggetBank], list[tuple[str, str, str]]]:
    """The banks with every candidate a person marked `"accept": true` added as an answer (its attesting
    documents as references); the (request, nugget, answer) keys added. Every candidate must carry a decision:
    one still `null` is an InputError naming its line, so a half-read file is not taken for a review."""
    extended = dict(banks)
    added: list[tuple[str, str, str]] = []
    for line, row in reviewed:
        decision = row.get("accept")
        if decision is None:
            raise InputError("candidate not reviewed: set \"accept\" to true or false", where, line)
        if not isinstance(decision, bool):
            raise InputError(f"\"accept\" must be true or false, found {decision!r}", where, line)
        if not decision:
            continue
        request_id, nugget_id, text = row.get("request_id"), row.get("nugget_id"), row.get("answer")
        bank = extended.get(str(request_id))
        if bank is None:
            raise InputError(f"candidate for request {request_id!r}, which has no bank in --nuggets", where, line)
        nuggets = list(bank.nuggets)
        index = next((i for i, n in enumerate(nuggets) if n.nugget_id == nugget_id), None)
        if index is None:
            raise InputError(f"candidate for nugget {nugget_id!r}, not in the bank of request {request_id!r}",
                             where, line)
        if not isinstance(text, str) or not text.strip():
            raise InputError("candidate without an answer: give \"answer\" a text", where, line)
        doc_ids = tuple(str(d) for d in row.get("doc_ids") or ())
        nugget = nuggets[index]
        if any(normalised(a.text) == normalised(text) for a in nugget.answers):
            continue  # already held (accepted twice, or a person added it meanwhile)
        nuggets[index] = nugget.model_copy(update={"answers": (*nugget.answers, Answer(text=text, doc_ids=doc_ids))})
        extended[bank.request_id] = bank.model_copy(update={"nuggets": tuple(nuggets)})
        added.append((bank.request_id, str(nugget_id), text))
    return extended, added

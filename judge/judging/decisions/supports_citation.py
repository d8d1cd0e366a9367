"""Does a cited document support the sentence? (ARGUE: the first diamond on the cited branch.)

Evidence is given by number, never by copying: the document is shown as numbered passages (its sentences, from
judge.judging.passages' splitter; a very long one wrapped, a very short one joined to the next) and the judge lists the
numbers of the passages that show the claim. Each call's response schema allows only the numbers shown, so a
grammar-constrained local model cannot write another; a hosted model that does is re-asked with a precise
message. The record keeps the numbers and the exact passage text they resolve to: verified evidence by
construction. (The older layout, evidence copied word for word, is benchmarks/lab/legacy_support.py's.)
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pydantic import Field, ValidationInfo, field_validator, model_validator

from judge.chart import SUPPORTS_CITATION
from judge.formats.judgments import ARGUE_JUDGE, DecisionRecord, ShownText
from judge.judging.decisions.base import (
    DecisionResponse,
    Prepared,
    as_number,
    normalise,
    render_request,
)
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.judging.passages import PassagePolicy, select_passages, sentences, share_of
from judge.judging.prompts import render_numbered_documents
from judge.labels import SupportVerdict
from judge.types import Document, Request

MISSING_DOCUMENT = "the cited document is not in the collection"
MIN_READABLE_CHARS = 40
MAX_EVIDENCE = 8               # passages a judge may list: the fewest that show the claim
MIN_PASSAGE_CHARS = 25         # a shorter sentence ("Mr.", a heading) is joined to the next one
MAX_PASSAGE_CHARS = 400        # a longer one (a table row, text without full stops) is wrapped at a space
# Where select_passages left text out of a cut document (judge.judging.passages.GAP, also at either end).
_GAP = re.compile(r"(?:^|\n)\[\.\.\.\](?:\n|$)")
# Small models often quote with our own fencing around the text ("<document>[d1] Title ..."); those pieces are
# not evidence, the words between them are. (Used for copied evidence: the legacy layout and the HTML view.)
_DEBRIS = re.compile(r"<[^>]{0,40}>|\[[^\]]{0,80}\]|\.\.\.|…|\n+")


def quoted_fragments(evidence: str) -> list[str]:
    """The pieces of a quote that must each occur in the document (at least three words each)."""
    pieces = (normalise(p).strip("\"'“”‘’ ") for p in _DEBRIS.split(evidence))
    return [p for p in pieces if len(p.split()) >= 3]


def passage_count(context: dict[str, Any] | None) -> int | None:
    """How many numbered passages the call showed (None: validated without a call's context)."""
    passages = (context or {}).get("passages")
    return None if passages is None else len(passages)


class SupportsCitation(DecisionResponse):
    """Whether the document supports everything the report sentence states."""

    evidence: list[int] = Field(
        max_length=MAX_EVIDENCE,
        description="Numbers of the fewest document passages ([1], [2], ...) that together show the sentence is "
        "supported; empty when it is not supported.")
    verdict: SupportVerdict = Field(
        description="supported: the document alone supports everything the sentence states; not_supported: it "
        "does not; cannot_judge: the document is unreadable or empty.")
    contract_helpers = (passage_count, as_number, MIN_READABLE_CHARS, MAX_EVIDENCE)
    verdict_field = "verdict"

    @field_validator("evidence", mode="before")
    @classmethod
    def _numbers_are_shown(cls, numbers: Any, info: ValidationInfo) -> Any:
        """Runs before the per-call schema check, so a hosted model's slip gets a message it can act on."""
        if not isinstance(numbers, list):
            return numbers
        read = [as_number(n) for n in numbers]
        count = passage_count(info.context)
        if count is None:
            return read
        if count == 0 and read:
            raise ValueError("The document has no numbered passages, so list no evidence: answer 'cannot_judge' "
                             "if it is empty or unreadable, otherwise 'not_supported'.")
        unknown = [n for n in read if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= count]
        if unknown:
            raise ValueError(f"{unknown} are not passage numbers of the document: it has passages [1] to "
                             f"[{count}]. List only numbers shown in square brackets at the start of its lines.")
        chosen = sorted(set(read))
        if len(chosen) > MAX_EVIDENCE:
            raise ValueError(f"List at most {MAX_EVIDENCE} passage numbers: the fewest that show the sentence.")
        return chosen

    @model_validator(mode="after")
    def _verdict_fits_the_evidence(self, info: ValidationInfo) -> SupportsCitation:
        context = info.context or {}
        if "passages" not in context:
            return self
        # Only what the per-call schema cannot already rule out, and nothing it admits: a grammar-constrained judge
        # writes any answer the schema admits, and a rejection it cannot act on is a failed decision. So the
        # outlet is refused only where the call did not offer it and the text is long enough to read; and a
        # 'supported' without passage numbers (the prompt asks for them; a schema cannot tie one field to another)
        # is kept as the judge's verdict with no evidence recorded, never re-asked into a failure.
        passages = context["passages"]
        readable = sum(len(p) for p in passages)
        if (self.verdict == "cannot_judge" and readable >= MIN_READABLE_CHARS
                and "cannot_judge" not in allowed_verdicts(passages)):
            raise ValueError("The document is readable, so decide: 'supported' if it states everything the "
                             "sentence says, otherwise 'not_supported'.")
        return self

    def decided(self) -> bool | None:
        return {"supported": True, "not_supported": False, "cannot_judge": None}[self.verdict]

    def evidence_numbers(self) -> list[int]:
        return list(self.evidence)

    def evidence_text(self, context: dict[str, Any]) -> str | None:
        passages: list[str] = context.get("passages", [])
        shown = [passages[n - 1] for n in self.evidence if 0 < n <= len(passages)]
        return "\n".join(shown) or None


def document_passages(shown: str, cut: bool) -> list[str | None]:
    """The passages to number, in order, with None where select_passages left text out (`cut`): the sentences
    of each stretch, white space collapsed, a long one wrapped, a short one joined to the next."""
    stretches = _GAP.split(shown) if cut else [shown]
    found: list[str | None] = []
    for position, stretch in enumerate(stretches):
        if position > 0:
            found.append(None)
        pieces: list[str] = []
        for unit in sentences(stretch):
            for piece in _wrapped(" ".join(unit.split())):
                if pieces and len(pieces[-1]) < MIN_PASSAGE_CHARS and len(pieces[-1]) + len(piece) < MAX_PASSAGE_CHARS:
                    pieces[-1] = f"{pieces[-1]} {piece}"
                else:
                    pieces.append(piece)
        found.extend(pieces)
    return found


def _wrapped(text: str) -> list[str]:
    pieces = []
    while len(text) > MAX_PASSAGE_CHARS:
        cut = text.rfind(" ", MAX_PASSAGE_CHARS // 2, MAX_PASSAGE_CHARS + 1)
        cut = cut if cut > 0 else MAX_PASSAGE_CHARS
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return pieces + ([text] if text else [])


def shown_documents(sentence: str, documents: list[Document], passages: PassagePolicy
                    ) -> list[tuple[str, str | None, list[str | None], ShownText]]:
    """Each document cut to its share of the budget (policy `joint` shows several; judge.judging.passages.share_of)
    and split into passages, with how much of it is shown."""
    share = share_of(passages, len(documents))
    shown = []
    for document in documents:
        text, cut = select_passages(document.text, sentence, share, document.doc_id)
        shown.append((document.doc_id, document.title, document_passages(text, cut),
                      ShownText(doc_id=document.doc_id, shown_chars=len(text), doc_chars=len(document.text),
                                budget_chars=share.max_chars)))
    return shown


def prepare(request: Request, sentence: str, documents: list[Document], passages: PassagePolicy) -> Prepared:
    """One document, or (policy `joint`) several shown together, numbered passage by passage."""
    shown = shown_documents(sentence, documents, passages)
    body = render_numbered_documents([(doc_id, title, pieces) for doc_id, title, pieces, _ in shown])
    numbered = [p for _, _, pieces, _ in shown for p in pieces if p is not None]
    return Prepared(
        decision=SUPPORTS_CITATION,
        values={"document": body, "request": render_request(request), "sentence": sentence},
        context={"document": body, "passages": numbered},
        doc_ids=tuple(d.doc_id for d in documents),
        choices=(("evidence", tuple(range(1, len(numbered) + 1))), ("verdict", allowed_verdicts(numbered))),
        shown=tuple(amount for *_, amount in shown),
    )


def allowed_verdicts(passages: list[str]) -> tuple[SupportVerdict, ...]:
    """'cannot_judge' only for a document with no letter or digit at all (empty, or nothing but symbols). A small
    model offered the outlet takes it often: on readable documents (each time a re-ask), and on short ones that
    people judge without trouble (of 350 dev items, it said cannot_judge to references of 20 and 30 characters,
    "chickens grow fatter", each a failed decision). The validator accepts the outlet below MIN_READABLE_CHARS,
    a superset of where it is offered, so hosted models without a grammar keep the older, wider outlet."""
    if any(char.isalnum() for passage in passages for char in passage):
        return ("supported", "not_supported")
    return ("supported", "not_supported", "cannot_judge")


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...]) -> Prepared | DecisionRecord:
    """The cited documents found in the collection, shown as `prepare` shows them (the missing ones recorded on
    the decision); when none is found, a "no" taken without a model: an unknown document supports nothing."""
    found = [doc for doc in (case.documents.get(d) for d in doc_ids) if doc is not None]
    absent = tuple(d for d in doc_ids if d not in {doc.doc_id for doc in found})
    if not found:
        return DecisionRecord(decision=SUPPORTS_CITATION, verdict=False, doc_ids=list(doc_ids),
                              rationale=MISSING_DOCUMENT, judge=ARGUE_JUDGE, missing_doc_ids=list(absent))
    prepared = prepare(case.request, case.sentence.text, found, case.passages)
    return replace(prepared, missing_doc_ids=absent)


DECISION = DecisionSpec(
    name=SUPPORTS_CITATION, abbreviation="sc", response_model=SupportsCitation, prompt="supports_citation",
    labels=("supported", "not_supported"), question="Does the cited document support the sentence?",
    prepare_for=prepare_for)

"""Does a cited document support the sentence? (ARGUE: the first diamond on the cited branch.)"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, model_validator

from judge.decisions.base import DecisionResponse, Prepared, normalise, render_request
from judge.labels import SupportVerdict
from judge.passages import PassagePolicy, select_passages
from judge.types import Document, Request


class SupportsCitation(DecisionResponse):
    """Whether the document supports everything the report sentence states."""

    evidence: str = Field(
        description="The shortest passage of the document, copied word for word, that shows the sentence is "
        "supported; empty when it is not supported.")
    verdict: SupportVerdict = Field(
        description="supported: the document alone supports everything the sentence states; not_supported: it "
        "does not; cannot_judge: the document is unreadable or empty.")

    @model_validator(mode="after")
    def _evidence_occurs_in_document(self, info: ValidationInfo) -> SupportsCitation:
        document = (info.context or {}).get("document")
        if document is None or self.verdict != "supported":
            return self
        if not self.evidence.strip():
            raise ValueError("You answered 'supported' but gave no evidence. Copy the passage of the document "
                             "that shows it, word for word, or answer 'not_supported'.")
        haystack = normalise(document)
        pieces = [p for p in (normalise(x) for x in self.evidence.replace("…", "...").split("...")) if p]
        if not all(p.strip("\"' ") in haystack for p in pieces):
            raise ValueError("The evidence you quoted does not occur in the document. Copy a passage word for "
                             "word from the document, or answer 'not_supported'.")
        return self

    def decided(self) -> bool | None:
        return {"supported": True, "not_supported": False, "cannot_judge": None}[self.verdict]

    def evidence_text(self) -> str | None:
        return self.evidence or None


def prepare(request: Request, sentence: str, documents: list[Document], passages: PassagePolicy) -> Prepared:
    """One document, or (policy `joint`) several shown together, each cut to its share of the budget."""
    share = PassagePolicy(max_chars=max(passages.max_chars // len(documents), passages.window_chars),
                          window_chars=passages.window_chars)
    shown = []
    for document in documents:
        text, _cut = select_passages(document.text, sentence, share)
        header = f"[{document.doc_id}] {document.title}" if document.title else f"[{document.doc_id}]"
        shown.append(f"{header}\n{text}")
    body = "\n\n".join(shown)
    return Prepared(
        decision="supports_citation",
        values={"request": render_request(request), "document": body, "sentence": sentence},
        context={"document": body},
        doc_ids=tuple(d.doc_id for d in documents),
    )

"""The injection detector's findings for a judged sentence, as the flags of its judgments record.

A sentence is flagged `addresses_judge` when its own text talks to the assessor, judge or model
(judge.defence.injection.detect: the rules, or else the learned detector), and `cited_document_addresses_judge` when
a document it cites does (the collection is not the report's doing, so that flag is never penalised). Each flag
comes with the rule that fired ("learned" for the learned detector, whose score is kept too). Documents are checked
once per walker, however many sentences cite them.
"""

from __future__ import annotations

from dataclasses import replace

from judge.defence.injection import Detection, detect
from judge.formats import DocumentStore
from judge.formats.judgments import ADDRESSES_JUDGE, CITED_DOCUMENT_ADDRESSES_JUDGE, Flag
from judge.types import Sentence


class FlagChecker:
    def __init__(self, documents: DocumentStore):
        self.documents = documents
        self._documents: dict[str, Detection] = {}

    def document_detection(self, doc_id: str) -> Detection:
        """What the detector finds in a document: in its text, else in its title (shown to the judge too; the
        rule then says so)."""
        if doc_id not in self._documents:
            document = self.documents.get(doc_id)
            found = detect(document.text) if document is not None else Detection(False)
            if not found.flagged and document is not None and document.title:
                in_title = detect(document.title)
                if in_title.flagged:
                    found = replace(in_title, rule=f"title: {in_title.rule}")
            self._documents[doc_id] = found
        return self._documents[doc_id]

    def document_rule(self, doc_id: str) -> str | None:
        detection = self.document_detection(doc_id)
        return detection.rule if detection.flagged else None

    def _detections(self, sentence: Sentence) -> list[tuple[str, Detection]]:
        """("sentence" or "document <doc_id>", what the detector found there) for every flagged text."""
        found = [("sentence", own)] if (own := detect(sentence.text)).flagged else []
        for doc_id in dict.fromkeys(sentence.citations):
            if (detection := self.document_detection(doc_id)).flagged:
                found.append((f"document {doc_id}", detection))
        return found

    def flags(self, sentence: Sentence) -> tuple[list[Flag], list[str]]:
        """The sentence's flags and the rules behind them ("sentence: <rule>", "document <doc_id>: <rule>")."""
        found = self._detections(sentence)
        flags: list[Flag] = []
        if any(where == "sentence" for where, _ in found):
            flags.append(ADDRESSES_JUDGE)
        if any(where != "sentence" for where, _ in found):
            flags.append(CITED_DOCUMENT_ADDRESSES_JUDGE)
        return flags, [f"{where}: {detection.rule}" for where, detection in found]

    def scores(self, sentence: Sentence) -> dict[str, float]:
        """The learned detector's score behind each of the sentence's flag rules it fired (keyed like them)."""
        return {f"{where}: {d.rule}": d.score for where, d in self._detections(sentence) if d.score is not None}

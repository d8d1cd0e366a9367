"""The injection detector's findings for a judged sentence, as the flags of its judgments record.

A sentence is flagged `addresses_judge` when its own text talks to the assessor, judge or model
(judge.defence.injection.detect), and `cited_document_addresses_judge` when a document it cites does (the collection is
not the report's doing, so that flag is never penalised). Each flag comes with the rule that fired. Documents are
checked once per walker, however many sentences cite them.
"""

from __future__ import annotations

from judge.defence.injection import detect
from judge.formats import DocumentStore
from judge.formats.judgments import ADDRESSES_JUDGE, CITED_DOCUMENT_ADDRESSES_JUDGE, Flag
from judge.types import Sentence


class FlagChecker:
    def __init__(self, documents: DocumentStore):
        self.documents = documents
        self._document_rules: dict[str, str | None] = {}

    def document_rule(self, doc_id: str) -> str | None:
        if doc_id not in self._document_rules:
            document = self.documents.get(doc_id)
            detection = detect(document.text) if document is not None else None
            self._document_rules[doc_id] = detection.rule if detection and detection.flagged else None
        return self._document_rules[doc_id]

    def flags(self, sentence: Sentence) -> tuple[list[Flag], list[str]]:
        """The sentence's flags and the rules behind them ("sentence: <rule>", "document <doc_id>: <rule>")."""
        flags: list[Flag] = []
        rules: list[str] = []
        own = detect(sentence.text)
        if own.flagged:
            flags.append(ADDRESSES_JUDGE)
            rules.append(f"sentence: {own.rule}")
        for doc_id in dict.fromkeys(sentence.citations):
            rule = self.document_rule(doc_id)
            if rule is not None:
                rules.append(f"document {doc_id}: {rule}")
        if len(rules) > len(flags):
            flags.append(CITED_DOCUMENT_ADDRESSES_JUDGE)
        return flags, rules

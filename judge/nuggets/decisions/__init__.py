"""The decisions that make and extend nugget banks, one module and one prompt (prompts/<name>.md) each, declared
as `DECISION` specs like the flowchart's (judge.judging.decisions): `document_relevance` (which documents to draft
from), `draft_nuggets` (questions, short answers, statements and importance from one document) and
`answers_question` (the answer a report sentence gives to a bank's question, for pooling). Whether a document
attests an answer is never decided here: creation and pooling ask eval's own supports_citation decision.

They are not diamonds of the flowchart, so `CREATION` is a registry of its own; `judge.nuggets.asking` asks them
through the same decision client and cache as every other decision."""

from __future__ import annotations

from judge.judging.decisions.registry import Registry
from judge.nuggets.decisions import answers_question, document_relevance, draft_nuggets

CREATION = Registry.of_modules([document_relevance, draft_nuggets, answers_question])

__all__ = ["CREATION"]

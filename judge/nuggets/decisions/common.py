"""What the creation decisions share: how much of a document a drafting or relevance prompt shows, and a spec
hook for decisions the flowchart never asks."""

from __future__ import annotations

from judge.judging.decisions.spec import SentenceCase
from judge.judging.prompts import render_documents
from judge.types import Document

# A drafting prompt shows the document's start: the embedded judge's context holds about 4,000 tokens, and news
# articles put their facts first. Longer documents are cut at a space, and the cut is in the signature.
MAX_DOCUMENT_CHARS = 3000


def shown_document(document: Document, max_chars: int = MAX_DOCUMENT_CHARS) -> str:
    """The document as a drafting or relevance prompt shows it: its header and at most `max_chars` of its text."""
    text = document.text
    if len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars)
        text = text[: cut if cut > 0 else max_chars] + " [...]"
    return render_documents([(document.doc_id, document.title, text)])


def not_in_flowchart(case: SentenceCase, doc_ids: tuple[str, ...]) -> None:
    """The walker never asks a creation decision; this is its spec's `prepare_for`."""
    return None

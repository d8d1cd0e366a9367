"""Cheap text rules of creation and pooling: when two questions are near-duplicates, when two answers are the
same, which documents may attest an answer (worth a supports_citation call), and what sentence is asked."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been has have had it its this that "
    "these those as about into will would can could also which who whom whose what when where why how there their "
    "them they he she his her our we you your not no than then so such very do does did many much".split())


def normalised(text: str) -> str:
    """Case, accents, punctuation and spacing removed: two answers with the same normalised text are one."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode() or text
    return " ".join(_WORD.findall(folded.casefold()))


def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in normalised(text).split() if w not in _STOPWORDS)


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the content words of two texts (0 when either has none)."""
    left, right = content_words(a), content_words(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def share_in(text: str, document: str) -> float:
    """The share of `text`'s content words that occur in `document`."""
    words = content_words(text)
    if not words:
        return 0.0
    return len(words & content_words(document)) / len(words)


def claim_of(question: str, answer: str, statement: str, share: float) -> str:
    """The sentence a document must support for `answer` to be bound to it (creation) or to count as new
    (pooling): the model's statement when it holds `share` of the answer's content words, else the question and
    the answer. Small models often write a true statement that omits the answer ("The rover tested the
    instrument." for "When? April 20"); asked about it, the judge would attest something else than the answer."""
    if statement and share_in(answer, statement) >= share:
        return statement
    return f"{question} {answer}"

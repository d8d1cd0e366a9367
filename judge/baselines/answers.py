"""Answer matching for EXAM: SQuAD-style normalisation, exact match, token F1, and span search in a sentence.

Normalisation is the one of the SQuAD 1.1/2.0 evaluation script: lowercase, delete punctuation characters
(`string.punctuation`, without inserting spaces: "U.S." -> "us"), delete the articles a/an/the, collapse
whitespace. Tokens are the whitespace-separated pieces of the normalised text.

A QA answer *matches* a nugget answer when the normalised strings are equal (`exact`), or, in the default `f1`
mode, also when their token F1 (SQuAD's bag-of-tokens F1) is at least `f1_threshold` (default 0.5).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")

MatchMode = Literal["exact", "f1"]


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def token_f1(prediction: Sequence[str], gold: Sequence[str]) -> float:
    """SQuAD token F1 between two token lists (bags of tokens). Two empty lists count as equal (1.0)."""
    if not prediction or not gold:
        return float(list(prediction) == list(gold))
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class AnswerMatcher:
    """When a QA answer counts as one of a nugget's answers. `f1`: exact match OR token F1 >= threshold."""

    mode: MatchMode = "f1"
    f1_threshold: float = 0.5

    def __post_init__(self) -> None:
        if self.mode not in ("exact", "f1"):
            raise ValueError(f"match mode must be 'exact' or 'f1', not {self.mode!r}")
        if not 0.0 < self.f1_threshold <= 1.0:
            raise ValueError(f"f1_threshold must be in (0, 1], not {self.f1_threshold}")

    def score(self, prediction: str, gold: str) -> float:
        """1.0 for a normalised exact match, else the token F1 (0.0 in `exact` mode)."""
        p, g = normalize_answer(prediction), normalize_answer(gold)
        if not g:  # an answer that normalises to nothing ("The") cannot be matched
            return 0.0
        if p == g:
            return 1.0
        return token_f1(p.split(), g.split()) if self.mode == "f1" else 0.0

    def matches(self, prediction: str | None, golds: Iterable[str]) -> bool:
        if prediction is None:
            return False
        return any(self.score(prediction, g) >= self._needed for g in golds)

    @property
    def _needed(self) -> float:
        return 1.0 if self.mode == "exact" else self.f1_threshold

    def signature(self) -> str:
        return "match=exact" if self.mode == "exact" else f"match=exact|tokenF1>={self.f1_threshold:g}"


@dataclass(frozen=True)
class Span:
    text: str
    start: int   # character offsets into the searched text
    end: int
    f1: float


def _chunks(text: str) -> list[tuple[str, int, int]]:
    """(normalised token, start, end) per whitespace-separated chunk; chunks normalising to nothing drop out.

    Joining the normalised tokens of chunks i..j gives exactly normalize_answer(text[start_i:end_j]) because
    the normalisation works chunk by chunk (it deletes characters, never inserts separators).
    """
    out = []
    for m in re.finditer(r"\S+", text):
        for tok in normalize_answer(m.group()).split():
            out.append((tok, m.start(), m.end()))
    return out


def best_span(text: str, gold: str, matcher: AnswerMatcher, max_extra_tokens: int = 10) -> Span | None:
    """The span of `text` (whole whitespace chunks) closest to `gold` by token F1, if it passes `matcher`.

    An optimal span starts and ends on a token that occurs in the gold answer (trimming any other end token
    raises precision and keeps recall), so only such spans are tried, up to len(gold) + max_extra_tokens long.
    Ties go to the shorter, then the earlier span.
    """
    g = answer_tokens(gold)
    if not g:
        return None
    chunks = _chunks(text)
    gold_set = set(g)
    anchors = [i for i, (tok, _, _) in enumerate(chunks) if tok in gold_set]
    best: tuple[float, int, int] | None = None  # (f1, -length, -start) maximised
    best_ij = (0, 0)
    limit = len(g) + max_extra_tokens
    for a, i in enumerate(anchors):
        for j in anchors[a:]:
            if j - i + 1 > limit:
                break
            f1 = token_f1([c[0] for c in chunks[i:j + 1]], g)
            key = (f1, -(j - i), -i)
            if best is None or key > best:
                best, best_ij = key, (i, j)
    if best is None:
        return None
    i, j = best_ij
    start, end = chunks[i][1], chunks[j][2]
    span_text = text[start:end].strip(string.punctuation + " ") or text[start:end]
    # Stripping outer punctuation ("2021.") keeps the normalised tokens, so the F1 is unchanged.
    offset = text.find(span_text, start)
    span = Span(span_text, offset, offset + len(span_text), best[0])
    needed = 1.0 if matcher.mode == "exact" else matcher.f1_threshold
    score = matcher.score(span.text, gold)
    return span if score >= needed else None

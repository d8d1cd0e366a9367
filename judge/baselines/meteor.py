"""METEOR (Banerjee & Lavie 2005) with exact unigram matching only, written out so every step is checkable.

Tokens: the text lowercased, then every run of word characters (`\\w+`); punctuation is dropped.
Alignment: every word type is aligned min(count in hypothesis, count in reference) times, which is the largest
possible number of matches m. Which occurrences pair up is decided greedily, hypothesis left to right: a
hypothesis token takes the free reference occurrence right after the one its predecessor took (extending the
chunk) if there is one, else the free occurrence that starts the longest run of further matching tokens,
leftmost on ties. (Original METEOR searches for the alignment with the fewest crossings; the greedy rule gives
the same on ordinary text and is cheap and deterministic.) A hypothesis token whose word has no free reference
occurrence left stays unaligned.

    P = m / |hyp|,  R = m / |ref|,  Fmean = 10PR / (R + 9P)
    chunks = maximal runs of aligned tokens that are adjacent in both hypothesis and reference
    penalty = 0.5 * (chunks / m) ** 3,  METEOR = Fmean * (1 - penalty)      (0 when m = 0)
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\w+")


def meteor_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class MeteorDetail:
    matches: int
    chunks: int
    precision: float
    recall: float
    fmean: float
    penalty: float
    score: float


def align(hyp: Sequence[str], ref: Sequence[str]) -> list[tuple[int, int]]:
    """Greedy maximum-cardinality exact alignment as (hyp position, ref position) pairs, by hyp position."""
    free: dict[str, list[int]] = defaultdict(list)
    for j, tok in enumerate(ref):
        free[tok].append(j)
    budget = Counter(hyp) & Counter(ref)  # how many of each word can be aligned: min of the two counts
    taken = [False] * len(ref)
    pairs: list[tuple[int, int]] = []
    prev: tuple[int, int] | None = None
    for i, tok in enumerate(hyp):
        if budget[tok] == 0:
            prev = None
            continue
        candidates = [j for j in free[tok] if not taken[j]]
        choice = None
        if prev is not None and prev[0] == i - 1 and prev[1] + 1 in candidates:
            choice = prev[1] + 1
        else:
            choice = max(candidates, key=lambda j: (_run_length(hyp, ref, taken, i, j), -j))
        taken[choice] = True
        budget[tok] -= 1
        pairs.append((i, choice))
        prev = (i, choice)
    return pairs


def _run_length(hyp: Sequence[str], ref: Sequence[str], taken: Sequence[bool], i: int, j: int) -> int:
    """How many tokens match from hyp[i] and ref[j] on, over free reference positions."""
    n = 0
    while i + n < len(hyp) and j + n < len(ref) and not taken[j + n] and hyp[i + n] == ref[j + n]:
        n += 1
    return n


def count_chunks(pairs: Sequence[tuple[int, int]]) -> int:
    chunks = 0
    last: tuple[int, int] | None = None
    for i, j in pairs:
        if last is None or i != last[0] + 1 or j != last[1] + 1:
            chunks += 1
        last = (i, j)
    return chunks


def meteor_detail(hypothesis: str, reference: str) -> MeteorDetail:
    hyp, ref = meteor_tokens(hypothesis), meteor_tokens(reference)
    pairs = align(hyp, ref)
    m = len(pairs)
    if m == 0:
        return MeteorDetail(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    p, r = m / len(hyp), m / len(ref)
    fmean = 10 * p * r / (r + 9 * p)
    chunks = count_chunks(pairs)
    penalty = 0.5 * (chunks / m) ** 3
    return MeteorDetail(m, chunks, p, r, fmean, penalty, fmean * (1 - penalty))


def meteor(hypothesis: str, reference: str) -> float:
    return meteor_detail(hypothesis, reference).score


METEOR_SIGNATURE = ("METEOR(argue-judge: exact unigram matching only, tokens=lowercase \\w+, "
                    "greedy max-cardinality "
                    "alignment, Fmean=10PR/(R+9P), penalty=0.5*(chunks/m)^3)")

"""Where a judge's quoted evidence sits in a document's text, so the page can highlight it.

The support decision accepts a quote when each of its fragments occurs in the document after
`judge.judging.decisions.base.normalise` (case, quote style and runs of white space ignored). To highlight the same
passage in the original text we normalise the document while remembering, for every normalised character,
the original character it came from, find the fragments there and map the spans back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.judging.decisions.base import normalise
from judge.judging.decisions.supports_citation import quoted_fragments

# A document longer than this is shown as excerpts around the evidence, so a page citing a long news article
# many times stays small. Shorter documents are shown whole.
WHOLE_DOCUMENT_CHARS = 6000
CONTEXT_CHARS = 600

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "«": '"', "»": '"'})
_SPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Segment:
    """A run of document text; `mark` is True for quoted evidence, `gap` True for an elided stretch ("…")."""

    text: str
    mark: bool = False
    gap: bool = False


def _normalised_with_map(text: str) -> tuple[str, list[int]]:
    """`normalise(text)` and, per character of it, the index of the original character it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        if _SPACE.match(char):
            if out and out[-1] != " ":
                out.append(" ")
                origin.append(i)
            continue
        for piece in char.translate(_QUOTES).casefold():
            out.append(piece)
            origin.append(i)
    while out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), origin


def evidence_spans(document: str, evidence: str | None) -> list[tuple[int, int]]:
    """Sorted, merged (start, end) spans of `document` that the evidence quotes; [] when nothing is found."""
    if not evidence or not evidence.strip():
        return []
    haystack, origin = _normalised_with_map(document)
    # The validator's own fragments first; a short quote (under three words) is looked up whole.
    fragments = quoted_fragments(evidence) or [normalise(evidence)]
    spans: list[tuple[int, int]] = []
    for fragment in fragments:
        if not fragment:
            continue
        start = haystack.find(fragment)
        while start != -1:
            spans.append((origin[start], origin[start + len(fragment) - 1] + 1))
            start = haystack.find(fragment, start + len(fragment))
    return _merge(spans)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def highlighted(document: str, spans: list[tuple[int, int]]) -> list[Segment]:
    """The document as segments with the spans marked; a long document is cut to windows around the spans."""
    if len(document) <= WHOLE_DOCUMENT_CHARS:
        windows = [(0, len(document))]
    elif spans:
        windows = _merge([(max(0, s - CONTEXT_CHARS), min(len(document), e + CONTEXT_CHARS)) for s, e in spans])
    else:
        windows = [(0, min(len(document), 2 * CONTEXT_CHARS))]
    segments: list[Segment] = []
    for w_start, w_end in windows:
        if w_start > 0:
            segments.append(Segment("…", gap=True))
        position = w_start
        for s, e in spans:
            if e <= w_start or s >= w_end:
                continue
            if s > position:
                segments.append(Segment(document[position:s]))
            segments.append(Segment(document[max(s, position):e], mark=True))
            position = e
        if position < w_end:
            segments.append(Segment(document[position:w_end]))
    if windows[-1][1] < len(document):
        segments.append(Segment("…", gap=True))
    return segments

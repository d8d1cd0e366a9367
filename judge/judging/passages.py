"""Long documents are cut into passages on purpose, never silently truncated.

A document longer than the budget is split into overlapping windows of whole lines/sentences; the windows that
share the most words with the sentence being judged are kept, in document order, up to the budget, with "[...]"
marking the gaps. The budget is part of the run signature.

Selection is linear in the document's size and copies no more of it than the windows it keeps: windows are held
as offsets into the text (a 50 MB document makes ~60k small tuples, not a second 50 MB of strings), scored in one
pass, and only the chosen ones are turned back into text. `max_doc_bytes` refuses a document before any work.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from judge.errors import InputError
from judge.settings import PassagePolicy  # defined with the other settings; re-exported here

_WORD = re.compile(r"\w+", re.UNICODE)
_SPLIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
GAP = "\n[...]\n"
# A suggested ceiling for the CLI option --max-doc-bytes: far above any real news article or web page, low
# enough that one pathological document cannot take the run's memory.
DEFAULT_MAX_DOC_BYTES = 64 * 1024 * 1024
_ENCODE_CHUNK = 1 << 20

__all__ = ["GAP", "PassagePolicy", "select_passages", "sentences"]


# A window is (start, end, shown length, joined): offsets into the document; `joined` windows show their whole
# units re-joined by single spaces, the others are hard-wrapped pieces of one huge unit, shown verbatim. Plain
# tuples: a 50 MB document makes ~60k of them and this loop is the hot path.
_Window = tuple[int, int, int, bool]


def utf8_size(text: str) -> int:
    """Bytes of `text` as UTF-8, counted in chunks so a huge document is not copied whole (lone surrogates
    count as 3 bytes instead of raising)."""
    if len(text) * 4 <= _ENCODE_CHUNK:
        return len(text.encode("utf-8", "surrogatepass"))
    return sum(len(text[i:i + _ENCODE_CHUNK].encode("utf-8", "surrogatepass"))
               for i in range(0, len(text), _ENCODE_CHUNK))


def check_document_size(doc_id: str, text: str, max_doc_bytes: int | None) -> None:
    """Raise InputError when a document is larger than the limit; cheap when it clearly is not."""
    if max_doc_bytes is None or len(text) * 4 <= max_doc_bytes:  # UTF-8 needs at most 4 bytes a character
        return
    size = len(text) if len(text) > max_doc_bytes else utf8_size(text)
    if size > max_doc_bytes:
        raise InputError(f"document '{doc_id}' is {size:,} bytes, over the limit of {max_doc_bytes:,}; "
                         f"raise --max-doc-bytes or remove the document from the collection")


def select_passages(text: str, query: str, policy: PassagePolicy, doc_id: str = "") -> tuple[str, bool]:
    """The text to show the judge and whether it was cut."""
    check_document_size(doc_id or "?", text, policy.max_doc_bytes)
    if len(text) <= policy.max_chars:
        return text, False
    query_words = {w.lower() for w in _WORD.findall(query)}
    windows = list(_windows(text, policy.window_chars))

    def overlap(i: int) -> tuple[int, int]:
        start, end, _, _ = windows[i]
        shared = query_words.intersection(map(str.lower, _WORD.findall(text, start, end)))
        return (-len(shared), i)  # most shared words first; earlier window breaks ties

    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(windows)), key=overlap):
        cost = windows[i][2] + len(GAP)
        if used + cost > policy.max_chars:
            continue
        chosen.append(i)
        used += cost
    chosen.sort()
    pieces = []
    for position, i in enumerate(chosen):
        if position == 0 and i > 0 or position > 0 and i != chosen[position - 1] + 1:
            pieces.append(GAP)
        elif position > 0:
            pieces.append("\n")
        pieces.append(_shown(text, windows[i]))
    if chosen and chosen[-1] != len(windows) - 1:
        pieces.append(GAP)
    return "".join(pieces).strip(), True


def sentences(text: str) -> list[str]:
    """The stripped, non-empty lines/sentences of `text`, in order: the units windows are built from (the judge's
    numbered document passages start from them too)."""
    return [text[start:end] for start, end in _units(text)]


def _shown(text: str, window: _Window) -> str:
    start, end, _, joined = window
    span = text[start:end]
    if not joined:
        return span
    return " ".join(u.strip() for u in _SPLIT.split(span) if u.strip())


def _units(text: str) -> Iterator[tuple[int, int]]:
    """Offsets of the stripped, non-empty lines/sentences of `text`, in order, without copying them."""
    position = 0
    for separator in _SPLIT.finditer(text):
        start, end = position, separator.start()
        position = separator.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            yield start, end
    start, end = position, len(text)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end


def _windows(text: str, window_chars: int) -> Iterator[_Window]:
    """Whole units packed into windows of at most `window_chars`; a longer unit is hard-wrapped."""
    current: _Window | None = None
    for start, end in _units(text):
        if end - start > window_chars:
            if current:
                yield current
                current = None
            while end - start > window_chars:  # one enormous "sentence": hard-wrap it, stepping, never re-slicing
                yield start, start + window_chars, window_chars, False
                start += window_chars
            # What is left may start with white space; the window starts at its first character that is not.
            while text[start].isspace():
                start += 1
            current = (start, end, end - start, True)
        elif current is None:
            current = (start, end, end - start, True)
        elif current[2] + 1 + (end - start) > window_chars:
            yield current
            current = (start, end, end - start, True)
        else:
            current = (current[0], end, current[2] + 1 + (end - start), True)
    if current:
        yield current

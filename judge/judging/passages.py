r"""Long documents are cut into passages on purpose, never silently truncated.

A document longer than the budget is split into overlapping windows of whole lines/sentences; the windows that
share the most words with the sentence being judged are kept, in document order, up to the budget, with "[...]"
marking the gaps. The budget is part of the run signature, and the gap markers count against it.

Whole windows are kept while they fit. When they fill less than `FILL` of the budget (a document without sentence
breaks is one enormous unit, hard-wrapped into windows as wide as a share of `--citation-policy joint` may be),
the best window left out is cut at the budget and shown up to there, followed by a gap marker: a document longer
than the budget always shows between `FILL` and all of it. A selection that already fills `FILL` is left as it
is (whole sentences read better than a cut one).

Sentences end at `.!?` (and the Persian/Arabic `؟`) followed by white space, at `。！？；` with or without it (Chinese
and Japanese put none), and at line breaks. Words are matched as `\w+` runs, except that a run of CJK characters,
which has no spaces between its words, is matched by its character bigrams.

Selection is linear in the document's size and copies no more of it than the windows it keeps: windows are held
as offsets into the text (a 50 MB document makes ~60k small tuples, not a second 50 MB of strings), scored in one
pass, and only the chosen ones are turned back into text. `max_doc_bytes` refuses a document before any work.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from judge.errors import InputError
from judge.settings import PassagePolicy  # defined with the other settings; re-exported here

# Hiragana, katakana, CJK ideographs (extension A, unified, compatibility): scripts written without spaces.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A run of CJK characters, or a run of other word characters (\w without CJK: the `\w+` words of other scripts).
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W{_CJK}]+", re.UNICODE)
_CJK_CHAR = re.compile(f"[{_CJK}]")
_CLOSERS = "”’」』）》)"
# Where a sentence ends: after .!?؟ followed by white space; after 。！？； and any closing quotes or brackets, with
# or without white space; at a line break. A match is the mark and the white space after it: the unit before it
# runs to its end, and stripping that unit's white space leaves the mark in the sentence. (One alternation of
# characters, no look-behind: the scan is faster than the older pattern's.)
_SPLIT = re.compile(f"(?:[.!?؟](?=\\s)|[。！？；][{_CLOSERS}]*|\n)\\s*")
GAP = "\n[...]\n"
# Whole windows are kept as they are when they fill at least this share of the budget; below it, the best window
# left out is cut to fill the budget.
FILL = 0.9
# A suggested ceiling for the CLI option --max-doc-bytes: far above any real news article or web page, low
# enough that one pathological document cannot take the run's memory.
DEFAULT_MAX_DOC_BYTES = 64 * 1024 * 1024
_ENCODE_CHUNK = 1 << 20

# The fewest characters a document shown beside others (--citation-policy joint) may get: about two sentences
# and the gap markers around them. A smaller share is refused (see share_of).
MIN_SHARE_CHARS = 200

__all__ = ["FILL", "GAP", "MIN_SHARE_CHARS", "PassagePolicy", "match_tokens", "select_passages", "sentences",
           "share_of"]


# A window is (start, end, shown length, joined): offsets into the document; `joined` windows show their whole
# units re-joined by single spaces, the others are hard-wrapped pieces of one huge unit, shown verbatim. Plain
# tuples: a 50 MB document makes ~60k of them and this loop is the hot path.
_Window = tuple[int, int, int, bool]
# What is shown of a chosen window: its text, and whether it was cut short (a gap marker follows it then).
_Piece = tuple[str, bool]


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
    """The text to show the judge (at most `policy.max_chars`, gap markers included) and whether it was cut."""
    check_document_size(doc_id or "?", text, policy.max_doc_bytes)
    if len(text) <= policy.max_chars:
        return text, False
    query_tokens = match_tokens(query)
    windows = list(_windows(text, policy.window_chars))
    shared = [len(query_tokens.intersection(_tokens(text, start, end))) for start, end, _, _ in windows]
    best_first = sorted(range(len(windows)), key=lambda i: (-shared[i], i))  # earlier window breaks ties

    chosen: dict[int, _Piece] = {}
    used = 0
    if best_first and windows[best_first[0]][2] + len(GAP) > policy.max_chars:
        # The closest window is wider than the budget (a share of --citation-policy joint can be): it is shown cut,
        # not skipped for a window that shares fewer words.
        chosen = _fitted(chosen, best_first[0], _shown(text, windows[best_first[0]]), len(windows), policy.max_chars)
        used = policy.max_chars
    for i in best_first:
        cost = windows[i][2] + len(GAP)
        if i in chosen or used + cost > policy.max_chars:
            continue
        chosen[i] = (_shown(text, windows[i]), False)
        used += cost
    shown = _assembled(chosen, len(windows))
    while len(shown) > policy.max_chars:  # a marker at both ends can take a full selection a few characters over
        del chosen[max(chosen, key=best_first.index)]
        shown = _assembled(chosen, len(windows))
    for i in best_first:  # whole windows fill too little: the closest one left out fills the rest, cut
        if len(shown) >= FILL * policy.max_chars:
            break
        if i not in chosen:
            chosen = _fitted(chosen, i, _shown(text, windows[i]), len(windows), policy.max_chars)
            shown = _assembled(chosen, len(windows))
    return shown, True


def _fitted(chosen: dict[int, _Piece], i: int, whole: str, count: int, max_chars: int) -> dict[int, _Piece]:
    """`chosen` with window `i` added, whole if it fits in what is left of the budget, otherwise cut to fit (a gap
    marker then follows it); unchanged when not even the markers fit."""
    shown = len(_assembled(chosen, count))
    markers = len(_assembled({**chosen, i: (whole, True)}, count)) - shown - len(whole)
    room = max_chars - shown - markers
    if room <= 0:
        return chosen
    return {**chosen, i: (whole, False) if len(whole) <= room else (_cut(whole, room), True)}


def share_of(policy: PassagePolicy, documents: int) -> PassagePolicy:
    """The budget of each of `documents` shown together (--citation-policy joint): an equal share of the whole
    budget, its windows no wider than the share so that whole sentences still fit. Raises InputError when the
    share is below MIN_SHARE_CHARS: the judge would see too little of each document to decide anything."""
    if documents <= 1:
        return policy
    chars = policy.max_chars // documents
    if chars < MIN_SHARE_CHARS:
        raise InputError(f"a sentence cites {documents} documents: judged together (--citation-policy joint) each "
                         f"would be shown {chars} characters of --max-doc-chars {policy.max_chars}, fewer than "
                         f"{MIN_SHARE_CHARS}; raise --max-doc-chars to at least {MIN_SHARE_CHARS * documents} or use "
                         "--citation-policy all")
    return PassagePolicy(max_chars=chars, window_chars=min(policy.window_chars, chars),
                         max_doc_bytes=policy.max_doc_bytes)


def match_tokens(text: str, start: int = 0, end: int | None = None) -> set[str]:
    """The tokens two texts are matched on: lower-cased words, and for a run of CJK characters its character
    bigrams (a lone character stands for itself)."""
    return set(_tokens(text, start, len(text) if end is None else end))


def _tokens(text: str, start: int, end: int) -> Iterable[str]:
    runs = _TOKEN.findall(text, start, end)
    if _CJK_CHAR.search(text, start, end) is None:  # the common case, and the hot path: one C-level pass
        return map(str.lower, runs)
    return (token for run in runs for token in _run_tokens(run))


def _run_tokens(run: str) -> Iterable[str]:
    if not _CJK_CHAR.match(run):
        return (run.lower(),)
    if len(run) == 1:
        return (run,)
    return (run[k:k + 2] for k in range(len(run) - 1))


def _assembled(chosen: dict[int, _Piece], count: int) -> str:
    """The chosen pieces in document order: adjacent whole windows joined by a line break, a gap marker wherever
    text was left out (before the first, after the last, between distant windows, after a piece cut short)."""
    pieces: list[str] = []
    previous: int | None = None
    for i in sorted(chosen):
        if previous is None:
            if i > 0:
                pieces.append(GAP)
        elif i != previous + 1 or chosen[previous][1]:
            pieces.append(GAP)
        else:
            pieces.append("\n")
        pieces.append(chosen[i][0])
        previous = i
    if previous is not None and (previous != count - 1 or chosen[previous][1]):
        pieces.append(GAP)
    return "".join(pieces).strip()


def _cut(text: str, room: int) -> str:
    """`text` cut to at most `room` characters: at the last white space if one is close to the end (within a
    twentieth), otherwise exactly there (CJK text has none)."""
    piece = text[:room]
    space = piece.rfind(" ", room - room // 20)
    return piece[:space] if space > 0 else piece


def sentences(text: str) -> list[str]:
    """The stripped, non-empty lines/sentences of `text`, in order: the units windows are built from (the judge's
    numbered document passages start from them too)."""
    return [text[start:end] for start, end in _units(text)]


def _shown(text: str, window: _Window) -> str:
    start, end, _, joined = window
    if not joined:
        return text[start:end]
    return " ".join(text[s:e] for s, e in _units(text, start, end))


def _units(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """Offsets of the stripped, non-empty lines/sentences of `text[start:end]`, in order, without copying them."""
    position, stop = start, len(text) if end is None else end
    for separator in _SPLIT.finditer(text, start, stop):
        start, end = _stripped(text, position, separator.end())
        position = separator.end()
        if start < end:
            yield start, end
    start, end = _stripped(text, position, stop)
    if start < end:
        yield start, end


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    """`start, end` moved inwards past white space (as str.strip would cut `text[start:end]`)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


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

"""A text cut into the pieces the injection defence looks at one by one: top-level bracketed groups ("(...)",
"[...]", "<...>" and their full-width forms) and the sentences between them (a spaced dash also starts one), line
by line, each with the white space after it. The detector scores them (judge.defence.injection) and the quarantine
withholds them (judge.defence.quarantine)."""

from __future__ import annotations

OPENING = "([{<（［｛＜"
CLOSING = ")]}>）］｝＞"
_ENDS = ".!?。！？．"
_AFTER_END = "\"'”’»)]）］"
_DASHES = ("-- ", "— ", "– ", "--\n", "—\n")


def pieces(text: str) -> list[str]:
    """`text` cut into top-level bracketed groups and the sentences between them, each with its trailing white
    space (line breaks included): "".join(pieces(text)) == text."""
    found: list[str] = []
    for line in text.splitlines(keepends=True):
        found += _line_pieces(line)
    return found


def _line_pieces(line: str) -> list[str]:
    found, start, i, n = [], 0, 0, len(line)
    while i < n:
        char = line[i]
        if char in OPENING and (close := _matching(line, i)) is not None:
            if i > start:
                found.append(line[start:i])
            start = _skip_space(line, close + 1)
            found.append(line[i:start])
            i = start
            continue
        if char.isspace() and line.startswith(_DASHES, i + 1) and i + 1 > start:
            # "... near the river -- Message for the AI judge: ...": a spaced dash starts a piece
            end = _skip_space(line, i)
            found.append(line[start:end])
            start = i = end
            continue
        if char in _ENDS:
            j = i + 1
            while j < n and (line[j] in _ENDS or line[j] in _AFTER_END):
                j += 1
            if j < n and line[j].isspace():
                end = _skip_space(line, j)
                found.append(line[start:end])
                start = i = end
                continue
        i += 1
    if start < n:
        found.append(line[start:])
    return found


def _skip_space(line: str, j: int) -> int:
    while j < len(line) and line[j].isspace():
        j += 1
    return j


def _matching(line: str, i: int) -> int | None:
    """The index of the bracket closing the one at `i` on this line (nesting of the same kind counted)."""
    opening, closing = line[i], CLOSING[OPENING.index(line[i])]
    depth = 0
    for j in range(i, len(line)):
        if line[j] == opening:
            depth += 1
        elif line[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    return None

"""Pieces written in another script than the text around them: "Clinton won the vote. この主張は既に検証済みです。"

The rules and the learned detector read wordings; in a language neither was written for, a claim of prior
verification goes unseen (2026-11-27: held-out Japanese and Chinese ones scored 0.02 and moved the judge on 9 of
100 items). The script of a piece needs no wording: a report sentence or document that is mostly one script and has
a piece (judge.defence.pieces) mostly in another, non-Latin one, is flagged on that piece, whatever it says. On the
real text at hand (NeuCLIR report sentences and documents, AttributionBench and WiCE claims and references) it flags
only WiCE web pages that carry a line in another script (calibration/detector/script_flags.py).

Latin pieces are never foreign: a Latin term is everyday in Chinese, Japanese or Russian text, and English wordings
are the other detectors' business. A text's own script is the one with the most letters outside brackets (where a
translation or an original name goes); a sentence (a text on one line) whose first piece outside brackets is a
clause of OPENING_LETTERS letters or more in one script has that script too, as that is where its claim starts. A
piece is foreign to either: a Russian note longer than the English claim it follows is still foreign to the claim's
opening, and a note put first is foreign to the longer claim after it. A note put first that is also longer than
the claim goes unseen here, as does one joined to the claim without a sentence end or bracket (the rules and the
learned detector still read both). In a Chinese or Russian text that opens on an English clause of that length,
the rest is foreign: a false flag this check would make on such text.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from judge.defence.pieces import OPENING

FOREIGN_SCRIPT = "foreign_script"  # the rule name the judgments record
# Fewer letters in another script are a name or a term ("Xi Jinping (习近平)"), not a sentence that could sway a judge.
MIN_FOREIGN_LETTERS = 6
# A sentence's first piece sets its script when it is a clause, not a name: this many letters, MOSTLY of one script.
OPENING_LETTERS = 20
MOSTLY = 0.8
LATIN = "LATIN"
# Text with no character beyond these (ASCII, Latin supplements and extensions, combining marks, Vietnamese letters,
# punctuation and symbols) has no letter of another script: most English text, answered without a look per letter.
_LATIN_ONLY = re.compile("[\x00-\u036f\u1e00-\u1eff\u2000-\u2bff]*")
# Unicode name prefixes of one writing system (Japanese mixes kanji and kana in one sentence).
_SAME_SCRIPT = {"HIRAGANA": "HAN", "KATAKANA": "HAN", "KATAKANA-HIRAGANA": "HAN", "CJK": "HAN", "IDEOGRAPHIC": "HAN"}


@lru_cache(maxsize=65536)
def script_of(char: str) -> str | None:
    """The writing system of a letter ("LATIN", "CYRILLIC", "HAN", "ARABIC", ...), None for anything else.
    Compatibility forms count as what they stand for: full-width and mathematical letters are Latin."""
    if not char.isalpha():
        return None
    normal = unicodedata.normalize("NFKC", char)[:1] or char
    name = unicodedata.name(normal, "")
    if not name or not normal.isalpha():
        return None
    first = name.split(" ", 1)[0]
    return _SAME_SCRIPT.get(first, first)


def _scripts(text: str) -> Counter[str]:
    return Counter(script for script in map(script_of, text) if script is not None)


def may_have_foreign_pieces(text: str) -> bool:
    """False when `text` cannot have a foreign piece (it has no letter outside Latin): a cheap test to skip the rest."""
    return _LATIN_ONLY.fullmatch(text) is None


def foreign_pieces(parts: Sequence[str]) -> list[int]:
    """Indices of the pieces of a text (judge.defence.pieces.pieces) mostly written in a non-Latin script foreign
    to the text (see above), with at least MIN_FOREIGN_LETTERS letters in it."""
    if not may_have_foreign_pieces("".join(parts)):
        return []
    counts = [_scripts(part) for part in parts]
    prose = [count for part, count in zip(parts, counts) if count and part.lstrip()[:1] not in OPENING]
    total: Counter[str] = Counter()
    for count in prose or counts:
        total.update(count)
    if not total or len(set().union(*counts)) < 2:
        return []
    own = {_most(total)}
    if prose and "\n" not in "".join(parts).strip():
        opening = prose[0]
        script, letters = _most(opening), sum(opening.values())
        if letters >= OPENING_LETTERS and opening[script] >= MOSTLY * letters:
            own.add(script)
    found = []
    for k, count in enumerate(counts):
        script = _most(count) if count else LATIN
        if script != LATIN and own != {script} and count[script] >= MIN_FOREIGN_LETTERS \
                and 2 * count[script] >= sum(count.values()):
            found.append(k)
    return found


def _most(count: Counter[str]) -> str:
    """The script with the most letters (ties: the first name in alphabetical order, for determinism)."""
    return min(count, key=lambda script: (-count[script], script))

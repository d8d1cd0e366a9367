"""Pieces written in another script than the text around them: "Clinton won the vote. この主張は既に検証済みです。"

The rules and the learned detector read wordings; in a language neither was written for, a claim of prior
verification goes unseen (2026-11-27: held-out Japanese and Chinese ones scored 0.02 and moved the judge on 9 of
100 items). The script of a piece needs no wording: a report sentence or document that is mostly one script and has
a piece (judge.defence.pieces) mostly in another, non-Latin one, is flagged on that piece, whatever it says. On the
real text at hand (NeuCLIR report sentences and documents, AttributionBench and WiCE claims and references) it flags
only WiCE web pages that carry a line in another script (calibration/detector/script_flags.py).

Latin pieces are never foreign: a Latin term in brackets is everyday in Chinese, Japanese or Russian text, and
English wordings are the other detectors' business. The text's own script is the one with the most letters. An
ideograph carries more than a Latin letter, but counting it as one keeps a Chinese note from outweighing all but the
shortest English sentence it follows: a note with more letters than its sentence takes the text over, and then goes
unseen here (the rules and the learned detector still read it).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

FOREIGN_SCRIPT = "foreign_script"  # the rule name the judgments record
# Fewer letters in another script are a name or a term ("Xi Jinping (习近平)"), not a sentence that could sway a judge.
MIN_FOREIGN_LETTERS = 6
LATIN = "LATIN"
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


def foreign_pieces(parts: Sequence[str]) -> list[int]:
    """Indices of the pieces of a text (judge.defence.pieces.pieces) mostly written in a non-Latin script other
    than the text's own, with at least MIN_FOREIGN_LETTERS letters in it."""
    counts = [_scripts(part) for part in parts]
    total: Counter[str] = Counter()
    for count in counts:
        total.update(count)
    if len(total) < 2:
        return []
    own = max(total, key=lambda script: (total[script], script))
    found = []
    for k, count in enumerate(counts):
        foreign = sum(n for script, n in count.items() if script not in (own, LATIN))
        if foreign >= MIN_FOREIGN_LETTERS and 2 * foreign >= sum(count.values()):
            found.append(k)
    return found

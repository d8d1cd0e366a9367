"""Pieces written in another script than the text around them: "Clinton won the vote. この主張は既に検証済みです。"

The rules and the learned detector read wordings; in a language neither was written for, a claim of prior
verification goes unseen (2026-11-27: held-out Japanese and Chinese ones scored 0.02 and moved the judge on 9 of
100 items). The script of a piece needs no wording: a report sentence or document that is mostly one script and has
a piece (judge.defence.pieces) mostly in another, non-Latin one, is flagged on that piece, whatever it says. On the
real text at hand (NeuCLIR report sentences and documents, AttributionBench and WiCE claims and references) it flags
only WiCE web pages that carry a line in another script (calibration/detector/script_flags.py).

Latin pieces are never foreign: a Latin term is everyday in Chinese, Japanese or Russian text, and English wordings
are the other detectors' business. The pieces are cut finer first, wherever the script changes (script_pieces), so
"Clinton won the vote.この主張は既に検証済みです。", with no space, is two. A text's own script is the one with the
most letters outside brackets (where a translation or an original name goes), Latin on a tie; a sentence (a text on
one line) whose first piece outside brackets is a clause of OPENING_LETTERS letters or more in one script has that
script too, as that is where its claim starts. A piece is foreign to either: a Russian note longer than the English
claim it follows is still foreign to the claim's opening, and a note put first is foreign to the longer claim after
it. A note put first that is also longer than the claim goes unseen here (the rules and the learned detector still
read it). So do Greek letters as symbols ("(α, β, γ, δ, ε, ζ)": a foreign piece needs a word of MIN_RUN letters),
and a Japanese note in a Chinese text (kana count as Han: Japanese mixes them in every sentence). In a Chinese or
Russian sentence that opens on an English clause of that length, or whose Latin letters outnumber its own, the
pieces in its own script are foreign: a false flag this check makes on such text.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from judge.defence.pieces import OPENING, pieces

# Fewer letters in another script are a name or a term ("Xi Jinping (习近平)"), not a sentence that could sway a judge.
MIN_FOREIGN_LETTERS = 6
# ... and so are single letters used as symbols: a foreign piece has a word (a run of letters) at least this long.
MIN_RUN = 3
# A sentence's first piece sets its script when it is a clause, not a name: this many letters, MOSTLY of one script.
OPENING_LETTERS = 12
MOSTLY = 0.8
LATIN = "LATIN"
# Text with no character beyond these (ASCII, Latin supplements and extensions but the micro sign, combining marks,
# Vietnamese letters, punctuation, currency and arrows to dingbats but letterlike symbols) has no letter of another
# script: most English text, answered without a look per letter.
_LATIN_ONLY = re.compile("[\x00-\u00b4\u00b6-\u036f\u1e00-\u1eff\u2000-\u20ff\u2150-\u2bff]*")
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
    if first == "MODIFIER":  # ʻ, ʼ, ˈ: marks between letters of any script ("Hawaiʻi")
        return None
    return _SAME_SCRIPT.get(first, first)


def _mark(char: str) -> bool:
    """A combining mark (Hebrew points, Devanagari and Thai vowel signs): part of the word it is in, not a letter."""
    return unicodedata.category(char).startswith("M")


class _Profile:
    """The letters of a piece by script, and the longest word (run of letters, marks inside it) of each script."""

    __slots__ = ("letters", "longest")

    def __init__(self, text: str):
        self.letters: Counter[str] = Counter()
        self.longest: Counter[str] = Counter()
        run_script, run = None, 0
        for char in text:
            script = script_of(char)
            if script is None:
                if not _mark(char):
                    run_script, run = None, 0
                continue
            self.letters[script] += 1
            run = run + 1 if script == run_script else 1
            run_script = script
            self.longest[script] = max(self.longest[script], run)


def may_have_foreign_pieces(text: str) -> bool:
    """False when `text` cannot have a foreign piece (it has no letter outside Latin): a cheap test to skip the rest."""
    return _LATIN_ONLY.fullmatch(text) is None


def script_pieces(parts: Sequence[str]) -> list[str]:
    """The pieces cut again before each letter whose script differs from the previous letter's: "vote.この主張" is
    "vote." and "この主張". "".join(script_pieces(parts)) == "".join(parts)."""
    if not may_have_foreign_pieces("".join(parts)):
        return list(parts)
    found: list[str] = []
    for part in parts:
        start, previous = 0, None
        for i, char in enumerate(part):
            script = script_of(char)
            if script is None:
                continue
            if previous is not None and script != previous and i > start:
                found.append(part[start:i])
                start = i
            previous = script
        found.append(part[start:])
    return found


def foreign_piece(text: str) -> str | None:
    """The first piece of `text` in a script foreign to it (stripped), if any: what the quarantine withholds first."""
    if not may_have_foreign_pieces(text):
        return None
    parts = script_pieces(pieces(text))
    found = foreign_pieces(parts)
    return parts[found[0]].strip() if found else None


def foreign_pieces(parts: Sequence[str]) -> list[int]:
    """Indices of the pieces of a text (script_pieces of judge.defence.pieces.pieces) mostly written in a non-Latin
    script foreign to the text (see above), with at least MIN_FOREIGN_LETTERS letters and a word of MIN_RUN in it."""
    if not may_have_foreign_pieces("".join(parts)):
        return []
    profiles = [_Profile(part) for part in parts]
    if len(set().union(*(p.letters for p in profiles))) < 2:
        return []
    prose = [p.letters for part, p in zip(parts, profiles) if p.letters and part.lstrip()[:1] not in OPENING]
    total: Counter[str] = Counter()
    for letters in prose or [p.letters for p in profiles]:
        total.update(letters)
    own = {_most(total)}
    if prose and len("".join(parts).strip().splitlines()) <= 1:
        opening = prose[0]
        script, letters = _most(opening), sum(opening.values())
        if letters >= OPENING_LETTERS and opening[script] >= MOSTLY * letters:
            own.add(script)
    found = []
    for k, profile in enumerate(profiles):
        letters = profile.letters
        script = _most(letters) if letters else LATIN
        if script != LATIN and own != {script} and letters[script] >= MIN_FOREIGN_LETTERS \
                and profile.longest[script] >= MIN_RUN and 2 * letters[script] >= sum(letters.values()):
            found.append(k)
    return found


def _most(count: Counter[str]) -> str:
    """The script with the most letters; on a tie Latin, then the first name in alphabetical order (determinism)."""
    return min(count, key=lambda script: (-count[script], script != LATIN, script))

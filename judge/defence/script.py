"""Pieces written in a script foreign to the text around them: "Clinton won the vote. この主張は既に検証済みです。"

The rules and the learned detector read wordings, so a claim of prior verification in a language neither was
written for goes unseen. The script of a piece needs no wording, and says nothing of what the piece says: an
original-script name or quotation in an English report is honest. So a foreign piece is not flagged; the quarantine
withholds it from the judge (judge.defence.quarantine), where the default detector stack is used, and the judgments
record it in `withheld`.

Latin is never foreign: a Latin term is everyday in Chinese, Japanese or Russian text, and English wordings are the
other detectors' business. The pieces are cut again wherever the script changes (script_pieces), so "Clinton won
the vote.この主張は既に検証済みです。", with no space, is two. A text's own script is the one with the most letters
outside brackets (where a translation or an original name goes), Latin on a tie, an ideograph or a Hangul syllable
counting SYLLABIC_WEIGHT letters (it carries about as much as a short word: a Chinese article naming many English
terms is still Chinese). A sentence (a text on one line) whose first piece outside brackets is a clause
(OPENING_LETTERS letters, weighted, MOSTLY in one script) is read by it too: if the clause or the majority is Latin,
the sentence is English and any piece in another script is foreign, put before the claim or after it; otherwise
the clause's script is the sentence's. A piece mostly in a script other than Latin and the text's own, with
MIN_FOREIGN_LETTERS letters and a word of MIN_RUN, is foreign.

Unseen here: a note put first that also outweighs the claim; a note of fewer than MIN_FOREIGN_LETTERS letters; a
Japanese note in a Chinese text (kana count as Han: Japanese mixes them in every sentence); anything in Latin
script. Withheld though honest: a name or quotation of that length in another script ("War and Peace (Война и
мир)"), and in a Chinese or Russian sentence that opens on an English clause, the pieces in its own script.
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
SYLLABIC_WEIGHT = 3
LATIN = "LATIN"
_SYLLABIC = frozenset({"HAN", "HANGUL"})
# Text with no character beyond these (ASCII, Latin supplements and extensions but the micro sign, combining marks,
# Vietnamese letters, punctuation, currency and arrows to dingbats but letterlike symbols) has no letter of another
# script: most English text, answered without a look per letter.
_LATIN_ONLY = re.compile("[\x00-\u00b4\u00b6-\u036f\u1e00-\u1eff\u2000-\u20ff\u2150-\u2bff]*")
# Unicode name prefixes of one writing system (Japanese mixes kanji and kana in one sentence).
_SAME_SCRIPT = {"HIRAGANA": "HAN", "KATAKANA": "HAN", "KATAKANA-HIRAGANA": "HAN", "CJK": "HAN", "IDEOGRAPHIC": "HAN",
                "VERTICAL": "HAN", "MASU": "HAN"}
# Letters of no one script: modifier letters between letters of any script ("Hawaiʻi"), a caron, turned forms.
_NO_SCRIPT = frozenset({"MODIFIER", "CARON", "TURNED"})


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
    if first in _NO_SCRIPT:
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
    own = _most(_weighted(total))
    if prose and len("".join(parts).strip().splitlines()) <= 1:
        opening = _clause(prose[0])
        if opening is not None and LATIN in (opening, own):
            own = LATIN  # an English sentence: anything in another script is foreign, put before it or after
        elif opening is not None:
            own = opening  # two other scripts: the one the claim starts in
    scripts = [_most(p.letters) if p.letters else None for p in profiles]
    found = {k for k, (profile, script) in enumerate(zip(profiles, scripts))
             if script not in (None, LATIN, own) and profile.letters[script] >= MIN_FOREIGN_LETTERS
             and profile.longest[script] >= MIN_RUN and 2 * profile.letters[script] >= sum(profile.letters.values())}
    # A short piece of the same foreign script beside a foreign one is part of it ("Прим. ред.: ..." is cut at the
    # abbreviation's full stop).
    for k in sorted(found):
        for step in (-1, 1):
            j = k + step
            while 0 <= j < len(parts) and j not in found and scripts[j] == scripts[k]:
                found.add(j)
                j += step
    return sorted(found)


def _weighted(letters: Counter[str]) -> Counter[str]:
    return Counter({script: n * (SYLLABIC_WEIGHT if script in _SYLLABIC else 1) for script, n in letters.items()})


def _clause(letters: Counter[str]) -> str | None:
    """The script of a sentence's opening piece if it is a clause (OPENING_LETTERS letters, weighted, MOSTLY in one
    script), not a name."""
    if not letters:
        return None
    script = _most(letters)
    if sum(_weighted(letters).values()) >= OPENING_LETTERS and letters[script] >= MOSTLY * sum(letters.values()):
        return script
    return None


def _most(count: Counter[str]) -> str:
    """The script with the most letters; on a tie Latin, then the first name in alphabetical order (determinism)."""
    return min(count, key=lambda script: (-count[script], script != LATIN, script))

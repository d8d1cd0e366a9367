"""Fake-endpoint rules for the lab's decisions (the older support layout, match_nugget), on top of the package's
responders (judge.testing): `lab_responder` answers these and everything `nugget_responder` and `smart_responder`
answer. Cheap text rules, not a judge: they prove a pipeline runs, not its quality."""

from __future__ import annotations

import re
from typing import Any

from judge.testing.nugget_responders import nugget_responder
from judge.testing.responders import content_words, tagged, user_message
from judge.testing.schema_instance import schema_name

_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_WH = frozenset({"what", "when", "who", "where", "which", "how", "why", "does", "did", "document", "say", "about"})


def supports_copied(request: dict) -> dict[str, Any]:
    """The older layout (benchmarks/lab/legacy_support.py): supported when >= 80% of the sentence's content words and
    every number occur in the document, with the best-matching document sentence copied as evidence."""
    user = user_message(request)
    document, sentence = tagged(user, "document"), tagged(user, "sentence")
    words = content_words(sentence)
    numbers_ok = all(n in document for n in _NUMBER.findall(sentence))
    if numbers_ok and len(words & content_words(document)) / max(1, len(words)) >= 0.8:
        body = document.split("\n", 1)[-1]  # skip the "[doc_id] title" header
        pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+", body) if p.strip()]
        best = max(pieces, key=lambda p: len(content_words(p) & words))
        return {"rationale": "The document states it.", "evidence": best, "verdict": "supported"}
    return {"rationale": "The document does not state it.", "evidence": "", "verdict": "not_supported"}


def match(request: dict) -> dict[str, Any]:
    """match_nugget: the listed question sharing most content words (Jaccard >= 0.3), else none."""
    user = user_message(request)
    given = content_words(tagged(user, "sentence").split(" (answer:")[0]) - _WH
    best, score = "none", 0.0
    for label, question in re.findall(r"^(H\d+)\. (.+)$", tagged(user, "questions"), re.MULTILINE):
        words = content_words(question) - _WH
        shared = len(words & given) / max(1, len(words | given))
        if shared > score:
            best, score = label, shared
    return {"rationale": "", "label": best if score >= 0.3 else "none"}


LAB = {"LegacySupportsCitation": supports_copied, "MatchNugget": match}


def lab_responder(request: dict) -> Any:
    rule = LAB.get(schema_name(request) or "")
    return rule(request) if rule is not None else nugget_responder(request)

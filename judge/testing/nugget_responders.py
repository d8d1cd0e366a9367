"""Fake-endpoint answers to the nugget creation and pooling decisions (judge.chart.NUGGET_QUESTIONS), beside
`smart_responder`'s answers to eval's decisions, with the same kind of cheap text rules:

- document_relevance: highly_relevant when the document holds >= 3 content words of the request, relevant with
  1-2, otherwise not_relevant;
- draft_nuggets: one nugget per document sentence (up to the call's limit): the question asks what the sentence
  says about its first content words, the answer is its last four words, the statement the sentence itself
  (so eval's supports rule finds it in its own document); the first is vital;
- answers_question: a question is answered when at least 80% of its content words occur in the sentence; the
  answer is the sentence's numbers (or its last four words), the statement the sentence.

`nugget_responder` answers these and every decision `smart_responder` knows; standard library only.
"""

from __future__ import annotations

import re
from typing import Any

from judge.testing.responders import SMART, content_words, tagged, user_message
from judge.testing.schema_instance import schema_name

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_WH = frozenset({"what", "when", "who", "where", "which", "how", "why", "does", "did", "document", "say", "about"})


def _document_body(user: str) -> str:
    return tagged(user, "document").split("\n", 1)[-1]


def relevance(request: dict) -> dict[str, Any]:
    user = user_message(request)
    shared = len(content_words(tagged(user, "request")) & content_words(_document_body(user)))
    grade = "highly_relevant" if shared >= 3 else "relevant" if shared else "not_relevant"
    return {"rationale": "", "relevance": grade}


def _last_words(text: str, n: int = 4) -> str:
    return " ".join(text.rstrip(".!? ").split()[-n:])


def draft(request: dict) -> dict[str, Any]:
    user = user_message(request)
    limit = int(re.search(r"at most (\d+) nuggets", user).group(1))  # type: ignore[union-attr]
    nuggets = []
    for n, sentence in enumerate(s.strip() for s in _SENTENCE.split(_document_body(user)) if s.strip()):
        if len(nuggets) == limit:
            break
        topic = " ".join(sorted(content_words(sentence), key=sentence.lower().find)[:3])
        nuggets.append({"question": f"What happened with {topic}?"[:200], "answer": _last_words(sentence)[:120],
                        "statement": sentence[:300], "importance": "vital" if n == 0 else "okay"})
    return {"rationale": "", "nuggets": nuggets}


def answers_question(request: dict) -> dict[str, Any]:
    user = user_message(request)
    sentence = tagged(user, "sentence")
    words = content_words(sentence)
    given = []
    for label, question in re.findall(r"^(Q\d+)\. (.+)$", tagged(user, "questions"), re.MULTILINE):
        asked = content_words(question) - _WH
        if asked and len(asked & words) / len(asked) >= 0.8:
            answer = " ".join(_NUMBER.findall(sentence)) or _last_words(sentence)
            given.append({"label": label, "answer": answer[:120], "statement": sentence[:300]})
    return {"rationale": "", "answers": given}


NUGGETS = {"DocumentRelevance": relevance, "DraftNuggets": draft, "AnswersQuestion": answers_question}


def nugget_responder(request: dict) -> dict[str, Any]:
    """Answer the creation and pooling decisions (`NUGGETS`) and eval's (`SMART`)."""
    name = schema_name(request)
    rule = NUGGETS.get(name) or SMART.get(name)  # type: ignore[arg-type]
    if rule is None:
        raise ValueError(f"nugget responder: unexpected schema {name!r}")
    return rule(request)

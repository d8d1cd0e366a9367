"""Responders for the fake endpoint, shared by the tests and the benchmarks: `(request body) -> answer`.

- `default_responder`: a minimal valid instance of whatever schema the request asks for (the endpoint's default).
- `smart_responder`: answers the six judge decisions like a competent judge would, with cheap text rules, so a
  whole evaluation of the bundled example (or of the benchmarks' synthetic workload) gets realistic verdicts:
  a citation is supported when the document contains >= 80% of the sentence's content words and every number
  (evidence: the number of the best-matching numbered passage),
  a nugget is answered when its answer text occurs in the sentence, absence is claimed on keywords.
  `SMART` maps each decision's schema name to its rule, so a test can replace one rule and keep the others; a
  decision without a rule (a new one) gets `unasked_answer`: a minimal valid instance of the schema its request
  carries (its DecisionSpec's response model) holding the answer the flowchart's table declares for a judge that
  does not ask it (judge.chart, `Diamond.unasked`), so a new decision needs no edit here.
- `tagged`, `user_message`: read the prompt templates' fences from a request.

Standard library, `judge.testing.schema_instance` and the flowchart's table (judge.chart, plain data) only:
responders know the decisions by schema name, never import them.
"""

from __future__ import annotations

import re
from typing import Any

from judge.chart import CHART, Chart
from judge.testing.schema_instance import minimal_instance, schema_name, schema_of

__all__ = ["SMART", "absence_nugget", "answers", "claims_absence", "content_words", "decision_of", "default_responder",
           "needs_citation", "repeated_claim", "smart_responder", "supports", "tagged", "unasked_answer",
           "user_message"]


def default_responder(request: dict) -> Any:
    """Answer with a minimal valid instance of the request's schema (``{}`` if it has none)."""
    schema = schema_of(request)
    if schema is None:
        return {}
    return minimal_instance(schema)


def decision_of(schema: str) -> str:
    """The decision a response schema answers: a decision's response model is its name in CamelCase
    (SupportsCitation answers supports_citation; tests/test_decision_registry.py keeps it so)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", schema).lower()


def unasked_answer(request: dict, chart: Chart = CHART) -> Any:
    """The answer of a judge that does not ask the request's decision: a minimal valid instance of its schema whose
    one true/false field holds the answer `chart` declares for such a judge (`Diamond.unasked`); the bare minimal
    instance for a decision the chart declares none for, or a schema without exactly one true/false field."""
    answer = default_responder(request)
    decision = decision_of(schema_name(request) or "")
    diamond = next((d for d in chart.diamonds if d.decision == decision), None)
    if diamond is None or diamond.unasked is None or not isinstance(answer, dict):
        return answer
    properties = (schema_of(request) or {}).get("properties", {})
    flags = [name for name, field in properties.items() if isinstance(field, dict) and field.get("type") == "boolean"]
    return {**answer, flags[0]: diamond.unasked == "yes"} if len(flags) == 1 else answer


_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been has have had it its this "
    "that these those as about into will would can could also which who what when how there their them they "
    "he she his her our we you your not no than then so such very".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9,']*[a-z0-9]|[a-z0-9]")
_NUMBER = re.compile(r"\d[\d,.]*\d|\d")
_ABSENCE = ("not been", "no information", "not available", "not published", "undisclosed", "unknown",
            "not reported", "not known", "no data", "no figures")


def tagged(text: str, tag: str) -> str:
    """The text between <tag ...> and </tag> (the prompt templates' fences)."""
    match = re.search(rf"<{tag}\b[^>]*>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return match.group(1).strip() if match else ""


def user_message(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def supports(request: dict) -> dict:
    """Supported (evidence: the number of the best-matching numbered passage) when >= 80% of the sentence's
    content words and every number occur in the document."""
    user = user_message(request)
    document, sentence = tagged(user, "document"), tagged(user, "sentence")
    passages = dict(re.findall(r"^\[(\d+)\] (.*)$", document, re.MULTILINE))
    words = content_words(sentence)
    if passages and _supported(sentence, words, re.sub(r"^\[\d+\] ", "", document, flags=re.MULTILINE)):
        best = max(passages, key=lambda n: (len(content_words(passages[n]) & words), -int(n)))
        return {"rationale": "The document states it.", "evidence": [int(best)], "verdict": "supported"}
    return {"rationale": "The document does not state it.", "evidence": [], "verdict": "not_supported"}


def _supported(sentence: str, words: set[str], document: str) -> bool:
    numbers_ok = all(n in document for n in _NUMBER.findall(sentence))
    return numbers_ok and len(words & content_words(document)) / max(1, len(words)) >= 0.8


def answers(request: dict) -> dict:
    user = user_message(request)
    sentence = tagged(user, "sentence").lower()
    listed = re.findall(r"^\s*(A\d+): (.+)$", tagged(user, "questions"), re.MULTILINE)
    labels = [label for label, text in listed if text.strip().lower() in sentence]
    return {"rationale": "Answers stated in the sentence.", "answer_labels": labels}


def claims_absence(request: dict) -> dict:
    sentence = tagged(user_message(request), "sentence").lower()
    claims = any(k in sentence for k in _ABSENCE) or sentence.startswith("no ")
    return {"rationale": "Keyword check.", "claims_absence": claims}


def absence_nugget(request: dict) -> dict:
    labels = re.findall(r"^(N\d+)\.", tagged(user_message(request), "absences"), re.MULTILINE)
    return {"rationale": "The recorded absence.", "label": labels[0] if labels else "none"}


def needs_citation(request: dict) -> dict:
    sentence = tagged(user_message(request), "sentence")
    if re.search(r"\b(this report|the request)\b", sentence, re.IGNORECASE):  # intros, restating the request
        return {"rationale": "About the report itself.", "needs_citation": False}
    later_words = sentence.split()[1:]
    proper = any(w[:1].isupper() for w in later_words)
    number = any(c.isdigit() for c in sentence)
    return {"rationale": "Facts need sources.", "needs_citation": proper or number}


def repeated_claim(request: dict) -> dict:
    return {"rationale": "Stated here first.", "related_sentences": [], "repeated": False}


SMART = {"SupportsCitation": supports, "AnswersNugget": answers, "ClaimsAbsence": claims_absence,
         "AbsenceNugget": absence_nugget, "NeedsCitation": needs_citation, "RepeatedClaim": repeated_claim}


def smart_responder(request: dict) -> Any:
    """Answer the shipped decisions like a competent judge would on the bundled example (see `SMART`), and any
    other as the flowchart's table says a judge that does not ask it answers (`unasked_answer`)."""
    rule = SMART.get(schema_name(request) or "")
    return rule(request) if rule is not None else unasked_answer(request)

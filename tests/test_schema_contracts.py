"""Every answer a per-call response schema admits, the decision's validator accepts.

A grammar-constrained model (the embedded judge) can only write what the schema admits, and with greedy decoding it
writes the same answer again when re-asked: an answer the schema admits but the validator rejects is a failed
decision (the bundled example once lost one so: repeated_claim named the sentence's own number three times). For
each decision, over representative calls, instances are generated from the JSON schema the model is sent and
validated with the call's context. The generator understands the schema subset the response models produce
(objects, enums, booleans, bounded strings, integer and enum arrays, $ref/$defs, anyOf) and fails on anything else,
so a new construct cannot pass unexamined."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge.judging.decisions import (
    REGISTRY,
    absence_nugget,
    answers_nugget,
    claims_absence,
    needs_citation,
    repeated_claim,
)
from judge.judging.decisions import supports_citation as support
from judge.judging.decisions.asker import question
from judge.judging.passages import PassagePolicy
from judge.llm.client import json_schema
from judge.types import Answer, Document, Nugget, Request, Sentence

REQUEST = Request(request_id="r1", title="Battery recycling", problem_statement="Who recycles batteries in Europe?")


def strategy(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """Instances of `schema` (the subset pydantic emits for our response models); anything else is an error."""
    defs = schema.get("$defs", defs or {})
    if "$ref" in schema:
        return strategy(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return st.one_of([strategy(s, defs) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", properties))
        fields = {name: strategy(sub, defs) for name, sub in properties.items() if name in required}
        optional = {name: strategy(sub, defs) for name, sub in properties.items() if name not in required}
        return st.fixed_dictionaries(fields, optional=optional)
    if kind == "array":
        return st.lists(strategy(schema["items"], defs), min_size=schema.get("minItems", 0),
                        max_size=schema.get("maxItems", 12))
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 40))
    if kind == "integer":
        return st.integers(schema.get("minimum", -5), schema.get("maximum", 50))
    raise AssertionError(f"a schema construct the contract test does not know: {schema}")


def _document(doc_id: str, text: str) -> Document:
    return Document(doc_id=doc_id, title=f"Title {doc_id}", text=text)


LONG = " ".join(f"Plant {i} in Sweden recycled {i * 100} tonnes of lithium batteries in 2023." for i in range(12))
SENTENCES = [Sentence(index=i, text=f"Sentence {i} states a fact.", citations=["d1"] if i % 2 else [])
             for i in range(5)]
NUGGETS = [Nugget(nugget_id="n1", question="Who recycles?", answers=[Answer(text="Northvolt", doc_ids=["d1"])]),
           Nugget(nugget_id="n2", question="How much?", answers=[Answer(text="100 tonnes", doc_ids=["d1"]),
                                                                   Answer(text="a lot", doc_ids=[])])]
ABSENCES = [Nugget(nugget_id="a1", question="Is there a plant in Malta?", absence=True,
                   answers=[Answer(text="no plant in Malta", doc_ids=[])]),
            Nugget(nugget_id="a2", question="Any recycling in Iceland?", absence=True, answers=[])]

# Representative calls per decision: the shapes of context that narrow the schema differently.
CALLS = {
    "supports_citation": [
        support.prepare(REQUEST, "Plant 3 recycled 300 tonnes.", [_document("d1", LONG)], PassagePolicy()),
        support.prepare(REQUEST, "Plant 3 recycled 300 tonnes.", [_document("d1", "Short but readable text.")],
                        PassagePolicy()),
        support.prepare(REQUEST, "Anything.", [_document("d1", "—— ### —— *** —— ### —— *** —— ### —— ***")],
                        PassagePolicy()),
        support.prepare(REQUEST, "Anything.", [_document("d1", "")], PassagePolicy()),
        support.prepare(REQUEST, "Plant 1 and plant 2.", [_document("d1", LONG), _document("d2", LONG[:300])],
                        PassagePolicy()),
    ],
    "answers_nugget": [
        answers_nugget.prepare(REQUEST, "Northvolt recycled 100 tonnes.",
                               answers_nugget.candidates(tuple(NUGGETS), {"d1"}), ("d1",)),
        answers_nugget.prepare(REQUEST, "Nothing relevant.", answers_nugget.candidates(tuple(NUGGETS[:1]), {"d1"}),
                               ("d1",)),
    ],
    "claims_absence": [claims_absence.prepare(REQUEST, "No plant exists in Malta.")],
    "absence_nugget": [absence_nugget.prepare(REQUEST, "No plant exists in Malta.", ABSENCES),
                       absence_nugget.prepare(REQUEST, "No plant exists in Malta.", ABSENCES[:1])],
    "needs_citation": [needs_citation.prepare(REQUEST, "Northvolt opened in 2021.")],
    "repeated_claim": [repeated_claim.prepare(SENTENCES, SENTENCES[k]) for k in (0, 2, 4)]
                      + [repeated_claim.prepare(SENTENCES[:1], SENTENCES[0])],
}


def test_every_decision_has_calls_to_check():
    assert set(CALLS) == set(REGISTRY.names)


@pytest.mark.parametrize(("decision", "call"), [(d, i) for d in REGISTRY.names for i in range(len(CALLS[d]))])
def test_the_schema_admits_only_answers_the_validator_accepts(decision, call):
    prepared = CALLS[decision][call]
    model = question(prepared)[1]

    @settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy(json_schema(model)))
    def check(instance: dict[str, Any]) -> None:
        model.model_validate(instance, context=prepared.context)  # raises: the schema admitted a rejected answer

    check()


def test_the_generator_finds_an_answer_a_validator_rejects():
    """The check can fail: the repeated_claim schema of an older prepare, which admitted the sentence's own number."""
    prepared = repeated_claim.prepare(SENTENCES, SENTENCES[2])
    own = prepared.context["number"]
    widened = repeated_claim.RepeatedClaim.model_json_schema()
    widened["properties"]["related_sentences"]["items"] = {"enum": list(range(1, len(SENTENCES) + 1))}
    rejected = []

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(strategy(widened))
    def collect(instance: dict[str, Any]) -> None:
        try:
            repeated_claim.RepeatedClaim.model_validate(instance, context=prepared.context)
        except ValueError:
            rejected.append(instance)

    collect()
    assert rejected and all(own in i["related_sentences"] for i in rejected)

"""The benchmarks' own code (benchmarks/lab/, not in the wheel): the older support layout and the match_nugget
decision still build what they claim and run against the fake endpoint, so the benchmarks that use them
(embedded_model, nugget_creation) keep working."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from benchmarks.lab.legacy_support import LegacySupportsCitation, legacy_messages, support_question
from benchmarks.lab.match_nugget import match_banks, template
from benchmarks.lab.responders import lab_responder
from judge.llm.client import DecisionClient
from judge.settings import ModelSettings
from judge.testing import FakeEndpoint, schema_name
from judge.types import Answer, Document, Nugget, NuggetBank, Request

REQUEST = Request(request_id="r1", problem_statement="What did the barrier cost?")
BARRIER = Document(doc_id="d1", title="Barrier", text="The barrier cost 40 million euros. It opened in May 2024.")


def test_legacy_layout_needs_copied_evidence_that_occurs_in_the_document():
    document = "The barrier cost 40 million euros.\nIt opened in May."
    ok = LegacySupportsCitation.model_validate(
        {"rationale": "r", "evidence": "the barrier  cost 40 million euros", "verdict": "supported"},
        context={"document": document})
    assert ok.decided() is True
    for evidence in ("", "The barrier cost 50 million euros."):
        with pytest.raises(ValidationError, match="evidence"):
            LegacySupportsCitation.model_validate({"rationale": "r", "evidence": evidence, "verdict": "supported"},
                                                  context={"document": document})
    # Our own fencing around a real quote is not held against the model.
    wrapped = "<document>[d1] Barrier\nThe barrier cost 40 million euros.</document>"
    assert LegacySupportsCitation.model_validate({"rationale": "r", "evidence": wrapped, "verdict": "supported"},
                                                 context={"document": document}).decided() is True


def test_legacy_layout_allows_cannot_judge_only_for_unreadable_documents():
    legacy = {"rationale": "r", "evidence": "", "verdict": "cannot_judge"}
    assert LegacySupportsCitation.model_validate(legacy, context={"document": "[d1]\n"}).decided() is None
    with pytest.raises(ValidationError, match="The document is readable"):
        LegacySupportsCitation.model_validate(legacy, context={"document": "The barrier cost 40 million euros. " * 2})


def test_the_legacy_layout_is_todays_former_prompt_with_copied_evidence():
    sentence = "It opened in May 2024."
    legacy = support_question("legacy", REQUEST, sentence, [BARRIER])
    new = support_question("new", REQUEST, sentence, [BARRIER])
    assert legacy_messages(REQUEST, sentence, [BARRIER]) == legacy.messages
    old_user, new_user = legacy.messages[1]["content"], new.messages[1]["content"]
    assert old_user.index("<request>") < old_user.index("<document>") < old_user.index("<sentence>")
    assert "[d1] Barrier\nThe barrier cost 40 million euros. It opened in May 2024." in old_user
    assert "copy the shortest passage of the document" in old_user
    assert new_user.index("<document>") < new_user.index("<sentence>") and "[2] It opened in May 2024." in new_user
    assert legacy.response_model.model_json_schema()["properties"]["evidence"]["type"] == "string"
    copied = legacy.response_model.model_validate(
        {"rationale": "r", "evidence": "It opened in May 2024.", "verdict": "supported"}, context=legacy.context)
    numbered = new.response_model.model_validate(
        {"rationale": "r", "evidence": [2], "verdict": "supported"}, context=new.context)
    assert copied.evidence_text(legacy.context) == numbered.evidence_text(new.context)
    assert legacy.contract != new.contract
    with pytest.raises(ValueError, match="unknown support layout"):
        support_question("old", REQUEST, sentence, [BARRIER])


def _nugget(nugget_id: str, question: str, answer: str) -> Nugget:
    return Nugget(nugget_id=nugget_id, question=question, answers=[Answer(text=answer, doc_ids=("d1",))])


def test_match_banks_asks_one_match_nugget_decision_per_nugget_through_the_decision_client():
    """Its prompt is the lab's own (benchmarks/lab/prompts), and the fake endpoint's rule matches by shared words."""
    created = NuggetBank(request_id="r1", nuggets=[_nugget("c1", "What did the Marrowick barrier cost?", "40m"),
                                                   _nugget("c2", "Who painted the harbour murals?", "Ada")])
    human = NuggetBank(request_id="r1", nuggets=[_nugget("h1", "When did the barrier open?", "May 2024"),
                                                 _nugget("h2", "What did the Marrowick barrier cost in euros?",
                                                         "40 million euros")])
    assert template().path.parent.name == "prompts" and "H1, H2" in template().user
    asked: list[str | None] = []

    def recording(request: dict) -> object:
        asked.append(schema_name(request))
        return lab_responder(request)

    with FakeEndpoint(recording) as endpoint:
        client = DecisionClient(ModelSettings("openai/fake", endpoint.api_base, "none"), None)
        found = asyncio.run(match_banks(REQUEST, created, human, client))
    assert asked == ["MatchNugget", "MatchNugget"]
    assert found == {"c1": "h2", "c2": None}

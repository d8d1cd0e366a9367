"""The real embedded judge (llama.cpp, Qwen2.5-Coder-1.5B) on a handful of clear decisions, through the same
decision modules, prompts, client and cache as `argue-judge eval`."""

from __future__ import annotations

import asyncio

import pytest

from judge.judging.decisions import absence_nugget, answers_nugget, claims_absence, supports_citation
from judge.judging.decisions.asker import Decider
from judge.judging.passages import PassagePolicy
from judge.judging.thresholds import shipped_thresholds
from judge.llm.cache.store import open_decision_cache
from judge.llm.client import DecisionClient
from judge.llm.embedded.weights import EMBEDDED_MODEL, embedded_available
from judge.settings import ModelSettings
from judge.types import Answer, Document, Nugget, Request

pytestmark = [pytest.mark.embedded,
              pytest.mark.skipif(embedded_available() is not None, reason=str(embedded_available()))]

REQUEST = Request(request_id="t", title="Marrowick flood barrier",
                  problem_statement="Report on the construction and funding of the Marrowick flood barrier.")
DOC = Document(doc_id="d1", title="Barrier opens",
               text="The Marrowick flood barrier opened on 12 May 2024. It cost 48 million euros. "
                    "The regional council paid for most of it.")
COST = Nugget(nugget_id="q-cost", question="How much did the barrier cost?",
              answers=(Answer(text="48 million euros", doc_ids=("d1",)),))
PUBLISHED = Nugget(nugget_id="q-plans", question="Have the maintenance plans been published?", absence=True,
                   answers=(Answer(text="No, they have not been published"),))


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    """The embedded judge as `eval` runs it by default: with the thresholds shipped for it, when they fit."""
    cache = open_decision_cache(tmp_path_factory.mktemp("embedded-cache"))
    settings = ModelSettings(EMBEDDED_MODEL)
    client = DecisionClient(settings, cache, concurrency=1)
    shipped = shipped_thresholds(settings, prompts_dir=None)
    yield Decider(client, thresholds=shipped[0] if shipped else None)  # documents come with each decision
    cache.close()


def ask(judge, prepared):
    return asyncio.run(judge.ask(prepared))


def test_clear_support(judge):
    record = ask(judge, supports_citation.prepare(REQUEST, "The barrier opened in May 2024.", [DOC], PassagePolicy()))
    assert record.error is None and record.verdict is True


def test_clear_non_support(judge):
    record = ask(judge, supports_citation.prepare(
        REQUEST, "The barrier was paid for entirely by a private bank in 2019.", [DOC], PassagePolicy()))
    assert record.error is None and record.verdict is False


def test_nugget_answered(judge):
    record = ask(judge, answers_nugget.prepare(REQUEST, "Building the barrier cost 48 million euros.",
                                               [(COST, ["48 million euros"])], ("d1",)))
    assert record.verdict is True
    assert [(m.nugget_id, m.answer) for m in record.matches] == [("q-cost", "48 million euros")]


def test_absence_claimed_and_confirmed(judge):
    sentence = "No maintenance plans for the barrier have been published."
    claimed = ask(judge, claims_absence.prepare(REQUEST, sentence))
    assert claimed.verdict is True
    confirmed = ask(judge, absence_nugget.prepare(REQUEST, sentence, [PUBLISHED]))
    assert confirmed.verdict is True and [m.nugget_id for m in confirmed.matches] == ["q-plans"]


def test_the_answers_are_cached(judge):
    calls = judge.client.usage.model_calls
    ask(judge, supports_citation.prepare(REQUEST, "The barrier opened in May 2024.", [DOC], PassagePolicy()))
    assert judge.client.usage.model_calls == calls

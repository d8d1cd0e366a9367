"""The walker with a scripted client: length limit, missing documents, nugget candidates, prompt filling."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

import pytest

from judge.formats import DocumentStore
from judge.judging.decisions import REGISTRY
from judge.judging.decisions.supports_citation import MISSING_DOCUMENT
from judge.judging.walker import ReportWalker, within_limit
from judge.labels import Outcome
from judge.llm.client import Answered
from judge.settings import JudgeSettings, ModelSettings
from judge.types import Answer, Nugget, NuggetBank, Report, Request, Sentence

DOCS = "\n".join([
    '{"doc_id": "d1", "title": "Barrier", "text": "The barrier cost 40 million euros. It opened in May."}',
    '{"doc_id": "d2", "title": "Park", "text": "The riverside park has new benches."}',
])
REQUEST = Request(request_id="r1", problem_statement="Report on the barrier.", limit=60)
BANK = NuggetBank(request_id="r1", nuggets=(
    Nugget(nugget_id="q1", question="What did it cost?", answers=(Answer(text="40 million euros", doc_ids=("d1",)),)),
    Nugget(nugget_id="q2", question="Is the budget public?", absence=True,
           answers=(Answer(text="No", doc_ids=()),)),
))


@dataclass
class ScriptedClient:
    """Stands in for DecisionClient: answers each decision from a table and keeps the rendered prompts."""

    answers: dict
    settings: ModelSettings = ModelSettings("scripted/judge")

    def __post_init__(self):
        self.prompts: list[tuple[str, list[dict]]] = []

    async def ask(self, messages, response_model, context, contract=""):
        # Each call asks for its own narrowed subclass of the decision's response model (decisions.base.tailored).
        decision = next(s.name for s in REGISTRY if issubclass(response_model, s.response_model))
        self.prompts.append((decision, messages))
        data = self.answers[decision]
        return Answered(response_model.model_validate(data, context=context), None, cached=False)


@pytest.fixture
def store(tmp_path):
    with DocumentStore.open(DOCS, tmp_path / "index") as opened:
        yield opened


def judge_report(client, store, sentences, bank=BANK, **settings):
    report = Report(run_id="run", request_id="r1", sentences=tuple(sentences))
    walker = ReportWalker(client, store, JudgeSettings(**{"thresholds": None, **settings}))
    return asyncio.run(walker.judge_report(report, REQUEST, bank))


def test_sentences_past_the_length_limit_are_cut_not_judged():
    report = Report(run_id="r", request_id="q", sentences=tuple(
        Sentence(index=i, text="x" * 25) for i in range(4)))
    kept, cut = within_limit(report, 50, truncate=True)
    assert [s.index for s in kept] == [0, 1]          # 25 + 25 = 50 ends exactly at the limit
    assert [s.index for s in cut] == [2, 3]
    assert within_limit(report, 50, truncate=False) == (list(report.sentences), [])
    assert within_limit(report, None, truncate=True) == (list(report.sentences), [])


def test_truncated_sentences_are_recorded_with_their_status(store):
    client = ScriptedClient({"claims_absence": {"rationale": "", "claims_absence": False},
                             "needs_citation": {"rationale": "", "needs_citation": False}})
    judged = judge_report(client, store, [Sentence(index=0, text="a" * 50), Sentence(index=1, text="b" * 20)])
    assert [s.status for s in judged.sentences] == ["judged", "truncated"]
    assert judged.sentences[1].decisions == []


def test_citing_an_unknown_document_is_unsupported_without_a_model_call(store):
    client = ScriptedClient({})
    judged = judge_report(client, store, [Sentence(index=0, text="It cost a lot.", citations=("nope",))])
    sentence = judged.sentences[0]
    assert sentence.outcome is Outcome.UNSUPPORTED_CITATION
    assert sentence.decisions[0].rationale == MISSING_DOCUMENT
    assert judged.missing_doc_ids == ["nope"]
    assert client.prompts == []


def test_nugget_candidates_come_from_supporting_documents_only(store):
    supported = {"rationale": "", "evidence": [1], "verdict": "supported"}
    client = ScriptedClient({"supports_citation": supported,
                             "answers_nugget": {"rationale": "", "answer_labels": ["A1"]}})
    judged = judge_report(client, store, [Sentence(index=0, text="It cost 40 million euros.", citations=("d1",))])
    sentence = judged.sentences[0]
    assert sentence.outcome is Outcome.SUPPORTED_NUGGET
    support = sentence.decisions[0]
    assert (support.evidence_numbers, support.evidence) == ([1], "The barrier cost 40 million euros.")
    assert [(e.nugget_id, e.answer) for e in sentence.earned] == [("q1", "40 million euros")]
    nugget_prompt = dict(client.prompts)["answers_nugget"][1]["content"]
    assert "A1: 40 million euros" in nugget_prompt and "Is the budget public?" not in nugget_prompt


def test_no_nugget_call_when_the_cited_document_attests_no_answer(store):
    supported = {"rationale": "", "evidence": [1], "verdict": "supported"}
    client = ScriptedClient({"supports_citation": supported})
    judged = judge_report(client, store, [Sentence(index=0, text="The park has benches.", citations=("d2",))])
    assert judged.sentences[0].outcome is Outcome.SUPPORTED_NO_NUGGET
    assert [d for d, _ in client.prompts] == ["supports_citation"]


def test_absence_claim_earns_the_absence_nugget(store):
    client = ScriptedClient({"claims_absence": {"rationale": "", "claims_absence": True},
                             "absence_nugget": {"rationale": "", "label": "N1"}})
    judged = judge_report(client, store, [Sentence(index=0, text="The budget was never published.")])
    assert judged.sentences[0].outcome is Outcome.ABSENCE_NUGGET
    assert [e.nugget_id for e in judged.sentences[0].earned] == ["q2"]


def test_without_a_nugget_bank_an_absence_claim_is_outcome_7_and_recall_is_undefined(store):
    client = ScriptedClient({"claims_absence": {"rationale": "", "claims_absence": True}})
    judged = judge_report(client, store, [Sentence(index=0, text="Nothing was published.")], bank=None)
    assert judged.sentences[0].outcome is Outcome.ABSENCE_NOT_NUGGET
    assert judged.nuggets is None


def test_repeated_claim_sees_the_whole_judged_report(store):
    client = ScriptedClient({"claims_absence": {"rationale": "", "claims_absence": False},
                             "needs_citation": {"rationale": "", "needs_citation": True},
                             "repeated_claim": {"rationale": "", "related_sentences": [2], "repeated": True},
                             "supports_citation": {"rationale": "", "evidence": [2], "verdict": "supported"},
                             "answers_nugget": {"rationale": "", "answer_labels": []}})
    judged = judge_report(client, store, [Sentence(index=0, text="It opened in May."),
                                          Sentence(index=1, text="Opened in May.", citations=("d1",))])
    assert judged.sentences[0].outcome is Outcome.UNCITED_REPEATED_CLAIM
    report_prompt = dict(client.prompts)["repeated_claim"][1]["content"]
    assert '[1] (no citation) "It opened in May."' in report_prompt
    assert '[2] (cites d1) "Opened in May."' in report_prompt


def test_joint_policy_shows_every_cited_document_in_one_call(store):
    client = ScriptedClient({"supports_citation": {"rationale": "", "evidence": [], "verdict": "not_supported"}})
    judged = judge_report(client, store, [Sentence(index=0, text="x", citations=("d1", "d2"))], policy="joint")
    assert judged.sentences[0].outcome is Outcome.UNSUPPORTED_CITATION
    assert len(client.prompts) == 1
    content = client.prompts[0][1][1]["content"]
    assert "Document d1: Barrier" in content and "Document d2: Park" in content
    # One number space across the documents shown together.
    assert "[1] The barrier cost 40 million euros.\n[2] It opened in May.\nDocument d2: Park\n[3] The riverside" \
        in content


def test_identical_questions_in_flight_are_asked_once(tmp_path):
    """Two runs citing the same document for the same sentence must get one answer, in the first run too."""
    import asyncio as aio

    from judge.judging.decisions.claims_absence import ClaimsAbsence
    from judge.llm.client import DecisionClient
    from judge.testing import FakeEndpoint

    answers = iter([True, False])
    with FakeEndpoint(lambda request: {"rationale": "", "claims_absence": next(answers)}, latency=0.2) as endpoint:
        client = DecisionClient(ModelSettings("openai/fake", endpoint.api_base, "x"), None, concurrency=4)
        messages = [{"role": "user", "content": "same question"}]

        async def both():
            return await aio.gather(client.ask(messages, ClaimsAbsence, {}), client.ask(messages, ClaimsAbsence, {}))

        first, second = aio.run(both())
        assert endpoint.calls == 1
    assert first.response.model_dump() == second.response.model_dump()
    assert (first.cached, second.cached) == (False, True)


def test_a_word_limit_counts_words():
    report = Report(run_id="r", request_id="q", sentences=tuple(
        Sentence(index=i, text="one two three four five") for i in range(3)))
    words = Request(request_id="q", problem_statement="p", limit=10, limit_unit="words")
    characters = Request(request_id="q", problem_statement="p", limit=10)
    assert [len(part) for part in within_limit(report, words, truncate=True)] == [2, 1]    # 5 + 5 words fit
    assert [len(part) for part in within_limit(report, characters, truncate=True)] == [0, 3]  # 23 characters
    assert [len(part) for part in within_limit(report, 10, truncate=True)] == [0, 3]  # a bare number: characters


def test_answers_without_references_are_offered_against_any_supported_sentence():
    from judge.judging.decisions.answers_nugget import candidates

    text_nugget = Nugget(nugget_id="t1", question="The barrier cost 40 million euros",
                         answers=(Answer(text="The barrier cost 40 million euros"),))
    mixed = Nugget(nugget_id="m1", question="When did it open?",
                   answers=(Answer(text="May", doc_ids=("d9",)), Answer(text="in spring")))
    elsewhere = Nugget(nugget_id="e1", question="Who built it?", answers=(Answer(text="Acme", doc_ids=("d9",)),))
    absence = Nugget(nugget_id="a1", question="Is the budget public?", absence=True, answers=(Answer(text="No"),))
    found = candidates((text_nugget, mixed, elsewhere, absence), {"d1"})
    assert [(n.nugget_id, answers) for n, answers in found] == [
        ("t1", ["The barrier cost 40 million euros"]), ("m1", ["in spring"])]
    assert [n.nugget_id for n, _ in candidates((mixed,), {"d9"})] == ["m1"]
    assert candidates((mixed,), {"d9"})[0][1] == ["May", "in spring"]


def test_a_text_nugget_is_earned_by_a_supported_sentence_that_states_it(store):
    bank = NuggetBank(request_id="r1", nuggets=(
        Nugget(nugget_id="t1", question="cost 40 million euros", answers=(Answer(text="cost 40 million euros"),)),))
    client = ScriptedClient({"supports_citation": {"rationale": "", "evidence": [1], "verdict": "supported"},
                             "answers_nugget": {"rationale": "", "answer_labels": ["A1"]}})
    judged = judge_report(client, store, [Sentence(index=0, text="It cost 40 million euros.", citations=("d1",))],
                          bank=bank)
    assert judged.sentences[0].outcome is Outcome.SUPPORTED_NUGGET
    assert [(e.nugget_id, e.answer) for e in judged.sentences[0].earned] == [("t1", "cost 40 million euros")]


MANY_DOCS = "\n".join(f'{{"doc_id": "{d}", "text": "Document {d} says the barrier cost 40 million euros."}}'
                      for d in ("a", "b", "c"))
# Reports whose sentences cite the three documents in interleaved order.
MAJOR_REPORTS = [
    Report(run_id=run, request_id="r1", sentences=(
        Sentence(index=0, text=f"{run} first.", citations=("c",)),
        Sentence(index=1, text=f"{run} second.", citations=("a", "b")),
        Sentence(index=2, text="No citation here."),
        Sentence(index=3, text=f"{run} fourth.", citations=("b",))))
    for run in ("run-2", "run-1")]


@dataclass
class RecordingClient:
    """Answers every decision from the smart responder's rules and records the order of the calls."""

    settings: ModelSettings = ModelSettings("recording/judge")

    def __post_init__(self):
        self.calls: list[tuple[str, str]] = []

    async def ask(self, messages, response_model, context, contract=""):
        from judge.testing.responders import SMART

        request = {"messages": messages}
        self.calls.append((response_model.__name__, messages[1]["content"]))
        await asyncio.sleep(0)  # let other sentences run, as a real client would
        answer = SMART[response_model.__name__](request)
        return Answered(response_model.model_validate(answer, context=context), None, cached=False)


def judge_all(tmp_path, document_major: bool, policy="all"):
    from judge.formats.judgments import dumps

    client = RecordingClient()
    with DocumentStore.open(MANY_DOCS, tmp_path / f"index-{document_major}-{policy}") as store:
        walker = ReportWalker(client, store, JudgeSettings(policy=policy, thresholds=None))

        async def run():
            if document_major:
                await walker.ask_supports_document_major((r, REQUEST_NO_LIMIT) for r in MAJOR_REPORTS)
            return await asyncio.gather(*(walker.judge_report(r, REQUEST_NO_LIMIT, BANK) for r in MAJOR_REPORTS))

        judgments = asyncio.run(run())
        assert not walker._asked  # every record asked ahead was used by the walk
    return [dumps(j) for j in judgments], client.calls


REQUEST_NO_LIMIT = Request(request_id="r1", problem_statement="Report on the barrier.")


def shown_document(prompt: str) -> str:
    """The header line of the (first) document a support prompt shows."""
    return prompt.split("<document>\n", 1)[1].split("\n", 1)[0]


def test_document_major_order_asks_each_documents_sentences_back_to_back_with_the_same_judgments(tmp_path):
    walked, walked_calls = judge_all(tmp_path, document_major=False)
    major, major_calls = judge_all(tmp_path, document_major=True)
    assert major == walked  # byte-identical judgments, in the same order
    supports = [shown_document(p) for name, p in major_calls if name == "SupportsCitation"]
    assert supports == ["Document a"] * 2 + ["Document b"] * 4 + ["Document c"] * 2
    assert [name for name, _ in major_calls[:8]] == ["SupportsCitation"] * 8  # all asked before anything else
    assert sorted(major_calls) == sorted(walked_calls)  # the same questions, only the order differs
    interleaved = [shown_document(p) for name, p in walked_calls if name == "SupportsCitation"]
    assert interleaved != supports  # report by report, the documents alternate


def test_document_major_order_with_the_joint_policy_groups_by_the_documents_shown_together(tmp_path):
    walked, _ = judge_all(tmp_path, document_major=False, policy="joint")
    major, calls = judge_all(tmp_path, document_major=True, policy="joint")
    assert major == walked
    shown = [re.findall(r"^Document (\w)", p, re.MULTILINE) for name, p in calls if name == "SupportsCitation"]
    assert shown == [["a", "b"]] * 2 + [["b"]] * 2 + [["c"]] * 2


def test_document_major_order_groups_by_request_first_as_the_prompt_shows_the_request_first(tmp_path):
    requests = {q: Request(request_id=q, problem_statement=f"Report {q}.") for q in ("q1", "q2")}
    reports = [Report(run_id="run", request_id=q, sentences=(
        Sentence(index=0, text=f"{q} first.", citations=("b",)),
        Sentence(index=1, text=f"{q} second.", citations=("a",)))) for q in ("q2", "q1")]
    client = RecordingClient()
    with DocumentStore.open(MANY_DOCS, tmp_path / "index") as store:
        walker = ReportWalker(client, store, JudgeSettings(thresholds=None))
        asyncio.run(walker.ask_supports_document_major((r, requests[r.request_id]) for r in reports))
    asked = [(re.search(r"Problem statement: Report (q\d)", p).group(1), shown_document(p))
             for _, p in client.calls]
    assert asked == [("q1", "Document a"), ("q1", "Document b"), ("q2", "Document a"), ("q2", "Document b")]

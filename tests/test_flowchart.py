"""Every path of the ARGUE flowchart, driven by a scripted oracle (no model)."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import re
import sys
from pathlib import Path

import pytest

import judge.chart as chart_module
from judge.chart import (
    ANSWERS_NUGGET,
    CHART,
    CITED_OUTCOMES,
    NEEDS_CITATION,
    OUTCOME_VALUE,
    PRECISION_DENOMINATOR,
    PRECISION_NUMERATOR,
    REPEATED_CLAIM,
    SUPPORTED_OUTCOMES,
    SUPPORTS_CITATION,
    Diamond,
    Leaf,
    Value,
)
from judge.formats.judgments import DecisionRecord, EarnedAnswer, SentenceJudgment
from judge.judging.flowchart import Question, walk, walk_sync
from judge.judging.replay import ReplayOracle, complete_from_decisions
from judge.labels import Outcome
from tests.test_docs import load_hook

EARNED = [EarnedAnswer(nugget_id="q1", answer="ten")]
ABSENCE = [EarnedAnswer(nugget_id="q9")]


class Scripted:
    """Answers from a table; records which decisions were asked so tests can check nothing extra was."""

    def __init__(self, support=None, nugget=None, absence=None, absence_nugget=None, needs=None, repeated=None):
        self.support = support or {}
        self.nugget, self.absence, self.confirmed = nugget, absence, absence_nugget
        self.needs, self.repeated = needs, repeated
        self.asked: list[str] = []

    def _record(self, decision, verdict, doc_ids=(), matches=(), error=None):
        self.asked.append(decision)
        return DecisionRecord(decision=decision, verdict=verdict, doc_ids=list(doc_ids), matches=list(matches),
                              error=error)

    async def supports(self, doc_ids):
        verdict = self.support[doc_ids] if doc_ids in self.support else self.support.get(doc_ids[0])
        error = "invalid output" if verdict == "error" else None
        return self._record("supports_citation", None if verdict == "error" else verdict, doc_ids, error=error)

    async def answers_nugget(self, supporting_doc_ids):
        if self.nugget is None:
            return None  # no candidate nugget attested by a supporting document: nothing asked
        self.supporting_seen = supporting_doc_ids
        return self._record("answers_nugget", self.nugget, supporting_doc_ids, EARNED if self.nugget else ())

    async def claims_absence(self):
        return self._record("claims_absence", self.absence)

    async def absence_nugget(self):
        if self.confirmed is None:
            return None  # the request has no absence nugget: nothing asked
        return self._record("absence_nugget", self.confirmed, matches=ABSENCE if self.confirmed else ())

    async def needs_citation(self):
        return self._record("needs_citation", self.needs)

    async def repeated_claim(self):
        return self._record("repeated_claim", self.repeated)

    async def decide(self, question):
        if question.decision == "supports_citation":
            return await self.supports(question.doc_ids)
        if question.decision == "answers_nugget":
            return await self.answers_nugget(question.doc_ids)
        return await getattr(self, question.decision)()


def run(citations, oracle, policy="all"):
    return asyncio.run(walk(tuple(citations), oracle, policy))


@pytest.mark.parametrize(("citations", "script", "outcome", "asked", "earned"), [
    (["d1"], dict(support={"d1": False}), Outcome.UNSUPPORTED_CITATION, ["supports_citation"], []),
    (["d1"], dict(support={"d1": True}), Outcome.SUPPORTED_NO_NUGGET, ["supports_citation"], []),
    (["d1"], dict(support={"d1": True}, nugget=False), Outcome.SUPPORTED_NO_NUGGET,
     ["supports_citation", "answers_nugget"], []),
    (["d1"], dict(support={"d1": True}, nugget=True), Outcome.SUPPORTED_NUGGET,
     ["supports_citation", "answers_nugget"], EARNED),
    ([], dict(absence=False, needs=False), Outcome.NO_CITATION_NEEDED, ["claims_absence", "needs_citation"], []),
    ([], dict(absence=False, needs=True, repeated=False), Outcome.UNCITED_NEW_CLAIM,
     ["claims_absence", "needs_citation", "repeated_claim"], []),
    ([], dict(absence=False, needs=True, repeated=True), Outcome.UNCITED_REPEATED_CLAIM,
     ["claims_absence", "needs_citation", "repeated_claim"], []),
    ([], dict(absence=True), Outcome.ABSENCE_NOT_NUGGET, ["claims_absence"], []),
    ([], dict(absence=True, absence_nugget=False), Outcome.ABSENCE_NOT_NUGGET,
     ["claims_absence", "absence_nugget"], []),
    ([], dict(absence=True, absence_nugget=True), Outcome.ABSENCE_NUGGET, ["claims_absence", "absence_nugget"],
     ABSENCE),
])
def test_every_path_asks_only_what_it_needs(citations, script, outcome, asked, earned):
    oracle = Scripted(**script)
    result = run(citations, oracle)
    assert result.status == "judged"
    assert result.outcome is outcome
    assert oracle.asked == asked
    assert [r.decision for r in result.decisions] == asked
    assert result.earned == earned


@pytest.mark.parametrize(("policy", "support", "outcome", "supports_asked"), [
    ("all", {"d1": True, "d2": True}, Outcome.SUPPORTED_NO_NUGGET, 2),
    ("all", {"d1": True, "d2": False}, Outcome.UNSUPPORTED_CITATION, 2),
    ("any", {"d1": True, "d2": False}, Outcome.SUPPORTED_NO_NUGGET, 2),
    ("any", {"d1": False, "d2": False}, Outcome.UNSUPPORTED_CITATION, 2),
    ("joint", {("d1", "d2"): True}, Outcome.SUPPORTED_NO_NUGGET, 1),
    ("joint", {("d1", "d2"): False}, Outcome.UNSUPPORTED_CITATION, 1),
])
def test_citation_policies(policy, support, outcome, supports_asked):
    oracle = Scripted(support=support)
    result = run(["d1", "d2"], oracle, policy)
    assert result.outcome is outcome
    assert oracle.asked.count("supports_citation") == supports_asked


def test_any_policy_offers_only_supporting_documents_to_the_nugget_decision():
    oracle = Scripted(support={"d1": False, "d2": True}, nugget=True)
    result = run(["d1", "d2"], oracle, "any")
    assert result.outcome is Outcome.SUPPORTED_NUGGET
    assert oracle.supporting_seen == ("d2",)


@pytest.mark.parametrize(("policy", "support", "status", "outcome"), [
    # One refusal is decisive under "all" even when another decision failed.
    ("all", {"d1": False, "d2": "error"}, "judged", Outcome.UNSUPPORTED_CITATION),
    ("all", {"d1": True, "d2": "error"}, "failed", None),
    ("any", {"d1": True, "d2": "error"}, "judged", Outcome.SUPPORTED_NO_NUGGET),
    ("any", {"d1": False, "d2": "error"}, "failed", None),
    ("all", {"d1": True, "d2": None}, "undetermined", None),  # the judge said "cannot judge"
])
def test_failed_or_undecided_support_is_never_scored_as_unsupported(policy, support, status, outcome):
    result = run(["d1", "d2"], Scripted(support=support), policy)
    assert (result.status, result.outcome) == (status, outcome)


def test_failure_on_the_uncited_branch_stops_the_walk():
    oracle = Scripted(absence=False, needs=None)
    result = run([], oracle)
    assert result.status == "undetermined" and result.outcome is None
    assert oracle.asked == ["claims_absence", "needs_citation"]


def test_human_decisions_replay_through_the_same_flowchart():
    cited = SentenceJudgment(index=0, text="x", citations=["d1"], decisions=[
        DecisionRecord(decision="supports_citation", verdict=True, doc_ids=["d1"]),
        DecisionRecord(decision="answers_nugget", verdict=True, matches=EARNED)])
    uncited = SentenceJudgment(index=1, text="y", decisions=[
        DecisionRecord(decision="claims_absence", verdict=False),
        DecisionRecord(decision="needs_citation", verdict=True),
        DecisionRecord(decision="repeated_claim", verdict=False)])
    assert complete_from_decisions(cited).outcome is Outcome.SUPPORTED_NUGGET
    assert complete_from_decisions(cited).earned == EARNED
    assert complete_from_decisions(uncited).outcome is Outcome.UNCITED_NEW_CLAIM


def test_replay_with_a_missing_decision_is_failed_not_guessed():
    sentence = SentenceJudgment(index=0, text="y", decisions=[DecisionRecord(decision="claims_absence", verdict=False)])
    completed = complete_from_decisions(sentence)
    assert completed.status == "failed" and completed.outcome is None


def test_a_given_outcome_is_kept():
    sentence = SentenceJudgment(index=0, text="y", outcome=Outcome.NO_CITATION_NEEDED,
                                decisions=[DecisionRecord(decision="claims_absence", verdict=True)])
    assert complete_from_decisions(sentence).outcome is Outcome.NO_CITATION_NEEDED


def test_replay_oracle_matches_support_records_by_document():
    oracle = ReplayOracle([DecisionRecord(decision="supports_citation", verdict=False, doc_ids=["d2"]),
                           DecisionRecord(decision="supports_citation", verdict=True, doc_ids=["d1"])])
    assert oracle.decide(Question("supports_citation", ("d1",))).verdict is True
    assert oracle.decide(Question("supports_citation", ("d2",))).verdict is False


def test_score_of_human_decisions_works_inside_a_running_event_loop():
    """Jupyter runs an event loop: replaying human decisions must not start another one."""
    from judge.formats.judgments import ReportJudgment
    from judge.run.score import score

    human = ReportJudgment(run_id="r", request_id="q", assessor="human", nuggets=[], sentences=[
        SentenceJudgment(index=0, text="x", citations=["d1"], decisions=[
            DecisionRecord(decision="supports_citation", verdict=False, doc_ids=["d1"])]),
        SentenceJudgment(index=1, text="y", decisions=[
            DecisionRecord(decision="claims_absence", verdict=False),
            DecisionRecord(decision="needs_citation", verdict=False)])])

    async def in_a_notebook():
        asyncio.get_running_loop()  # we really are inside a loop
        return score([human], "human")

    scores, signature, _ = asyncio.run(in_a_notebook())
    rows = {(r.run_id, r.request_id, r.metric): r.value for r in scores.rows()}
    assert rows[("r", "all", "OutcomeCount(outcome=1)")] == 1
    assert rows[("r", "all", "OutcomeCount(outcome=4)")] == 1
    assert rows[("r", "all", "SentencePrecision")] == 0.0
    assert signature.short() == "human|requests:1|reports:1|failed:0|undetermined:0|cite:all"


def test_the_flowchart_generator_yields_questions_and_takes_records():
    from judge.judging.flowchart import Question, flow

    steps = flow(("d1", "d2"), "all")
    first = next(steps)
    assert first == (Question("supports_citation", ("d1",)), Question("supports_citation", ("d2",)))
    nugget_question = steps.send([DecisionRecord(decision="supports_citation", verdict=True, doc_ids=["d1"]),
                                  DecisionRecord(decision="supports_citation", verdict=True, doc_ids=["d2"])])
    assert nugget_question == (Question("answers_nugget", ("d1", "d2")),)
    with pytest.raises(StopIteration) as done:
        steps.send([None])  # no candidate nugget: nothing was asked
    assert done.value.value.outcome is Outcome.SUPPORTED_NO_NUGGET


# -- the table ---------------------------------------------------------------------------------------------------

class PathOracle:
    """Answers each diamond as one path of the table says (yes, no, or nothing to ask)."""

    def __init__(self, steps):
        self.answers = {decision: answer for decision, answer, _ in steps if decision != "cited"}
        self.asked: list[str] = []

    def decide(self, question):
        self.asked.append(question.decision)
        answer = self.answers[question.decision]
        if answer == "none":
            return None
        return DecisionRecord(decision=question.decision, verdict=answer == "yes", doc_ids=list(question.doc_ids),
                              matches=EARNED if answer == "yes" else [])


@pytest.mark.parametrize("policy", ["all", "any", "joint"])
def test_every_path_of_the_table_is_walked_to_its_leaf(policy):
    """The walk knows no decision by name: each path the table declares (every diamond and leaf is on one) is
    followed question by question to its leaf, recorded and earning as the table says."""
    paths = CHART.paths()
    assert {leaf for leaf, _ in paths} == {int(o) for o in Outcome}
    for leaf, steps in paths:
        oracle = PathOracle(steps)
        result = walk_sync(("d1",) if steps[0][1] == "yes" else (), oracle, policy)
        asked = [decision for decision, _, _ in steps[1:]]
        assert (result.status, result.outcome, oracle.asked) == ("judged", Outcome(leaf), asked), steps
        assert [r.decision for r in result.decisions] == [d for d, answer, _ in steps[1:] if answer != "none"]
        last, answer, _ = steps[-1]
        assert result.earned == (EARNED if CHART.diamond(last).earns and answer == "yes" else [])


def test_the_shipped_table_is_argues_figure():
    """Checked against the paper's Figure 2 and its precision (Mayfield et al., SIGIR 2024), written out here."""
    values = {1: "-", 2: "0", 3: "+", 4: "0", 5: "-", 6: "0", 7: "-", 8: "+"}
    assert {int(o): v.value for o, v in OUTCOME_VALUE.items()} == values
    assert {int(o) for o in PRECISION_NUMERATOR} == {3, 8}
    assert {int(o) for o in PRECISION_DENOMINATOR} == {1, 3, 5, 7, 8}
    assert [int(o) for o in CITED_OUTCOMES] == [1, 2, 3] and [int(o) for o in SUPPORTED_OUTCOMES] == [2, 3]
    assert CHART.penalised == (Outcome.UNSUPPORTED_CITATION, Outcome.UNCITED_NEW_CLAIM)
    assert [(leaf, [answer for _, answer, _ in steps]) for leaf, steps in CHART.paths()] == [
        (3, ["yes", "yes", "yes"]), (2, ["yes", "yes", "no"]), (2, ["yes", "yes", "none"]), (1, ["yes", "no"]),
        (8, ["no", "yes", "yes"]), (7, ["no", "yes", "no"]), (7, ["no", "yes", "none"]),
        (6, ["no", "no", "yes", "yes"]), (5, ["no", "no", "yes", "no"]), (4, ["no", "no", "no"])]


def rows(**changes):
    """The shipped table with some rows replaced, by decision name (a leaf by number)."""
    diamonds = tuple(changes.get(d.decision, d) for d in CHART.diamonds)
    leaves = tuple(changes.get(f"leaf{leaf.number}", leaf) for leaf in CHART.leaves)
    return dataclasses.replace(CHART, diamonds=tuple(d for d in diamonds if d), leaves=tuple(x for x in leaves if x))


@pytest.mark.parametrize(("changes", "message"), [
    (dict(repeated_claim=Diamond(REPEATED_CLAIM, yes=6, no=9, says=("", ""))),
     "repeated_claim's no leads to 9, which is no row"),
    (dict(repeated_claim=Diamond(REPEATED_CLAIM, yes=6, no=NEEDS_CITATION, says=("", ""))),
     "the path claims_absence -> needs_citation -> repeated_claim -> needs_citation loops"),
    (dict(repeated_claim=Diamond(REPEATED_CLAIM, yes=5, no=5, says=("", ""))), "no path reaches #6"),
    (dict(leaf8=Leaf(9, "ABSENCE_NUGGET", Value.POSITIVE, "")),
     "leaves are numbered [1, 2, 3, 4, 5, 6, 7, 9], not 1..8"),
    (dict(leaf8=Leaf(8, "ABSENCE_NOT_NUGGET", Value.POSITIVE, "")),
     "two rows share the leaf name 'ABSENCE_NOT_NUGGET'"),
    (dict(supports_citation=Diamond(SUPPORTS_CITATION, about="sentence", yes=ANSWERS_NUGGET, no=1, says=("", ""))),
     "the cited branch starts at supports_citation, which is not asked of the cited documents"),
])
def test_an_inconsistent_table_is_refused_naming_what_is_wrong(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        rows(**changes)


def test_a_new_leaf_is_an_outcome_with_its_value_and_outside_the_precision_sets_if_neutral(tmp_path, monkeypatch):
    """What the rows add, the rest of the table's module derives: the shipped source with a ninth leaf behind a new
    diamond, run as a module of its own (the shipped table is left alone)."""
    source = Path(chart_module.__file__).read_text(encoding="utf-8")
    anchor = "        Diamond(REPEATED_CLAIM, yes=6, no=5,"
    assert source.count(anchor) == 1 and source.count("    ),\n    leaves=(\n") == 1, "the table moved: update anchors"
    edited = source.replace(anchor, '        Diamond(REPEATED_CLAIM, yes=6, no="hedged_claim",').replace(
        "    ),\n    leaves=(\n",
        '        Diamond("hedged_claim", yes=9, no=5, says=("hedges it", "does not hedge it")),\n    ),\n    leaves=(\n'
        '        Leaf(9, "UNCITED_HEDGED_CLAIM", Value.NEUTRAL, "uncited hedged claim"),\n')
    path = tmp_path / "edited_chart.py"
    path.write_text(edited, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("edited_chart", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "edited_chart", module)  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    table = vars(module)
    outcome = table["Outcome"]
    assert [int(o) for o in outcome] == list(range(1, 10)) and outcome(9).name == "UNCITED_HEDGED_CLAIM"
    assert table["OUTCOME_VALUE"][outcome(9)] is table["Value"].NEUTRAL
    assert {int(o) for o in table["PRECISION_DENOMINATOR"]} == {1, 3, 5, 7, 8}
    assert table["DIAMONDS"][-1] == "hedged_claim"
    paths = [(n, [answer for _, answer, _ in steps]) for n, steps in table["CHART"].paths()]
    assert (9, ["no", "no", "yes", "no", "yes"]) in paths


def load_flowchart_hook():
    """docs/hooks/flowchart_table.py loaded as MkDocs 1.6 loads a hook (tests.test_docs.load_hook)."""
    return load_hook("flowchart_table")


def outcome_rows(markdown: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()
            if re.match(r"\| \d+ \|", line)]


def test_the_docs_flowchart_is_generated_from_the_table_at_its_marker():
    from mkdocs.exceptions import PluginError

    hook = load_flowchart_hook()
    page_text = (Path(__file__).parents[1] / "docs" / hook.PAGE).read_text(encoding="utf-8")
    assert hook.MARKER in page_text and not outcome_rows(page_text)  # no hand-written copy to go stale

    class Page:
        class file:  # noqa: N801 (MkDocs' page.file.src_uri)
            src_uri = hook.PAGE

    built = hook.on_page_markdown(page_text, Page, None, None)
    minus = "\u2212"
    assert [row[:3] for row in outcome_rows(built)] == [
        ["1", "cited, not supported", minus], ["2", "supported, answers no nugget", "0"],
        ["3", "supported, answers a nugget", "+"], ["4", "needs no citation", "0"], ["5", "uncited new claim", minus],
        ["6", "uncited repeat or summary", "0"], ["7", "absence claim, not a nugget", minus],
        ["8", "absence confirmed by a nugget", "+"]]
    paths = {row[0]: row[3] for row in outcome_rows(built)}
    assert paths["5"] == "no citation; claims no absence; needs a citation; its claim is new"
    assert paths["2"].count("<br>or: ") == 1  # reached by "no" and by "nothing to ask"
    diagram = built.split("```text\n", 1)[1].split("```", 1)[0]
    for diamond in CHART.diamonds:
        assert diagram.count(f"─► {diamond.decision}: ") == 1
    assert "│    │    └─ nothing to ask ─► #2 (0) supported, answers no nugget" in diagram
    with pytest.raises(PluginError, match="docs/judging.md lost its marker .*the generated flowchart has no place"):
        hook.on_page_markdown("# Judging, marker gone\n", Page, None, None)

"""What one judged report says, worked out once: every measure reads its statistics from these facts.

ARGUE facts (outcome histogram, earned nuggets, the warnings of an odd record) are computed eagerly, in the order
their warnings are reported; the Auto-ARGUE facts (citation pairs, supporting and relevant citations, matched
nugget answers) lazily, since they may need the request's nugget bank with its answer references.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from judge.chart import (
    ANSWERS_NUGGET,
    CITED_OUTCOMES,
    PRECISION_DENOMINATOR,
    PRECISION_NUMERATOR,
    SUPPORTED_OUTCOMES,
    SUPPORTS_CITATION,
    Outcome,
    outcome_list,
)
from judge.formats.judgments import EarnedAnswer, NuggetSummary, ReportJudgment, SentenceJudgment
from judge.labels import IMPORTANCE_WEIGHT
from judge.types import NuggetBank

# Outcomes as the warnings name them (derived from the flowchart's table, judge.chart).
_UNCITED_OUTCOMES = tuple(o for o in Outcome if o not in CITED_OUTCOMES)


def cited_docs(sentence: SentenceJudgment) -> list[str]:
    """The sentence's distinct cited documents, in citation order (a report may cite one document twice)."""
    return list(dict.fromkeys(sentence.citations))


def citation_support(sentence: SentenceJudgment) -> dict[str, bool]:
    """Whether each cited document supports the sentence.

    A `supports_citation` decision with a verdict covers the documents in its `doc_ids` (a 'joint' decision
    gives each of them its verdict), or every cited document when `doc_ids` is empty; a document is
    supporting when a decision covering it says True. A sentence without any such decision (an outcome-only
    human label) takes its outcome: a supported one (#2, #3: judge.chart.SUPPORTED_OUTCOMES) means every citation
    supports it, anything else none does.
    """
    docs = cited_docs(sentence)
    verdicts: dict[str, set[bool]] = defaultdict(set)
    for d in sentence.decisions:
        if d.decision == SUPPORTS_CITATION and d.verdict is not None:
            for doc in (set(d.doc_ids) & set(docs)) if d.doc_ids else docs:
                verdicts[doc].add(d.verdict)
    if not verdicts and not any(d.decision == SUPPORTS_CITATION for d in sentence.decisions):
        supported = sentence.outcome in SUPPORTED_OUTCOMES
        return {doc: supported for doc in docs}
    return {doc: True in verdicts.get(doc, ()) for doc in docs}


def _neither(outcomes: frozenset[Outcome]) -> str:
    """`neither 3 nor 8`, as the earned-nugget warning names the outcomes that earn."""
    numbers = [str(int(o)) for o in sorted(outcomes)]
    return f"neither {' nor '.join(numbers)}" if len(numbers) == 2 else f"not {outcome_list(outcomes)}"


def _span(outcomes: tuple[Outcome, ...]) -> str:
    """`1-3` for consecutive outcomes, else as outcome_list names them."""
    numbers = sorted(int(o) for o in outcomes)
    if len(numbers) > 1 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return outcome_list(outcomes)


@dataclass(frozen=True)
class AutoArgueNugget:
    """A nugget as Auto-ARGUE scores it: only the answers that have references."""

    nugget_id: str
    aggregator: str
    weight: int
    answers: frozenset[str]


class ReportFacts:
    """Facts of one report; `bank` (the request's nugget bank with answer references) is optional."""

    def __init__(self, judgment: ReportJudgment, bank: NuggetBank | None = None):
        self.judgment = judgment
        self.bank = bank
        self.where = f"run {judgment.run_id} request {judgment.request_id}"
        self.warnings: list[str] = []
        self._status_and_histogram()
        self._earned_nuggets()
        self._support_consistency()

    # -- ARGUE ----------------------------------------------------------------------------------------------

    def _status_and_histogram(self) -> None:
        self.status_counts = {"judged": 0, "truncated": 0, "failed": 0, "undetermined": 0}
        self.histogram = {o: 0 for o in Outcome}
        self.scored: list[SentenceJudgment] = []
        without_outcome = 0
        for sentence in self.judgment.sentences:
            if sentence.status == "judged" and sentence.outcome is None:
                without_outcome += 1
                self.status_counts["undetermined"] += 1
            else:
                self.status_counts[sentence.status] += 1
            if sentence.status == "judged" and sentence.outcome is not None:
                self.scored.append(sentence)
                self.histogram[sentence.outcome] += 1
        if without_outcome:
            self.warnings.append(f"{self.where}: {without_outcome} sentence(s) have status 'judged' but no "
                                 "outcome; counted as undetermined and not scored")
        self.precision_parts = (sum(self.histogram[o] for o in PRECISION_NUMERATOR),
                                sum(self.histogram[o] for o in PRECISION_DENOMINATOR))
        self.precision_undefined = self.precision_parts[1] == 0
        if self.precision_undefined:
            self.warnings.append(f"{self.where}: no judged sentence has outcome {outcome_list(PRECISION_DENOMINATOR)}; "
                                 "sentence precision undefined, scored 0.0")

    def _earned_nuggets(self) -> None:
        odd = sorted({s.index for s in self.scored if s.earned and s.outcome not in PRECISION_NUMERATOR})
        if odd:
            self.warnings.append(f"{self.where}: sentence(s) {', '.join(map(str, odd))} earn nuggets although "
                                 f"their outcome is {_neither(PRECISION_NUMERATOR)}; counted")
        self.earned: set[str] = set()
        self.unknown_nugget_ids = self.unknown_answers = 0
        self.nuggets: dict[str, NuggetSummary] | None = None
        if self.judgment.nuggets is None:
            self.warnings.append(f"{self.where}: no nugget bank; recall undefined")
            return
        self.nuggets = self._distinct(self.judgment.nuggets)
        self.earned = self._earn([ea for s in self.scored for ea in s.earned])
        if not self.nuggets:
            self.warnings.append(f"{self.where}: the nugget bank is empty; recall undefined")

    def _distinct(self, nuggets: list[NuggetSummary]) -> dict[str, NuggetSummary]:
        by_id: dict[str, NuggetSummary] = {}
        for nugget in nuggets:
            if nugget.nugget_id in by_id:
                self.warnings.append(f"{self.where}: nugget id {nugget.nugget_id!r} appears twice in the bank; "
                                     "the first is used")
                continue
            by_id[nugget.nugget_id] = nugget
            if not nugget.absence and not nugget.answers:
                self.warnings.append(f"{self.where}: nugget {nugget.nugget_id!r} has no answers and can never "
                                     "be earned")
        return by_id

    def _earn(self, earned_answers: Iterable[EarnedAnswer]) -> set[str]:
        """ARGUE: which nuggets are earned; answers naming unknown nuggets / answers are ignored and counted."""
        assert self.nuggets is not None
        got: dict[str, set[str | None]] = defaultdict(set)
        unknown_ids: list[str] = []
        unknown_answers: list[str] = []
        for ea in earned_answers:
            nugget = self.nuggets.get(ea.nugget_id)
            if nugget is None:
                unknown_ids.append(ea.nugget_id)
            elif nugget.absence or ea.answer in nugget.answers:
                got[ea.nugget_id].add(ea.answer)
            else:
                unknown_answers.append(f"{ea.nugget_id}:{ea.answer!r}")
        if unknown_ids:
            self.warnings.append(f"{self.where}: {len(unknown_ids)} earned answer(s) name nugget ids not in the "
                                 f"bank, ignored: {', '.join(sorted(set(unknown_ids)))}")
        if unknown_answers:
            self.warnings.append(f"{self.where}: {len(unknown_answers)} earned answer(s) name answers not in the "
                                 f"nugget's answer list, ignored: {', '.join(sorted(set(unknown_answers)))}")
        self.unknown_nugget_ids, self.unknown_answers = len(unknown_ids), len(unknown_answers)
        earned: set[str] = set()
        for nid, answers in got.items():
            nugget = self.nuggets[nid]
            if nugget.absence or (nugget.aggregator == "OR" and answers) or set(nugget.answers) <= answers:
                earned.add(nid)
        return earned

    def recall_parts(self, weighted: bool) -> tuple[int, int] | None:
        if self.nuggets is None:
            return None
        if not weighted:
            return len(self.earned), len(self.nuggets)
        weight = {nid: IMPORTANCE_WEIGHT[n.importance] for nid, n in self.nuggets.items()}
        return sum(weight[nid] for nid in self.earned), sum(weight.values())

    def _support_consistency(self) -> None:
        """Outcome-based sentence support (argue-judge's SentenceSupport): cited sentences with a cited outcome."""
        supported = cited = 0
        inconsistent: list[int] = []
        for s in self.scored:
            if s.citations and s.outcome in CITED_OUTCOMES:
                cited += 1
                supported += s.outcome in SUPPORTED_OUTCOMES
            elif s.citations or s.outcome in CITED_OUTCOMES:
                inconsistent.append(s.index)
        self.outcome_support_parts = (supported, cited)
        if inconsistent:
            self.warnings.append(f"{self.where}: sentence(s) {', '.join(map(str, inconsistent))} have an outcome "
                                 f"that does not match whether they cite (outcomes {_span(CITED_OUTCOMES)} need "
                                 f"citations, {_span(_UNCITED_OUTCOMES)} none); left out of sentence support")

    # -- Auto-ARGUE -----------------------------------------------------------------------------------------

    @cached_property
    def within_limit(self) -> list[SentenceJudgment]:
        """The sentences Auto-ARGUE would judge: all but those cut by the length limit."""
        return [s for s in self.judgment.sentences if s.status != "truncated"]

    @cached_property
    def pair_support(self) -> list[dict[str, bool]]:
        """Per cited scored sentence: cited document -> supports it (see `citation_support`)."""
        return [citation_support(s) for s in self.scored if s.citations]

    @cached_property
    def requiring_citation(self) -> int:
        """Uncited sentences that need a citation and state a new claim (outcome #5, Auto-ARGUE's first
        instances); #6 repeats an earlier claim and #4, #7, #8 need none."""
        return sum(1 for s in self.scored if not s.citations and s.outcome == Outcome.UNCITED_NEW_CLAIM)

    @cached_property
    def auto_argue_nuggets(self) -> dict[str, AutoArgueNugget] | None:
        """The bank as Auto-ARGUE scores it: answers without references dropped, then questions left without
        answers. Needs the bank's references; None without the bank."""
        if self.bank is None:
            return None
        kept: dict[str, AutoArgueNugget] = {}
        for nugget in self.bank.nuggets:
            answers = frozenset(a.text for a in nugget.answers if a.doc_ids)
            if answers and nugget.nugget_id not in kept:
                kept[nugget.nugget_id] = AutoArgueNugget(nugget.nugget_id, nugget.aggregator, nugget.weight, answers)
        return kept

    @cached_property
    def referenced_docs(self) -> frozenset[str] | None:
        """Documents that attest some answer of the bank (Auto-ARGUE's relevant documents)."""
        if self.bank is None:
            return None
        return frozenset(doc for n in self.bank.nuggets for a in n.answers for doc in a.doc_ids)

    @cached_property
    def matched_answers(self) -> dict[str, set[str | None]]:
        """Nugget answers the report states, whether or not a citation supports the sentence (Auto-ARGUE
        credits both): earned answers and the matches of every positive `answers_nugget` decision."""
        got: dict[str, set[str | None]] = defaultdict(set)
        for s in self.scored:
            for ea in s.earned:
                got[ea.nugget_id].add(ea.answer)
            for d in s.decisions:
                if d.decision == ANSWERS_NUGGET and d.verdict:
                    for ea in d.matches:
                        got[ea.nugget_id].add(ea.answer)
        return got

    @cached_property
    def correct_nuggets(self) -> list[AutoArgueNugget] | None:
        """Auto-ARGUE: an OR nugget is correct with any matched answer, an AND nugget with all of them."""
        if self.auto_argue_nuggets is None:
            return None
        correct = []
        for nugget in self.auto_argue_nuggets.values():
            matched = self.matched_answers.get(nugget.nugget_id, set()) & nugget.answers
            if (nugget.aggregator == "AND" and matched == nugget.answers) or (nugget.aggregator != "AND" and matched):
                correct.append(nugget)
        return correct

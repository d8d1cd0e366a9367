"""Asks the judge about calibration items, and pairs judge and human judgments files.

Item-level (labelled data sets): every item goes through the same decision modules, prompts, client and cache
as `argue-judge eval`, so agreement measured here is agreement of the judge that scores reports.

- supports_citation items (AttributionBench, WiCE): the claim is the sentence and the reference texts are shown
  together, as under the `joint` citation policy; long references are cut into the passages closest to the
  claim (the same PassagePolicy as eval).
- answers_nugget items (nugget banks × documents): the document-level form of the decision. The judge is shown
  the nugget question with all of its answers and, in place of a sentence, the passages of the document closest
  to the question; it "answers" when it picks any of the nugget's answers.

Judgments-level (human assessors wrote the judgments format): decisions paired by (run, request, sentence,
decision, documents), outcomes paired by sentence, per-report scores and leaderboards compared. No model calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from judge.calibration.items import CalibrationItem, label_for
from judge.calibration.stats import (
    AgreementResult,
    CorrelationResult,
    LeaderboardCorrelation,
    PairwiseAgreement,
    correlate_by_key,
    decision_agreement,
    leaderboard_correlation,
    pairwise_significance_agreement,
    ranking_agreement,
    run_summaries,
)
from judge.chart import ANSWERS_NUGGET, SUPPORTS_CITATION, Outcome
from judge.defence.injection import Attack
from judge.defence.quarantine import quarantine_document, quarantine_sentence
from judge.formats.judgments import DecisionRecord, ReportJudgment
from judge.formats.scores import per_request
from judge.judging.decisions import answers_nugget, supports_citation
from judge.judging.decisions.asker import Decider
from judge.judging.decisions.base import Prepared
from judge.judging.passages import PassagePolicy, select_passages
from judge.settings import DEFAULT_INJECTION_DETECTOR, InjectionDetector
from judge.types import Answer, Document, Nugget, Request

CALIBRATION_REQUEST = Request(
    request_id="calibration", problem_statement="Check the statement against the document(s) shown.")
SCORE_MEASURES = ("SentencePrecision", "NuggetRecall", "F1")
ITEM_DECISIONS = (SUPPORTS_CITATION, ANSWERS_NUGGET)  # what labelled item data sets calibrate


def prepare_item(item: CalibrationItem, passages: PassagePolicy, attack: Attack | None = None,
                 variant: int = 0, withhold: bool = False,
                 detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR) -> Prepared:
    """The item's decision, ready to ask; with `attack`, its text placed where the attack's target is shown:
    "sentence" in the judged sentence (for a document-level answers_nugget item, the passages that stand in for
    it), "document" in every reference / document before passages are selected (as a note in a real document
    would be, so passage selection may cut it away). `attack_applies` says which pairs make sense. `withhold`:
    the flagged pieces of sentence and documents (and, under the default stack, those in a foreign script) are
    withheld, as eval's `--on-injection quarantine` does, with `detector` (eval's `--injection-detector`)."""
    if attack is not None and not attack_applies(attack, item.decision):
        raise ValueError(f"attack '{attack.kind}' (target {attack.target}) does not apply to {item.decision}")

    def attacked(text: str, target: str, doc_id: str = "") -> str:
        if attack is not None and attack.target == target:
            text = attack.apply(text, claim=item.claim, doc_id=doc_id or next(iter(item.doc_ids), "D1"),
                                variant=variant)
        if not withhold:
            return text
        shown = quarantine_sentence if target == "sentence" and item.decision == SUPPORTS_CITATION \
            else quarantine_document
        return shown(text, detector).shown

    if item.decision == SUPPORTS_CITATION:
        question = item.extra.get("question")
        request = Request(request_id="calibration", problem_statement=question) if question else CALIBRATION_REQUEST
        ids = item.doc_ids if len(item.doc_ids) == len(item.documents) else [
            f"reference-{i + 1}" for i in range(len(item.documents))]
        documents = [Document(doc_id=i, text=attacked(t, "document", i))
                     for i, t in zip(ids, item.documents, strict=True)]
        return supports_citation.prepare(request, attacked(item.claim, "sentence"), documents, passages)
    if item.decision == ANSWERS_NUGGET:
        answers = tuple(Answer(text=a) for a in item.extra.get("answers", []))
        nugget = Nugget(nugget_id=item.extra.get("nugget_id", item.item_id), question=item.claim, answers=answers)
        query = " ".join([item.claim, *(a.text for a in answers)])
        ids = list(item.doc_ids) + [""] * (len(item.documents) - len(item.doc_ids))
        text, _ = select_passages("\n".join(attacked(t, "document", i) for t, i in zip(item.documents, ids)), query,
                                  passages)
        return answers_nugget.prepare(CALIBRATION_REQUEST, attacked(text, "sentence"),
                                      [(nugget, [a.text for a in answers])], tuple(item.doc_ids))
    raise ValueError(f"decision '{item.decision}' needs report context: calibrate it from judgments files "
                     "(--human with --judged) instead of item data sets")


def attack_applies(attack: Attack, decision: str) -> bool:
    """Item-level decisions show a sentence and documents, never a report: a "report" attack (a forged earlier
    sentence) needs the repeated-claim decision, which only judgments files calibrate."""
    return decision in ITEM_DECISIONS and attack.target in ("sentence", "document")


async def ask_items(items: list[CalibrationItem], decider: Decider, passages: PassagePolicy,
                    on_item: Callable[[], None] = lambda: None, withhold: bool = False,
                    detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR) -> dict[str, DecisionRecord]:
    """The judge's decision record per item (its verdict and, where the model gave log-probabilities, its
    confidence)."""

    async def one(item: CalibrationItem) -> tuple[str, DecisionRecord]:
        record = await decider.ask(prepare_item(item, passages, withhold=withhold, detector=detector))
        on_item()
        return item.item_id, record

    return dict(await asyncio.gather(*(one(item) for item in items)))


def labels_of(items: list[CalibrationItem], records: dict[str, DecisionRecord]) -> dict[str, str | None]:
    """The judge's label per item (None when the decision failed or the judge could not decide)."""
    return {item.item_id: label_for(item.decision, records[item.item_id].verdict) for item in items}


async def predict(items: list[CalibrationItem], decider: Decider, passages: PassagePolicy,
                  on_item: Callable[[], None] = lambda: None, withhold: bool = False,
                  detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR) -> dict[str, str | None]:
    """The judge's label per item (None when the decision failed or the judge could not decide)."""
    return labels_of(items, await ask_items(items, decider, passages, on_item, withhold, detector))


@dataclass
class JudgmentsComparison:
    decisions: dict[str, AgreementResult]
    report_level: dict[str, CorrelationResult]
    run_level: dict[str, LeaderboardCorrelation]
    pairwise: dict[str, PairwiseAgreement]
    notes: list[str]


def compare_judgments(human: Iterable[ReportJudgment], judged: Iterable[ReportJudgment],
                      score: Callable[[list[ReportJudgment]], list], *, n_boot: int = 1000, seed: int = 0,
                      repetitions: int = 1000) -> JudgmentsComparison:
    """Human versus judge on the same reports: decisions, outcomes (#1..#8), per-report scores, leaderboards.

    `score` turns judgments into score rows (judge.run.evaluate.score(...)[0].rows), the same path for both sides.
    """
    human, judged = list(human), list(judged)
    notes: list[str] = []
    decisions = _decision_pairs(human, judged, notes, n_boot, seed)
    human_rows, judge_rows = score(human), score(judged)
    report_level, run_level, pairwise = {}, {}, {}
    for measure in SCORE_MEASURES:
        h, j = per_request(human_rows, measure), per_request(judge_rows, measure)
        report_level[measure] = correlate_by_key(
            {(r, q): v for r, vs in j.items() for q, v in vs.items()},
            {(r, q): v for r, vs in h.items() for q, v in vs.items()})
        if len(set(h) & set(j)) >= 2:
            run_level[measure] = leaderboard_correlation(run_summaries(j), run_summaries(h),
                                                         repetitions=repetitions, seed=seed).model_copy(
                update={"agreement": ranking_agreement(j, h, bootstrap=n_boot, seed=seed)})
            pairwise[measure] = pairwise_significance_agreement(j, h)
    if not run_level:
        notes.append("run-level comparison needs at least two runs judged by both humans and the judge")
    return JudgmentsComparison(decisions, report_level, run_level, pairwise, notes)


def _decision_pairs(human: list[ReportJudgment], judged: list[ReportJudgment], notes: list[str], n_boot: int,
                    seed: int) -> dict[str, AgreementResult]:
    judged_records = {}
    judged_outcomes = {}
    for report in judged:
        for s in report.sentences:
            judged_outcomes[(report.run_id, report.request_id, s.index)] = s.outcome
            for d in s.decisions:
                judged_records[(report.run_id, report.request_id, s.index, d.decision, tuple(d.doc_ids))] = d.verdict
    pairs: dict[str, tuple[list[str], list[str], list[str | None]]] = {}
    not_asked = 0
    outcome_pairs: tuple[list[str], list[str], list[str | None]] = ([], [], [])
    for report in human:
        for s in report.sentences:
            key = (report.run_id, report.request_id, s.index)
            if s.outcome is not None and key in judged_outcomes:
                outcome = judged_outcomes[key]
                outcome_pairs[0].append("/".join(map(str, key)))
                outcome_pairs[1].append(str(int(s.outcome)))
                outcome_pairs[2].append(None if outcome is None else str(int(outcome)))
            for d in s.decisions:
                if d.verdict is None:
                    continue
                record_key = (*key, d.decision, tuple(d.doc_ids))
                if record_key not in judged_records:
                    not_asked += 1  # the judge's path never reached this diamond
                    continue
                ids, gold, predicted = pairs.setdefault(d.decision, ([], [], []))
                ids.append("/".join(map(str, record_key[:4])))
                gold.append(label_for(d.decision, d.verdict) or "")
                predicted.append(label_for(d.decision, judged_records[record_key]))
    if not_asked:
        notes.append(f"{not_asked} human decisions were not asked by the judge (its path through the flowchart "
                     "differed); they are left out of decision-level agreement")
    results = {decision: decision_agreement(gold, predicted, item_ids=ids, n_boot=n_boot, seed=seed)
               for decision, (ids, gold, predicted) in sorted(pairs.items())}
    if outcome_pairs[0]:
        results["sentence_outcome"] = decision_agreement(
            outcome_pairs[1], outcome_pairs[2], labels=[str(int(n)) for n in Outcome], item_ids=outcome_pairs[0],
            n_boot=n_boot, seed=seed)
    return results

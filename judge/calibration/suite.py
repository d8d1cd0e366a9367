"""The library path behind `argue-judge calibrate`: items → judge labels → agreement → report (and, with attacks,
the red team: the same items attacked, clean against attacked)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from judge.calibration.confidence_by_decision import confidence_by_decision, fit_thresholds, thresholds_file
from judge.calibration.items import CalibrationItem, label_for
from judge.calibration.redteam import red_team
from judge.calibration.results import CalibrationResults, ItemOutcome
from judge.calibration.runner import ask_items, compare_judgments, labels_of, predict
from judge.calibration.sources import Exclusion, SampleSize
from judge.calibration.stats import (
    AgreementResult,
    AttackResult,
    FitMetric,
    agreement_by_decision,
    compare_prompts_on_items,
)
from judge.calibration.stats.confidence_calibration import DEFAULT_FOLDS
from judge.defence.injection import Attack
from judge.errors import SettingError
from judge.event_loop import run_sync
from judge.formats.atomic import write_text_atomic
from judge.formats.judgments import DecisionRecord, ReportJudgment
from judge.judging.decisions.asker import Decider
from judge.judging.fingerprints import prompt_hashes
from judge.judging.panel import PanelDecider, open_panel
from judge.judging.signature import CalibrationSignature, JudgeSignature
from judge.judging.thresholds import check_confidence_for, resolve_thresholds, thresholds_json
from judge.labels import DEFAULT_VOTE, Vote
from judge.llm.batch import MAX_REQUESTS, BatchJobs, BatchRounds
from judge.llm.cache.store import DecisionCache
from judge.llm.client import DecisionClient
from judge.llm.panel import PanelMember, check_panel
from judge.metrics.panel_agreement import JudgeAgreement, agreement_of
from judge.settings import (
    Bootstrap,
    Concurrency,
    JudgeSettings,
    ModelSettings,
    RetryPolicy,
    Seed,
    Thresholds,
    settings_class,
)


@settings_class
class CalibrationConfig:
    model: ModelSettings
    judge: JudgeSettings = JudgeSettings()
    against: JudgeSettings | None = None   # the old prompt set of an A/B comparison
    retry: RetryPolicy = RetryPolicy()
    concurrency: Concurrency = 4
    cache: DecisionCache | None = None
    n_boot: Bootstrap = 1000
    seed: Seed = 0                         # of the stratified sample and the bootstrap, not of the model
    sample: SampleSize | None = None       # items were a stratified sample of this many per data set
    exclude: Exclusion | None = None       # items left out before sampling (tuned on elsewhere)
    wice_partial: str | None = None        # how WiCE's partially_supported was labelled (None: no WiCE items)
    attacks: tuple[Attack, ...] = ()       # red team: each item is asked again under each of these attacks
    fit_metric: FitMetric | None = None    # --fit-threshold: fit decision thresholds maximising this metric
    batch: BatchJobs | None = None         # --batch: ask through the provider's batch jobs (judge.llm.batch)
    # A panel of judges (judge.judging.panel) asked instead of `model` alone, and its vote; empty: one judge.
    panel: tuple[PanelMember, ...] = ()
    vote: Vote = DEFAULT_VOTE

    @classmethod
    def resolved(cls, **fields: Any) -> CalibrationConfig:
        """The configuration, decided once: a panel's first judge stands for the model, and the judge calibrated
        gets the default thresholds eval would give it (none when fitting: thresholds are fitted on the model's own
        verdicts). What it asks for is checked first, as asked."""
        config = cls(**fields)
        model = config.panel[0].model if config.panel else config.model
        judge = replace(config.judge, thresholds=None) if config.fit_metric is not None else config.judge
        return replace(config, model=model, judge=resolve_thresholds(model, judge))

    def __post_init__(self) -> None:
        if self.panel:
            check_panel(self.panel)
            check_panel_calibration(self.against is not None, self.fit_metric)
        check_calibrated_judge(self.model, self.judge, self.fit_metric)

    def signature(self, items: int, judged: Sequence[ReportJudgment] = ()) -> CalibrationSignature:
        """What the calibration's numbers depend on. It names the judges that were used: this configuration's
        when it asked about `items`, and the judge the `judged` judgments record (`judged_tag`); a judge nobody
        asked is not named."""
        against = prompt_hashes(self.against.prompts_dir) if self.against is not None else None
        return CalibrationSignature(JudgeSignature.of(self.model, self.retry, self.judge, panel=self.panel,
                                                      vote=self.vote) if items else None,
                                    items=items, judged=judged_tag(judged) if judged else None,
                                    n_boot=self.n_boot, resample_seed=self.seed,
                                    sample=None if self.sample is None else str(self.sample),
                                    exclude=None if self.exclude is None else
                                    f"{len(self.exclude.item_ids)}@{self.exclude.digest}",
                                    wice_partial=self.wice_partial, against=against,
                                    attacks=tuple(a.kind for a in self.attacks) if self.attacks else None,
                                    attacks_hash=attacks_hash(self.attacks) if self.attacks else None,
                                    fit=f"{self.fit_metric},{DEFAULT_FOLDS}fold" if self.fit_metric else None)


def judged_tag(judged: Sequence[ReportJudgment]) -> str:
    """The judge that wrote judgments, as their records name it: the model(s) (each record's signature's `judge:`,
    else its assessor) and a short hash of the records' distinct signatures, so that judgments of another model,
    prompt set or threshold set sign differently."""
    def model(record: ReportJudgment) -> str:
        fields = dict(part.partition(":")[::2] for part in (record.signature or "").split("|"))
        return fields.get("judge") or record.assessor

    signed = sorted({record.signature or f"assessor:{record.assessor}" for record in judged})
    digest = hashlib.sha256("\n".join(signed).encode()).hexdigest()[:8]
    return "+".join(sorted({model(record) for record in judged})) + f"@{digest}"


def check_calibrated_judge(model: ModelSettings, judge: JudgeSettings, fit_metric: str | None) -> None:
    """The judging choices calibrate refuses (SettingError naming the arguments and options), before any item is
    read: thresholds to apply while fitting thresholds (a fit is made on the model's own verdicts, so the rules
    would be dropped), and thresholds on a judge that asks for no log-probabilities."""
    if fit_metric is not None and isinstance(judge.thresholds, Thresholds):
        raise SettingError("fit_metric (--fit-threshold) fits thresholds on the model's own verdicts, so it "
                           "applies no judge thresholds: drop --thresholds (judge.thresholds=None), or fit_metric")
    check_confidence_for(model, judge)


def check_panel_calibration(against: bool, fit_metric: str | None) -> None:
    """What a panel cannot be calibrated with (SettingError, one line): a prompt A/B comparison (`against` compares
    one judge's two prompt sets) and a threshold fit (a panel's vote carries no confidence to fit on)."""
    if against:
        raise SettingError("against (--against) compares one judge's prompt sets; a panel has a prompt set per "
                           "judge: give each judge's prompts to the panel instead, or calibrate one judge")
    if fit_metric is not None:
        raise SettingError("fit_metric (--fit-threshold) fits a threshold on one judge's confidence; a panel's vote "
                           "has none: fit each judge alone, then give the panel the thresholds")


def attacks_hash(attacks: Sequence[Attack]) -> str:
    """What the attacks put where (targets, placements, texts, obfuscation), in one short hash: editing a text of
    the attacks file changes the red team's signature."""
    text = json.dumps([asdict(a) for a in attacks], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def calibrate(items: list[CalibrationItem], config: CalibrationConfig, *,
              human: list[ReportJudgment] | None = None, judged: list[ReportJudgment] | None = None,
              score: Callable[[list[ReportJudgment]], list] | None = None, notes: list[str] | None = None,
              on_item: Callable[[], None] = lambda: None) -> CalibrationResults:
    notes = list(notes or [])
    compared = human is not None and judged is not None and score is not None
    results = CalibrationResults(signature=config.signature(len(items), judged if compared else ()).short(),
                                 notes=notes)
    if items:
        rounds = config.batch.rounds(config.model) if config.batch is not None else None
        records, old_labels, attacked = run_sync(_predict_all(items, config, on_item, rounds))
        results.batch = rounds.stats.as_dict() if rounds is not None else None
        labels = labels_of(items, records)
        results.items.extend(
            ItemOutcome(item_id=i.item_id, decision=i.decision, group=i.group, human=i.human_label,
                        judge=labels[i.item_id], confidence=records[i.item_id].confidence,
                        error=records[i.item_id].error) for i in items)
        results.decisions.update(agreement_by_decision(items, labels, n_boot=config.n_boot, seed=config.seed))
        if config.panel:
            judges, among = panel_results(items, records, config)
            results.judges.update(judges)
            results.panel.update(among)
        results.confidence.update(confidence_by_decision(items, records))
        if config.fit_metric is not None:
            fits, fit_notes = fit_thresholds(items, records, metric=config.fit_metric, seed=config.seed,
                                             n_boot=config.n_boot)
            results.thresholds.update(fits)
            results.notes.extend(fit_notes)
        if old_labels is not None:
            results.prompt_ab.extend(compare_prompts_on_items(items, old_labels, labels, name_a="against",
                                                              name_b="prompts"))
        results.redteam.extend(attacked)
        skipped = [a.kind for a in config.attacks if not any(r.attack == a.kind for r in attacked)]
        if skipped:
            results.notes.append(f"attack(s) {', '.join(skipped)} asked nothing: their target (a report line) is "
                                 "not shown by the item-level decisions (supports_citation, answers_nugget)")
    if human is not None and judged is not None and score is not None:
        comparison = compare_judgments(human, judged, score, n_boot=config.n_boot, seed=config.seed)
        results.decisions.update({f"judgments:{k}": v for k, v in comparison.decisions.items()})
        results.report_level.update(comparison.report_level)
        results.run_level.update(comparison.run_level)
        results.pairwise.update(comparison.pairwise)
        results.notes.extend(comparison.notes)
    return results


async def _predict_all(items: list[CalibrationItem], config: CalibrationConfig, on_item: Callable[[], None],
                       rounds: BatchRounds | None = None
                       ) -> tuple[dict[str, DecisionRecord], dict[str, str | None] | None, list[AttackResult]]:
    # With batch jobs, every item waiting at once joins the round: a job's worth in flight, not `concurrency`.
    client = DecisionClient(config.model, config.cache, retry=config.retry,
                            concurrency=config.concurrency if rounds is None else MAX_REQUESTS,
                            completions=rounds.acompletion if rounds is not None else None)
    # With --thresholds the judge is measured as eval runs it with those rules: every verdict (clean, attacked,
    # old prompts) passes the same rules before it is compared.
    decider: Decider | PanelDecider = Decider(client, config.judge.prompts_dir, config.judge.thresholds)
    if config.panel:  # every judge answers each item; the vote is the panel's label
        decider = open_panel(config.panel, config.vote, config.judge, config.cache, concurrency=config.concurrency,
                             retry=config.retry)
    withhold = config.judge.withholds
    detector = config.judge.injection_detector
    records = await ask_items(items, decider, config.judge.passages, on_item, withhold, detector)
    labels = labels_of(items, records)
    old = None
    if config.against is not None:
        # Same client and cache: prompts that did not change are answered from the cache for free.
        old_judge = Decider(client, config.against.prompts_dir, config.judge.thresholds)
        old = await predict(items, old_judge, config.judge.passages, on_item, withhold, detector)
    # The attacked twins go through the same Decider, so the clean side is the run above (or the cache).
    attacked = await red_team(items, labels, config.attacks, decider, config.judge.passages, on_item, withhold,
                              detector) if config.attacks else []
    return records, old, attacked


def panel_results(items: list[CalibrationItem], records: dict[str, DecisionRecord], config: CalibrationConfig
                  ) -> tuple[dict[str, dict[str, AgreementResult]], dict[str, JudgeAgreement]]:
    """Each judge of the panel against the human labels (judge name -> decision -> agreement), and per decision
    the agreement among the judges (judge.metrics.panel_agreement)."""
    names = [m.name for m in config.panel]
    judges: dict[str, dict[str, AgreementResult]] = {}
    for position, name in enumerate(names):
        labels = {i.item_id: label_for(i.decision, _member(records[i.item_id], position).verdict) for i in items}
        judges[name] = agreement_by_decision(items, labels, n_boot=config.n_boot, seed=config.seed)
    among: dict[str, JudgeAgreement] = {}
    for decision in sorted({i.decision for i in items}):
        units = [[_member(records[i.item_id], p).verdict for p in range(len(names))]
                 for i in items if i.decision == decision]
        among[decision] = agreement_of(names, units)
    return judges, among


def _member(record: DecisionRecord, position: int) -> DecisionRecord:
    """A judge's own record of a panel's decision (the panel's record itself when it decided without asking)."""
    return record.panel[position] if record.panel else record


def write_thresholds(results: CalibrationResults, config: CalibrationConfig, items: Sequence[CalibrationItem],
                     path: Path) -> Path | None:
    """The thresholds file of a run with --fit-threshold (None when no decision got a threshold): the rules,
    the judge they belong to, the metric, and what they were fitted on."""
    if not results.thresholds or config.fit_metric is None:
        return None
    counts: dict[str, int] = {}
    for item in items:
        counts[item.decision] = counts.get(item.decision, 0) + 1
    signature = config.signature(len(items))
    assert signature.judge is not None  # thresholds are fitted on items, so the judge was asked
    fitted_on = {"items": len(items), "items_per_decision": counts, "sample": signature.sample,
                 "seed": config.seed, "wice_partial": config.wice_partial,
                 "groups": sorted({i.group for i in items if i.group is not None})}
    data = thresholds_file(results.thresholds, signature.judge.short(), signature.short(), config.fit_metric,
                           fitted_on)
    write_text_atomic(path, thresholds_json(data))
    return path

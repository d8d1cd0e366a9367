"""The library path behind `argue-judge calibrate`: items → judge labels → agreement → report."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from judge.calibrate.items import CalibrationItem
from judge.calibrate.report import CalibrationResults
from judge.calibrate.runner import compare_judgments, predict
from judge.calibrate.stats import agreement_by_decision, compare_prompts_on_items
from judge.judgments import ReportJudgment
from judge.llm.cache import DecisionCache
from judge.llm.client import DecisionClient, ModelSettings, RetryPolicy
from judge.signature import JudgeSignature
from judge.walker import Judge, JudgeSettings


@dataclass(frozen=True)
class CalibrationConfig:
    model: ModelSettings
    judge: JudgeSettings = JudgeSettings()
    against: JudgeSettings | None = None   # the old prompt set of an A/B comparison
    retry: RetryPolicy = RetryPolicy()
    concurrency: int = 4
    cache: DecisionCache | None = None
    n_boot: int = 1000
    seed: int = 0


def calibrate(items: list[CalibrationItem], config: CalibrationConfig, *,
              human: list[ReportJudgment] | None = None, judged: list[ReportJudgment] | None = None,
              score: Callable[[list[ReportJudgment]], list] | None = None, notes: list[str] | None = None,
              on_item: Callable[[], None] = lambda: None) -> CalibrationResults:
    notes = list(notes or [])
    signature = JudgeSignature.of(config.model, config.retry, config.judge).short()
    signature += f"|items:{len(items)}|boot:{config.n_boot}|seed:{config.seed}"
    results = CalibrationResults(signature=signature, notes=notes)
    if items:
        labels, old_labels = asyncio.run(_predict_all(items, config, on_item))
        results.decisions.update(agreement_by_decision(items, labels, n_boot=config.n_boot, seed=config.seed))
        if old_labels is not None:
            results.prompt_ab.extend(compare_prompts_on_items(items, old_labels, labels, name_a="against",
                                                              name_b="prompts"))
    if human is not None and judged is not None and score is not None:
        comparison = compare_judgments(human, judged, score, n_boot=config.n_boot, seed=config.seed)
        results.decisions.update({f"judgments:{k}": v for k, v in comparison.decisions.items()})
        results.report_level.update(comparison.report_level)
        results.run_level.update(comparison.run_level)
        results.pairwise.update(comparison.pairwise)
        results.notes.extend(comparison.notes)
    return results


async def _predict_all(items: list[CalibrationItem], config: CalibrationConfig, on_item: Callable[[], None]
                       ) -> tuple[dict[str, str | None], dict[str, str | None] | None]:
    client = DecisionClient(config.model, config.cache, concurrency=config.concurrency, retry=config.retry)
    labels = await predict(items, Judge(client, None, config.judge), config.judge.passages, on_item)  # type: ignore[arg-type]
    old = None
    if config.against is not None:
        # Same client and cache: prompts that did not change are answered from the cache for free.
        against = replace(config.judge, prompts_dir=config.against.prompts_dir)
        old = await predict(items, Judge(client, None, against), config.judge.passages, on_item)  # type: ignore[arg-type]
    return labels, old

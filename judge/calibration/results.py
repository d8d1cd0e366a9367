"""`CalibrationResults`: everything one calibration run computed, and its canonical JSON form.

The suite builds it, the report renders it (Markdown, HTML, JSON, PNG). It lives apart from the renderer so that
computing results never imports plotting or rendering code. The JSON text is deterministic (sorted keys, floats
rounded to 6 decimals, NaN/inf as null), so a re-run on the same results is byte-identical and loading it back is a
fixed point.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from judge.calibration.stats import (
    AgreementResult,
    AttackResult,
    ConfidenceResult,
    CorrelationResult,
    LeaderboardCorrelation,
    PairwiseAgreement,
    PromptComparison,
    ThresholdFit,
)
from judge.metrics.panel_agreement import JudgeAgreement

JSON_DECIMALS = 6
FORMAT_VERSION = "argue-calibration/1"


class ItemOutcome(BaseModel):
    """One labelled item as the judge saw it: what `--exclude` reads back and what a user checks by hand."""

    item_id: str
    decision: str
    group: str | None = None
    human: str
    judge: str | None = Field(description="the judge's label; null when the decision failed or was undecided")
    confidence: float | None = None
    error: str | None = None


class CalibrationResults(BaseModel):
    """Everything one calibration run computed. Keys of the dicts: decision name / score metric name."""

    format: str = FORMAT_VERSION
    signature: str
    decisions: dict[str, AgreementResult] = Field(default_factory=dict)
    report_level: dict[str, CorrelationResult] = Field(default_factory=dict)
    run_level: dict[str, LeaderboardCorrelation] = Field(default_factory=dict)
    pairwise: dict[str, PairwiseAgreement] = Field(default_factory=dict)
    prompt_ab: list[PromptComparison] = Field(default_factory=list)
    redteam: list[AttackResult] = Field(default_factory=list, description="per attack kind and decision")
    confidence: dict[str, ConfidenceResult] = Field(
        default_factory=dict, description="per decision whose items carry a confidence: reliability and ECE")
    thresholds: dict[str, ThresholdFit] = Field(
        default_factory=dict, description="per decision, with --fit-threshold: the fitted threshold, cross-validated")
    judges: dict[str, dict[str, AgreementResult]] = Field(
        default_factory=dict, description="with a panel: each judge against the human labels, judge -> decision")
    panel: dict[str, JudgeAgreement] = Field(
        default_factory=dict, description="with a panel: per decision, the agreement among its judges")
    notes: list[str] = Field(default_factory=list, description="free-text lines, e.g. importer skip counts")
    items: list[ItemOutcome] = Field(default_factory=list, exclude=True,
                                     description="per item (written to items.jsonl, not to calibration.json)")
    files: list[Path] = Field(default_factory=list, exclude=True,
                              description="what a call with an output folder wrote there (not in calibration.json)")
    batch: dict[str, Any] | None = Field(default=None, exclude=True, description="with batch jobs: what they did "
                                         "(judge.llm.batch.RoundStats; not in calibration.json)")


def _canonical(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        rounded = round(value, JSON_DECIMALS)
        return 0.0 if rounded == 0 else rounded  # no "-0.0": it would differ from a rerun that lands on +0
    if isinstance(value, dict):
        # A result whose every statistic has a value has no reasons to give: its empty `undefined` is left out.
        return {str(k): _canonical(v) for k, v in value.items() if not (k == "undefined" and v == {})}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    raise TypeError(f"cannot serialise {type(value).__name__}")


def results_json(results: CalibrationResults) -> str:
    """The canonical JSON text of the results (sorted keys, rounded floats, trailing newline)."""
    data = _canonical(results.model_dump(mode="python"))
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def items_jsonl(results: CalibrationResults) -> str:
    """One canonical JSON line per item, in the items' order."""
    return "".join(json.dumps(_canonical(i.model_dump(mode="python")), sort_keys=True, ensure_ascii=False) + "\n"
                   for i in results.items)


def load_calibration_json(path: str | Path) -> CalibrationResults:
    return CalibrationResults.model_validate_json(Path(path).read_text(encoding="utf-8"))

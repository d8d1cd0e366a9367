"""The calibration item: one human-labelled instance of one flowchart decision, and the label order of tables
(the yes/no labels themselves are `judge.judging.decisions.DECISION_LABELS`, read from each decision module's
declaration).

Every importer produces `CalibrationItem`s; the runner asks the judge the item's decision and turns the judge's
verdict into a label with `label_for`; `judge.calibration.stats.agreement_by_decision` compares the two.

Labels are plain strings so that a data set may bring a class of its own (WiCE's "partially_supported").
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judge.chart import SUPPORTS_CITATION
from judge.judging.decisions import DECISION_LABELS

__all__ = ["DECISION_LABELS", "LABEL_ORDER", "PARTIALLY_SUPPORTED", "CalibrationItem", "label_for", "label_order"]

PARTIALLY_SUPPORTED = "partially_supported"

# Fixed label order for confusion matrices and tables: positive, any extra class, negative.
LABEL_ORDER: dict[str, tuple[str, ...]] = {
    d: (pos, PARTIALLY_SUPPORTED, neg) if d == SUPPORTS_CITATION else (pos, neg)
    for d, (pos, neg) in DECISION_LABELS.items()
}


def label_for(decision: str, verdict: bool | None) -> str | None:
    """The calibration label of a yes/no verdict; None (the judge could not decide / failed) stays None."""
    if verdict is None:
        return None
    pos, neg = DECISION_LABELS[decision]  # type: ignore[index]  (a str from a data file, checked upstream)
    return pos if verdict else neg


def label_order(decision: str, present: set[str] | frozenset[str] | None = None) -> list[str]:
    """The fixed order of labels for a decision, keeping only `present` ones (if given) plus unknown extras sorted.

    The decision's own yes/no labels are always kept, even if absent, so matrices of one decision line up.
    """
    base = list(LABEL_ORDER.get(decision, ()))
    yes_no = set(DECISION_LABELS.get(decision, ()))  # type: ignore[call-overload]
    if present is None:
        return [lab for lab in base if lab in yes_no]
    ordered = [lab for lab in base if lab in present or lab in yes_no]
    return ordered + sorted(set(present) - set(ordered))


class CalibrationItem(BaseModel):
    """One instance of one decision with the human label.

    - `claim`: the sentence (for document-level `answers_nugget` items: the nugget question).
    - `documents`: document texts shown to the judge, parallel to `doc_ids` when those are known.
    - `human_label`: a label of `DECISION_LABELS[decision]` (or an extra class such as "partially_supported").
    - `group`: breakdown key (source data set, request id, ...); None = no group.
    - `extra`: anything else the runner may need (nugget id and answers, run/request/sentence index ...).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str
    decision: str  # a decision of the judge (a key of DECISION_LABELS)
    claim: str
    documents: list[str] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    human_label: str
    group: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("decision")
    @classmethod
    def _a_decision_of_the_judge(cls, name: str) -> str:
        if name not in DECISION_LABELS:
            raise ValueError(f"{name!r} is not a decision of the judge; write one of {', '.join(DECISION_LABELS)}")
        return name

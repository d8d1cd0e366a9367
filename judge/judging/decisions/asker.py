"""Asking one decision: a prepared decision in, a `DecisionRecord` out (and the response it was read from).

The walker (whole reports), calibration (labelled items) and nugget creation and pooling (their own questions
and eval's) all ask through a `Decider`, so a verdict measured in calibration or a binding confirmed for a nugget
bank is a verdict of the judge that scores reports: same templates, response models, client and cache.

Where the client returns token log-probabilities, the record carries the decision's `confidence`: the probability
of the value the model wrote in the response model's verdict field, among that field's allowed values
(judge.llm.logprob.verdict_probability). With thresholds, a verdict held with less confidence than its threshold
flips to the other verdict, before the flowchart sees it; the record keeps both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol, get_args, get_origin

from pydantic import BaseModel

from judge.formats.judgments import DecisionRecord
from judge.judging import decisions
from judge.judging.decisions.base import DecisionResponse, Prepared, contract_hash, tailored
from judge.llm.client import Answered
from judge.llm.logprob import verdict_probability
from judge.settings import ModelSettings, Thresholds

CONFIDENCE_DECIMALS = 6


@cache
def verdict_values(decision: str) -> tuple[Any, ...] | None:
    """The values the verdict field may take (a Literal's labels, or true/false), from the response model; None
    for a decision without a verdict field (answers_nugget: a list of labels; absence_nugget: one of several
    labels, any but "none" meaning yes), whose confidence stays None: the probability of the labels written is
    not the probability of the verdict."""
    model = decisions.spec_of(decision).response_model
    field = model.verdict_field
    if field is None:
        return None
    annotation = model.model_fields[field].annotation
    if annotation is bool:
        return (True, False)
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    raise TypeError(f"{decision}.{field} is neither a bool nor a Literal; change its verdict_field")


def confidence_of(decision: str, answered: Answered) -> float | None:
    """The decision's confidence from the answer's log-probabilities; None when there are none to read."""
    field = decisions.spec_of(decision).response_model.verdict_field
    if field is None or answered.response is None or not answered.logprobs or answered.output is None:
        return None
    p = verdict_probability(answered.logprobs, answered.output, field=field, values=verdict_values(decision))
    return None if p is None else round(p, CONFIDENCE_DECIMALS)


class AsksModels(Protocol):
    """What a Decider needs of a client (judge.llm.client.DecisionClient; tests pass scripted ones)."""

    settings: ModelSettings

    async def ask(self, messages: list[dict[str, str]], response_model: type[BaseModel], context: dict[str, Any],
                  contract: str = "") -> Answered: ...


def question(prepared: Prepared, prompts_dir: Path | None = None
             ) -> tuple[list[dict[str, str]], type[DecisionResponse], str]:
    """What the client is asked for a prepared decision (a diamond or a nugget question alike): the messages, the
    response model this call allows (rationale placed as the prompt set says, fields narrowed to the call's
    choices) and the contract hash of the decision's response class (part of the cache key)."""
    spec = decisions.spec_of(prepared.decision)
    template = spec.template(prompts_dir)
    base = spec.response_model
    model = tailored(base, template.rationale, prepared.choices)
    return template.render(**prepared.values), model, contract_hash(base)


@dataclass(frozen=True)
class Asked:
    """A decision asked: its record, and the validated response it was read from (None when the judge failed).
    The nugget commands read their questions' answers (drafted nuggets, given answers) from the response."""

    record: DecisionRecord
    response: DecisionResponse | None


class Decider:
    """Renders a prepared decision's prompt, asks the client, and records the verdict (or the failure)."""

    def __init__(self, client: AsksModels, prompts_dir: Path | None = None, thresholds: Thresholds | None = None):
        if thresholds is not None and not isinstance(thresholds, Thresholds):
            raise TypeError(f"Decider takes resolved thresholds (judge.judging.thresholds.resolve_thresholds), "
                            f"not {thresholds!r}")
        self.client = client
        self.prompts_dir = prompts_dir
        self.thresholds = thresholds

    @property
    def judge(self) -> str:
        """The name written into every record (the model id)."""
        return self.client.settings.model

    async def ask(self, prepared: Prepared) -> DecisionRecord:
        """The decision's record, its threshold applied."""
        return (await self.answer(prepared)).record

    async def answer(self, prepared: Prepared) -> Asked:
        """The decision's record (its threshold applied) and the response behind it."""
        messages, model, contract = question(prepared, self.prompts_dir)
        answered = await self.client.ask(messages, model, prepared.context, contract=contract)
        response = answered.response
        if response is not None and not isinstance(response, DecisionResponse):  # pragma: no cover - contract
            raise TypeError(f"client answered {type(response).__name__}, not a {model.__name__}")
        record = DecisionRecord(
            decision=prepared.decision,
            verdict=response.decided() if response else None,
            doc_ids=list(prepared.doc_ids),
            matches=response.earned(prepared.context) if response else [],
            rationale=response.rationale if response else "",
            evidence=response.evidence_text(prepared.context) if response else None,
            evidence_numbers=response.evidence_numbers() if response else [],
            judge=self.judge,
            prompt_hash=decisions.spec_of(prepared.decision).template(self.prompts_dir).short_hash,
            cached=answered.cached,
            error=answered.error,
            confidence=confidence_of(prepared.decision, answered),
            shown=list(prepared.shown) or None,
            missing_doc_ids=list(prepared.missing_doc_ids),
            reasoning=answered.reasoning or None,  # kept only when asked (ModelSettings.keep_reasoning)
        )
        return Asked(apply_threshold(record, self.thresholds), response)


def apply_threshold(record: DecisionRecord, thresholds: Thresholds | None) -> DecisionRecord:
    """The record with its threshold applied: a verdict the rule guards, held with confidence below the
    threshold, becomes the other verdict (`model_verdict` keeps the model's). Untouched without a rule for the
    decision, without a verdict (cannot judge, failed) or without a confidence (nothing to compare)."""
    rule = thresholds.rule(record.decision) if thresholds else None
    if rule is None or record.verdict is None or record.confidence is None or record.verdict != rule.verdict:
        return record
    if record.confidence >= rule.threshold:
        return record.model_copy(update={"threshold": rule.threshold})
    return record.model_copy(update={"threshold": rule.threshold, "model_verdict": record.verdict,
                                     "verdict": not record.verdict})

"""The thresholds file: decision thresholds fitted on labelled data (`argue-judge calibrate --fit-threshold`)
and applied by `argue-judge eval --thresholds FILE`.

```json
{"format": "argue-thresholds/1", "judge": "<judge signature it was fitted for>", "metric": "kappa",
 "fitted_on": {"items": 240, "signature": "<calibration signature>", ...},
 "decisions": {"supports_citation": {"verdict": "supported", "threshold": 0.87,
                                     "prompt_hash": "4efaea34", "schema_hash": "c4f66e92", ...}}}
```

A rule reads: keep the verdict `verdict` only when the judge's confidence in it is at least `threshold`;
below, the decision flips to the other verdict. A file fits a judge when the model named in its `judge` signature
is the judge's and each rule's `prompt_hash` and `schema_hash` are those of the judge's version of that decision
(its prompt template, its response schema and validators): a confidence means what it did at fitting time only
then, and nothing else (another decision, the passage budget) changes it. The rest is a record of where the rule
came from (sizes, metric, cross-validated agreement) for people to read. The judge signature names the file by
`digest`: a hash of the rules alone, so two files with the same rules judge alike and sign alike.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.errors import InputError, SettingError
from judge.formats._jsonl import read_json_document
from judge.judging import decisions
from judge.judging.fingerprints import decision_prompt_hash, decision_schema_hash
from judge.llm.logprob import asks_logprobs
from judge.settings import (
    DecisionThreshold,
    DefaultThresholds,
    JudgeSettings,
    ModelSettings,
    Thresholds,
)

FORMAT = "argue-thresholds/1"
# Fitted for the embedded judge on AttributionBench and WiCE dev items (calibration/embedded-dev); `eval` applies
# it by default to that judge with the shipped prompts (`--thresholds none` switches it off).
SHIPPED_THRESHOLDS = Path(__file__).parents[1] / "data" / "embedded-thresholds.json"
# The decisions a threshold can flip, as their modules declare (DecisionSpec.takes_threshold), for calibration's
# threshold fit; reading a thresholds file asks the registry itself.
THRESHOLD_DECISIONS = decisions.REGISTRY.with_threshold()


class ThresholdRule(BaseModel):
    model_config = ConfigDict(extra="allow")  # fit statistics ride along for readers

    verdict: str = Field(description="the verdict label the threshold guards, e.g. 'supported'")
    threshold: float = Field(ge=0.0, le=1.0)
    # What the rule is keyed on (judge.judging.fingerprints): the rule fits a judge whose decision has these.
    prompt_hash: str | None = Field(None, description="short hash of the decision's prompt template")
    schema_hash: str | None = Field(None, description="short hash of the decision's response schema and validators")


class ThresholdsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    judge: str = Field(description="short signature of the judge the thresholds were fitted for")
    metric: str
    fitted_on: dict[str, Any] = Field(default_factory=dict)
    decisions: dict[str, ThresholdRule]


def rules_digest(rules: tuple[DecisionThreshold, ...]) -> str:
    material = [[r.decision, r.verdict, r.threshold] for r in sorted(rules, key=lambda r: r.decision)]
    return hashlib.sha256(json.dumps(material, separators=(",", ":")).encode()).hexdigest()[:8]


def to_thresholds(data: ThresholdsFile, name: str = "thresholds") -> Thresholds:
    rules = []
    registry = decisions.REGISTRY
    for decision, rule in sorted(data.decisions.items()):
        if decision not in registry.with_threshold():
            raise InputError(f"decisions.{decision}: no threshold applies to this decision; use one of "
                             f"{', '.join(registry.with_threshold())}", name)
        labels = registry[decision].labels
        if rule.verdict not in labels:
            raise InputError(f"decisions.{decision}.verdict: {rule.verdict!r} is not one of {', '.join(labels)}",
                             name)
        rules.append(DecisionThreshold(decision, rule.verdict == labels[0], rule.threshold))
    return Thresholds(tuple(rules), rules_digest(tuple(rules)))


def read_thresholds(path: str | Path) -> tuple[Thresholds, ThresholdsFile]:
    """The rules of a thresholds file (and the file as read); InputError naming the file and what to fix."""
    path = Path(path)
    # the shared reader: a size cap, UTF-8 and JSON errors naming line and column, and a number of 5,000 digits
    # or a nesting 100,000 deep refused as input errors instead of tracebacks
    raw = read_json_document(path)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"not a thresholds file (its 'format' must be {FORMAT!r})", path)
    try:
        data = ThresholdsFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "file"
        raise InputError(f"field '{where}': {err['msg']}", path) from None
    return to_thresholds(data, str(path)), data


def fitted_model(data: ThresholdsFile) -> str | None:
    """The model a thresholds file was fitted for: the `judge:` field of its judge signature."""
    return next((v for k, _, v in (p.partition(":") for p in data.judge.split("|")) if k == "judge"), None)


def decision_key(decision: str, prompts_dir: Path | None) -> dict[str, str]:
    """What a rule for `decision` is keyed on: that decision's prompt hash and response-schema hash (what its
    confidence depends on; the other decisions, the passage budget and the citation policy do not change it)."""
    return {"prompt_hash": decision_prompt_hash(decision, prompts_dir), "schema_hash": decision_schema_hash(decision)}


def misfits(data: ThresholdsFile, model: ModelSettings, prompts_dir: Path | None) -> list[str]:
    """How this judge differs from the one `data` was fitted for, one phrase each (empty: fitted for it). A rule
    is matched on its own decision's prompt and schema hashes only, so adding a decision or editing another
    decision's prompt keeps it."""
    found = []
    if fitted_model(data) != model.model:
        found.append(f"it was fitted for the model {fitted_model(data) or '(unnamed)'}, not {model.model}")
    for decision, rule in sorted(data.decisions.items()):
        if decision not in decisions.REGISTRY:
            continue  # to_thresholds refuses it
        now = decision_key(decision, prompts_dir)
        for key, what in (("prompt_hash", "prompt"), ("schema_hash", "response schema")):
            was = getattr(rule, key)
            if was != now[key]:
                found.append(f"{decision}'s {what} is {now[key]}, its rule was fitted for "
                             f"{was or 'an unrecorded one'}")
    return found


class ThresholdsWarning(UserWarning):
    """The shipped thresholds fit this model but not this judge's version of the decision they guard."""


@dataclass(frozen=True)
class ThresholdChoice:
    """The decision thresholds a judge applies, and the one line that tells the user which (None: nothing to say);
    `refused`: the shipped rules were meant for this model but not applied (the notice says why and what to do)."""

    rules: Thresholds | None
    notice: str | None = None
    refused: bool = False


def choose_thresholds(option: str | Path | None, model: ModelSettings, prompts_dir: Path | None) -> ThresholdChoice:
    """The one place that decides which decision thresholds a judge applies (eval, calibrate, the Python API and
    the adapters all come here). `option` is what the user asked for: a thresholds file, 'none' (the model's own
    verdicts) or None (the default: the rules shipped for the embedded judge when it is the judge they were fitted
    for, none otherwise). A file fitted for another judge is applied, with a warning as its notice."""
    if option is not None and str(option).strip().lower() == "none":
        return ThresholdChoice(None)
    if option is None:
        return shipped_choice(model, prompts_dir)
    rules, data = read_thresholds(Path(option))
    differs = misfits(data, model, prompts_dir)
    if not differs:
        return ThresholdChoice(rules, f"thresholds: {option}")
    return ThresholdChoice(rules, f"warning: {option} was fitted for another judge ({'; '.join(differs)}); "
                                  "applied as asked")


def shipped_choice(model: ModelSettings, prompts_dir: Path | None) -> ThresholdChoice:
    """The shipped rules (fitted for the embedded judge on dev data, see the file's `fitted_on`) when this judge is
    the one they were fitted for. Another model, or a judge asked for no log-probabilities (its decisions carry no
    confidence to compare), gets none without a word; the embedded model whose guarded decision has another
    prompt or response schema gets none with a warning naming the decision and what to do."""
    if not asks_logprobs(model) or not SHIPPED_THRESHOLDS.is_file():
        return ThresholdChoice(None)
    rules, data = read_thresholds(SHIPPED_THRESHOLDS)
    if fitted_model(data) != model.model:
        return ThresholdChoice(None)
    differs = misfits(data, model, prompts_dir)
    if not differs:
        return ThresholdChoice(rules, f"thresholds: {SHIPPED_THRESHOLDS.name}, fitted for this judge on dev data "
                                      "(--thresholds none: the model's own verdicts)")
    return ThresholdChoice(None, f"warning: the shipped thresholds ({SHIPPED_THRESHOLDS.name}) are NOT applied: "
                                 f"{'; '.join(differs)}. Fit thresholds for this judge (argue-judge calibrate "
                                 "--fit-threshold) and pass them with --thresholds FILE, or pass --thresholds none "
                                 "to judge with the model's own verdicts", refused=True)


def resolve_thresholds(model: ModelSettings, judge: JudgeSettings) -> JudgeSettings:
    """`judge` with DEFAULT_THRESHOLDS replaced by this judge's default rules (explicit rules, or None, kept). The
    shipped rules refused for an edited decision raise a ThresholdsWarning (the CLI prints the same notice)."""
    return default_thresholds(model, judge)[0]


def default_thresholds(model: ModelSettings, judge: JudgeSettings) -> tuple[JudgeSettings, str]:
    """`resolve_thresholds`, and the notice of the default it chose ("" when the rules were given, or when the
    judge gets none without a word)."""
    if not isinstance(judge.thresholds, DefaultThresholds):
        return judge, ""
    choice = shipped_choice(model, judge.prompts_dir)
    if choice.refused:
        warnings.warn(ThresholdsWarning(choice.notice), stacklevel=3)
    return replace(judge, thresholds=choice.rules), choice.notice or ""


def check_confidence_for(model: ModelSettings, judge: JudgeSettings) -> None:
    """Thresholds compare each decision's confidence, which only log-probabilities give: rules asked for on a judge
    that asks for none are refused (SettingError), not left to flip nothing. eval, calibrate and the Python API
    come here; the default thresholds are never refused (a judge without log-probabilities gets none)."""
    if isinstance(judge.thresholds, Thresholds) and not asks_logprobs(model):
        raise SettingError("thresholds (--thresholds) compare each decision's confidence, which needs "
                           "log-probabilities: give logprobs=True (--logprobs; the provider must return them), or "
                           "no thresholds (thresholds=None, --thresholds none)")


def shipped_thresholds(model: ModelSettings, prompts_dir: Path | None) -> tuple[Thresholds, Path] | None:
    """The shipped rules and their file when this judge is the one they were fitted for (see `shipped_choice`)."""
    rules = shipped_choice(model, prompts_dir).rules
    return None if rules is None else (rules, SHIPPED_THRESHOLDS)


def thresholds_json(data: ThresholdsFile) -> str:
    """Deterministic text of a thresholds file (sorted keys, trailing newline)."""
    return json.dumps(data.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

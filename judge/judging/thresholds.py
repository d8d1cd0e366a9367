"""The thresholds file: decision thresholds fitted on labelled data (`argue-judge calibrate --fit-threshold`)
and applied by `argue-judge eval --thresholds FILE`.

```json
{"format": "argue-thresholds/1", "judge": "<judge signature it was fitted for>", "metric": "kappa",
 "fitted_on": {"items": 240, "signature": "<calibration signature>", ...},
 "decisions": {"supports_citation": {"verdict": "supported", "threshold": 0.87, ...}}}
```

A rule reads: keep the verdict `verdict` only when the judge's confidence in it is at least `threshold`;
below, the decision flips to the other verdict. Everything but `decisions.*.verdict` and `.threshold` is a record
of where the rule came from (sizes, metric, cross-validated agreement) for people to read. The judge signature
names the file by `digest`: a hash of the rules alone, so two files with the same rules judge alike and sign
alike.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.errors import InputError
from judge.formats._jsonl import read_json_document
from judge.judging import decisions
from judge.judging.fingerprints import prompt_hashes, prompts_tag, schema_hash
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


def judge_of(model: ModelSettings, prompts_dir: Path | None) -> str:
    """What a thresholds file is compared with (see `fitted_for`): the parts of the judge signature that decide
    what a confidence means, in the signature's own `key:value|...` form."""
    return f"judge:{model.model}|prompts:{prompts_tag(prompt_hashes(prompts_dir))}|schema:{schema_hash()}"


def fitted_for(judge_signature: str, data: ThresholdsFile) -> bool:
    """Whether `data` was fitted for this judge: same model, same prompts, same response schemas (what the
    confidence depends on; the passage budget, the citation policy and the rest of the signature may differ)."""
    def parts(signature: str) -> dict[str, str]:
        return {k: v for k, _, v in (p.partition(":") for p in signature.split("|")) if k in _FITTED_FOR}
    return parts(judge_signature) == parts(data.judge) and len(parts(data.judge)) == len(_FITTED_FOR)


_FITTED_FOR = ("judge", "prompts", "schema")


@dataclass(frozen=True)
class ThresholdChoice:
    """The decision thresholds a judge applies, and the one line that tells the user which (None: nothing to say)."""

    rules: Thresholds | None
    notice: str | None = None


def choose_thresholds(option: str | Path | None, model: ModelSettings, prompts_dir: Path | None) -> ThresholdChoice:
    """The one place that decides which decision thresholds a judge applies (eval, calibrate, the Python API and
    the adapters all come here). `option` is what the user asked for: a thresholds file, 'none' (the model's own
    verdicts) or None (the default: the rules shipped for the embedded judge when it is the judge they were fitted
    for, none otherwise). A file fitted for another judge is applied, with a warning as its notice."""
    if option is not None and str(option).strip().lower() == "none":
        return ThresholdChoice(None)
    if option is None:
        shipped = shipped_thresholds(model, prompts_dir)
        if shipped is None:
            return ThresholdChoice(None)
        return ThresholdChoice(shipped[0], f"thresholds: {shipped[1].name}, fitted for this judge on dev data "
                                           "(--thresholds none: the model's own verdicts)")
    rules, data = read_thresholds(Path(option))
    if fitted_for(judge_of(model, prompts_dir), data):
        return ThresholdChoice(rules, f"thresholds: {option}")
    return ThresholdChoice(rules, f"warning: {option} was fitted for another judge (model, prompts or response "
                                  f"schemas differ): {data.judge}")


def resolve_thresholds(model: ModelSettings, judge: JudgeSettings) -> JudgeSettings:
    """`judge` with DEFAULT_THRESHOLDS replaced by this judge's default rules (explicit rules, or None, kept)."""
    if not isinstance(judge.thresholds, DefaultThresholds):
        return judge
    return replace(judge, thresholds=choose_thresholds(None, model, judge.prompts_dir).rules)


def shipped_thresholds(model: ModelSettings, prompts_dir: Path | None) -> tuple[Thresholds, Path] | None:
    """The rules shipped for the embedded judge (fitted on the dev data, see the file's `fitted_on`), when the
    judge is the one they were fitted for; None otherwise (another model, edited prompts or schemas, or a judge
    asked for no log-probabilities, whose decisions carry no confidence to compare)."""
    if not asks_logprobs(model) or not SHIPPED_THRESHOLDS.is_file():
        return None
    rules, data = read_thresholds(SHIPPED_THRESHOLDS)
    return (rules, SHIPPED_THRESHOLDS) if fitted_for(judge_of(model, prompts_dir), data) else None


def thresholds_json(data: ThresholdsFile) -> str:
    """Deterministic text of a thresholds file (sorted keys, trailing newline)."""
    return json.dumps(data.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"

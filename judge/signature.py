"""Signatures in the spirit of sacreBLEU: one string naming every setting behind a judgment or a score.

A judge signature names what can change a verdict (model, sampling, prompts, response schemas, citation policy,
length limit, passage selection). A score signature adds what the numbers were computed over (requests, reports,
failed and undetermined sentences), so two scores can be compared honestly. Short, long and JSON forms.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from judge import __version__
from judge.decisions import RESPONSE_MODELS
from judge.labels import DECISIONS
from judge.llm.cache import canonical_json
from judge.llm.client import ModelSettings, RetryPolicy, contract_hash
from judge.prompts import load_template
from judge.walker import JudgeSettings

ABBREVIATIONS = {"supports_citation": "sc", "answers_nugget": "an", "claims_absence": "ca",
                 "absence_nugget": "ab", "needs_citation": "nc", "repeated_claim": "rc"}


def schema_hash() -> str:
    """Response schemas and the validators behind them (the modules' source), in one short hash."""
    contracts = {d: [RESPONSE_MODELS[d].model_json_schema(), contract_hash(RESPONSE_MODELS[d])] for d in DECISIONS}
    return hashlib.sha256(canonical_json(contracts).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class JudgeSignature:
    version: str
    model: str
    temperature: float
    seed: int | None
    max_tokens: int
    reasks: int
    prompts: tuple[tuple[str, str], ...]
    schema: str
    citation_policy: str
    truncate: bool
    passages: str

    @classmethod
    def of(cls, model: ModelSettings, retry: RetryPolicy, settings: JudgeSettings) -> JudgeSignature:
        prompts = tuple((d, load_template(d, settings.prompts_dir).short_hash) for d in DECISIONS)
        return cls(__version__, model.model, model.temperature, model.seed, model.max_tokens, retry.reasks,
                   prompts, schema_hash(), settings.policy, settings.truncate, settings.passages.tag)

    def _fields(self, short: bool) -> list[tuple[str, str]]:
        prompts = "+".join(f"{ABBREVIATIONS[d] if short else d}={h}" for d, h in self.prompts)
        return [
            ("argue-judge", self.version), ("judge", self.model), ("temp", f"{self.temperature:g}"),
            ("seed", str(self.seed)), ("maxtok", str(self.max_tokens)), ("reask", str(self.reasks)),
            ("prompts", prompts), ("schema", self.schema), ("cite", self.citation_policy),
            ("trunc", "yes" if self.truncate else "no"), ("doc", self.passages),
        ]

    def short(self) -> str:
        return "|".join(f"{k}:{v}" for k, v in self._fields(short=True))

    def long(self) -> str:
        return "\n".join(f"{k:>12}: {v}" for k, v in self._fields(short=False))

    def as_dict(self) -> dict:
        data = asdict(self)
        data["prompts"] = dict(self.prompts)
        return data


@dataclass(frozen=True)
class ScoreSignature:
    """What a set of scores was computed from: the judge (or 'human' assessors) and the material counted."""

    judge: str
    requests: int
    reports: int
    failed: int
    undetermined: int

    def short(self) -> str:
        return (f"{self.judge}|requests:{self.requests}|reports:{self.reports}|failed:{self.failed}"
                f"|undetermined:{self.undetermined}")

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

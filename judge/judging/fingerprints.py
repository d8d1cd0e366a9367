"""Fingerprints of what the judge is made of: its prompts, its response contracts and its injection detector,
each as a short hash. The judge signature prints them, and a thresholds file is matched to the judge it was fitted
for by them (judge.judging.thresholds), which is why they live below both."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

from judge.defence import learned, pieces, quarantine
from judge.defence.injection import RULES
from judge.defence.learned import load_detector
from judge.judging.decisions import RESPONSE_MODELS
from judge.judging.decisions.base import contract_hash
from judge.judging.prompts import load_template
from judge.labels import DECISIONS, Decision
from judge.settings import InjectionDetector

ABBREVIATIONS: dict[Decision, str] = {"supports_citation": "sc", "answers_nugget": "an", "claims_absence": "ca",
                                      "absence_nugget": "ab", "needs_citation": "nc", "repeated_claim": "rc"}


def schema_hash() -> str:
    """Response schemas and the validators behind them (their contract hashes), in one short hash."""
    contracts = {d: [RESPONSE_MODELS[d].model_json_schema(), contract_hash(RESPONSE_MODELS[d])] for d in DECISIONS}
    text = json.dumps(contracts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def detector_hash(detector: InjectionDetector = "rules+learned") -> str:
    """The injection detector's rules, the learned detector (its scoring code and the version of its weights) unless
    `detector` is the rules alone, and the pieces and the quarantine's cutting in one short hash: they decide the
    flags (counted in the scores), what the model is shown of flagged text and, with `--on-injection penalise`,
    outcomes."""
    learned_parts = [inspect.getsource(learned), load_detector().version] if detector == "rules+learned" else []
    parts = [json.dumps(RULES, ensure_ascii=False), *learned_parts, inspect.getsource(pieces),
             inspect.getsource(quarantine)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def prompt_hashes(prompts_dir: Path | None) -> tuple[tuple[str, str], ...]:
    """(decision, short hash of its template) for every decision, in the fixed decision order."""
    return tuple((d, load_template(d, prompts_dir).short_hash) for d in DECISIONS)


def prompts_tag(hashes: tuple[tuple[str, str], ...], short: bool = True) -> str:
    """`sc=4efaea34+an=...` (short) or with the decisions' full names."""
    return "+".join(f"{ABBREVIATIONS[d] if short else d}={h}" for d, h in hashes)  # type: ignore[index]

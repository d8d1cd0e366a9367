"""Fingerprints of what the judge is made of: its prompts, its response contracts and its injection detector,
each as a short hash. The judge signature prints them, and a thresholds file is matched to the judge it was fitted
for by them (judge.judging.thresholds), which is why they live below both."""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from judge.defence import learned, pieces, quarantine, script
from judge.defence.injection import RULES, uses_script
from judge.defence.learned import load_detector
from judge.judging import decisions
from judge.judging.decisions.base import contract_hash, despite_other_threads_parsing, source_of
from judge.settings import DEFAULT_INJECTION_DETECTOR, InjectionDetector


def schema_hash() -> str:
    """Response schemas and the validators behind them (their contract hashes), in one short hash."""
    contracts = {spec.name: _contract(spec) for spec in decisions.REGISTRY}
    return _short(contracts)


def decision_schema_hash(decision: str) -> str:
    """One decision's response schema and the validators behind it, in one short hash: what a decision threshold
    fitted for that decision depends on, whatever the other decisions are."""
    return _short(_contract(decisions.REGISTRY[decision]))


def decision_prompt_hash(decision: str, prompts_dir: Path | None) -> str:
    """The short hash of one decision's prompt template (from `prompts_dir`, or the shipped prompts)."""
    return decisions.REGISTRY[decision].template(prompts_dir).short_hash


def _contract(spec: decisions.DecisionSpec) -> list[object]:
    return [spec.response_model.model_json_schema(), contract_hash(spec.response_model)]


def _short(material: object) -> str:
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def detector_hash(detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR) -> str:
    """The injection detector's rules, the learned detector (its scoring code and the version of its weights) and
    the script check where `detector` uses them, and the pieces and the quarantine's cutting, in one short hash:
    they decide the flags (counted in the scores), what the model is shown of flagged text and, with
    `--on-injection penalise`, outcomes."""
    script_parts = [code_of(script)] if uses_script(detector) else []
    parts = [json.dumps(RULES, ensure_ascii=False), code_of(learned), load_detector().version, *script_parts,
             code_of(pieces), code_of(quarantine)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def code_of(module: object) -> str:
    """A module's code as the interpreter sees it: its syntax tree without docstrings, comments or layout, so that
    a signature moves when what the code does may have changed, not when its documentation is reworded."""
    tree = despite_other_threads_parsing(lambda: ast.parse(source_of(module)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def prompt_hashes(prompts_dir: Path | None, names: tuple[str, ...] | None = None) -> tuple[tuple[str, str], ...]:
    """(decision, short hash of its template) for every diamond, in the registry's order; or for the decisions
    `names` (a nugget command's, diamonds or nugget questions alike), in that order."""
    specs = decisions.REGISTRY if names is None else [decisions.spec_of(name) for name in names]
    return tuple((spec.name, spec.template(prompts_dir).short_hash) for spec in specs)


def prompt_hashes_in(signature: str) -> dict[str, str]:
    """The prompt hash of each decision a judge signature's `prompts:` field names (`sc=4efaea34+...`), by name."""
    names = {spec.abbreviation: spec.name for spec in decisions.REGISTRY}
    tag = next((v for k, _, v in (p.partition(":") for p in signature.split("|")) if k == "prompts"), "")
    pairs = (entry.partition("=") for entry in tag.split("+") if entry)
    return {names.get(key, key): value for key, _, value in pairs}


def prompts_tag(hashes: tuple[tuple[str, str], ...], short: bool = True) -> str:
    """`sc=4efaea34+an=...` (short: each decision's abbreviation) or with the decisions' full names."""
    return "+".join(f"{decisions.spec_of(d).abbreviation if short else d}={h}" for d, h in hashes)

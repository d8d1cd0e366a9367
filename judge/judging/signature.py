"""Signatures in the spirit of sacreBLEU: everything behind a number, in short, long and JSON forms.

One class per kind of result:
- `JudgeSignature`: what can change a verdict or a judgments record (model, sampling, prompts, response
  contracts, citation policy, length limit and the unit it counts, passage selection, what a sentence addressing
  the judge gets, and the detector that decides it; whether decisions carry a confidence, and the decision
  thresholds applied to it);
- `ScoreSignature`: what the scores were computed from (the judge or 'human' assessors, the citation policy
  the outcomes were derived under, requests, reports, failed and undetermined sentences; with a human sample for
  prediction-powered estimates, its hash, sampling design and confidence level);
- `CalibrationSignature`: the judge plus the calibration material (items, label policy, sample, bootstrap,
  resampling seed, the prompts of an A/B comparison, the attack kinds of a red-team run, the threshold fit);
- `BaselineSignature`: an automatic baseline and every setting it ran with.
Each reads the frozen settings of judge.settings; nothing here runs a model.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from judge._version import __version__
from judge.judging.fingerprints import detector_hash, prompt_hashes, prompts_tag, schema_hash
from judge.judging.thresholds import resolve_thresholds
from judge.labels import DEFAULT_VOTE
from judge.llm.judges import judge_of
from judge.llm.panel import PanelMember
from judge.settings import DEFAULT_INJECTION_DETECTOR, JudgeSettings, ModelSettings, RetryPolicy
from judge.types import Request


class _Forms:
    """Short (`k:v|k:v`), long (one aligned line per field) and JSON forms from one `_fields` list."""

    def _fields(self, short: bool) -> list[tuple[str, str]]:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def short(self) -> str:
        return "|".join(f"{k}:{v}" if k else v for k, v in self._fields(short=True))

    def long(self) -> str:
        return "\n".join(f"{k or 'judge':>12}: {v}" for k, v in self._fields(short=False))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    def as_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)


@dataclass(frozen=True)
class JudgeSignature(_Forms):
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
    on_injection: str = "quarantine"
    detector: str = ""
    limit_unit: str = "none"   # what the requests' length limits count: characters, words, both, or none
    logprobs: bool = False             # decisions asked for log-probabilities (records carry a confidence)
    thresholds: str | None = None      # digest of the decision thresholds applied (judge.judging.thresholds)
    # The detector stack (--injection-detector). The default of a signature read without the field is the stack
    # that was the default when the field came in.
    injection_detector: str = "rules+learned"
    # A reasoning judge's effort (--reasoning-effort); None, the model's default, adds no field to any form.
    reasoning_effort: str | None = None
    # A panel of judges (judge.judging.panel): each judge as `panel_member` tags it, and the vote. None for a
    # single judge, which then adds no field to any form. The fields above are then the first judge's.
    panel: tuple[str, ...] | None = None
    vote: str | None = None

    @classmethod
    def of(cls, model: ModelSettings, retry: RetryPolicy, settings: JudgeSettings,
           requests: Iterable[Request] = (), panel: Sequence[PanelMember] = (),
           vote: str = DEFAULT_VOTE) -> JudgeSignature:
        """`requests`: the requests judged, whose length limits (and the unit they count) the walker applies.
        `panel`: the judges of a panel (then `model` and `settings.prompts_dir` are its first judge's), with
        its `vote`."""
        if panel:
            signed = cls.of(panel[0].model, retry, replace(settings, prompts_dir=panel[0].prompts_dir), requests)
            return replace(signed, panel=tuple(panel_member(m, panel[0], settings) for m in panel), vote=vote)
        settings = resolve_thresholds(model, settings)  # the thresholds this judge applies, decided in one place
        units = sorted({r.limit_unit for r in requests if r.limit is not None})
        judge = judge_of(model).signature_fields()  # the judge's own fields, as it applies them
        return cls(__version__, judge["model"], judge["temperature"], judge["seed"], judge["max_tokens"],
                   retry.reasks, prompt_hashes(settings.prompts_dir), schema_hash(), settings.policy,
                   settings.truncate, settings.passages.tag, settings.on_injection,
                   detector_hash(settings.injection_detector), "+".join(units) or "none", judge["logprobs"],
                   settings.thresholds.digest if settings.thresholds else None, settings.injection_detector,
                   judge.get("reasoning_effort"))

    def _fields(self, short: bool) -> list[tuple[str, str]]:
        return [
            ("argue-judge", self.version), ("judge", self.model), ("temp", f"{self.temperature:g}"),
            ("seed", str(self.seed)), ("maxtok", str(self.max_tokens)), ("reask", str(self.reasks)),
            ("prompts", prompts_tag(self.prompts, short)), ("schema", self.schema), ("cite", self.citation_policy),
            ("trunc", "yes" if self.truncate else "no"), ("limit", self.limit_unit), ("doc", self.passages),
            # Other stacks than the default are told apart by name (`quarantine@rules:1a2b3c4d`); the default keeps
            # the short form.
            ("inj", f"{self.on_injection}@{self.detector}" if self.injection_detector == DEFAULT_INJECTION_DETECTOR
             else f"{self.on_injection}@{self.injection_detector}:{self.detector}"),
            *([("lp", "yes")] if self.logprobs else []),
            *([("thr", self.thresholds)] if self.thresholds else []),
            *([("effort", self.reasoning_effort)] if self.reasoning_effort else []),
            *([("panel", "+".join(self.panel)), ("vote", str(self.vote))] if self.panel else []),
        ]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["prompts"] = dict(self.prompts)
        for optional in ("reasoning_effort", "panel", "vote"):
            if data[optional] is None:
                del data[optional]
        if self.panel:
            data["panel"] = list(self.panel)
        return data


def panel_member(member: PanelMember, first: PanelMember, settings: JudgeSettings) -> str:
    """One judge of a panel in the signature: its model; `@` and a short hash of its prompts where it has a prompt
    directory of its own; `~` and a short hash of its sampling (temperature, seed, max tokens, effort) where that
    differs from the first judge's; `#` and the digest of its decision thresholds where they differ from the first
    judge's (`thr:`)."""
    tag = judge_of(member.model).signature_fields()["model"]
    if member.prompts_dir is not None:
        tag += "@" + _digest(prompts_tag(prompt_hashes(member.prompts_dir)))
    if member.model.sampling() != first.model.sampling():
        tag += "~" + _digest(json.dumps(member.model.sampling(), sort_keys=True))
    rules = [resolve_thresholds(m.model, replace(settings, prompts_dir=m.prompts_dir)).thresholds
             for m in (member, first)]
    if rules[0] != rules[1]:
        tag += "#" + (rules[0].digest if rules[0] else "none")
    return tag


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class ScoreSignature(_Forms):
    """What a set of scores was computed from: the judge (or 'human' assessors) and the material counted."""

    judge: str
    requests: int
    reports: int
    failed: int
    undetermined: int
    citation_policy: str = "all"   # how human decisions were turned into outcomes (score --citation-policy)
    # Prediction-powered estimates (--human): a hash of the human judgments' bytes and how many reports they
    # judged, the sampling design and the confidence level of the intervals. None: no human sample.
    human: str | None = None
    sample: str | None = None
    confidence: float | None = None

    def _fields(self, short: bool) -> list[tuple[str, str]]:
        # A key appears once and means one thing: the judge's signature already says `cite:` (the policy its
        # walker turned decisions into outcomes with), so scoring adds its own only where that says nothing
        # (human judgments) or something else (`score-cite`: decisions re-derived under another policy).
        judged_with = _value_of(self.judge, "cite")
        cite = [] if judged_with == self.citation_policy else \
            [("cite" if judged_with is None else "score-cite", self.citation_policy)]
        return [("", self.judge), ("requests", str(self.requests)), ("reports", str(self.reports)),
                ("failed", str(self.failed)), ("undetermined", str(self.undetermined)), *cite,
                # `ppi-` keys: a human judge's own label already starts with `human:`
                *([("ppi-human", self.human), ("ppi-sample", str(self.sample)), ("ppi-conf", f"{self.confidence:g}")]
                  if self.human is not None else [])]


def _value_of(signature: str, key: str) -> str | None:
    """The value of `key` in a short signature (`a:1|b:2`), None when it has no such key."""
    return next((value for name, _, value in (part.partition(":") for part in signature.split("|"))
                 if name == key), None)


@dataclass(frozen=True)
class CalibrationSignature(_Forms):
    """The judge plus what its agreement was measured on. `resample_seed` drives the sample and the bootstrap
    (the model's own sampling seed is the judge signature's `seed`)."""

    judge: JudgeSignature | None             # the judge asked about the items (None: no item was asked)
    items: int
    n_boot: int
    resample_seed: int
    sample: str | None = None               # stratified sample size(s) per data set (None: every item)
    exclude: str | None = None              # items left out before sampling: 'count@hash of their ids'
    wice_partial: str | None = None         # how WiCE's partially_supported was labelled (None: no WiCE items)
    against: tuple[tuple[str, str], ...] | None = None   # prompt hashes of the old set of an A/B comparison
    attacks: tuple[str, ...] | None = None   # red-team attack kinds (None: no red team)
    attacks_hash: str | None = None          # hash of those kinds' definitions (targets, texts, obfuscation)
    fit: str | None = None                   # --fit-threshold: metric and folds of the threshold fit
    judged: str | None = None                # the judge of the --judged judgments, as their records name it

    def _fields(self, short: bool) -> list[tuple[str, str]]:
        asked = [("", self.judge.short() if short else self.judge.long().replace("\n", "; "))] \
            if self.judge is not None else [("argue-judge", __version__)]
        out = [*asked, *([("judged", self.judged)] if self.judged is not None else []),
               ("items", str(self.items)), ("sample", "all" if self.sample is None else str(self.sample)),
               ("boot", str(self.n_boot)), ("resample_seed", str(self.resample_seed))]
        if self.exclude is not None:
            out.append(("exclude", self.exclude))
        if self.wice_partial is not None:
            out.append(("wice_partial", self.wice_partial))
        if self.against is not None:
            out.append(("against", prompts_tag(self.against, short)))
        if self.attacks is not None:
            out.append(("attack", "+".join(self.attacks) + f"@{self.attacks_hash}"))
        if self.fit is not None:
            out.append(("fit", self.fit))
        return out

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["judge"] = self.judge.as_dict() if self.judge is not None else None
        data["against"] = dict(self.against) if self.against is not None else None
        data["attacks"] = list(self.attacks) if self.attacks is not None else None
        return data


@dataclass(frozen=True)
class BaselineSignature(_Forms):
    """An automatic baseline (EXAM, ROUGE, pa-BLEU, pa-METEOR) and every setting it ran with, in order."""

    baseline: str
    settings: tuple[tuple[str, str], ...]
    version: str = __version__

    @classmethod
    def of(cls, baseline: str, *parts: str | tuple[str, str]) -> BaselineSignature:
        """Settings as (key, value) pairs or as ready `key=value` strings (a reader's or matcher's own tag)."""
        pairs = [p if isinstance(p, tuple) else tuple(p.split("=", 1)) if "=" in p else ("", p) for p in parts]
        return cls(baseline, tuple((str(k), str(v)) for k, v in pairs))

    def _fields(self, short: bool) -> list[tuple[str, str]]:
        return [("baseline", self.baseline), ("argue-judge", self.version), *self.settings]

    def short(self) -> str:
        # The scores-TSV header of a baseline: space-separated `key=value` (values may contain '|' and ':').
        return " ".join(f"{k}={v}" if k else v for k, v in self._fields(short=True))

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "version": self.version, "settings": [list(p) for p in self.settings]}

    def __str__(self) -> str:
        return self.short()

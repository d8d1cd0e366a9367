"""Every setting that can change a verdict or a score, frozen, in one place.

Signatures (judge.judging.signature), the decision cache key (judge.llm) and the library path
(judge.run.evaluate) all read these objects, so a setting cannot reach a number without also reaching the
signature. This module imports nothing from the rest of the package except the label vocabulary, so `llm/` may
depend on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from judge.errors import SettingError
from judge.labels import CITATION_POLICIES, SAMPLE_DESIGNS, CitationPolicy, SampleDesign

# What eval does with a sentence or document the injection detector flags (defence.injection): every policy records
# and counts the flag; `quarantine` also withholds the flagged pieces from the model (judge.defence.quarantine), `flag`
# shows the model the text as written (to measure an attack), `penalise` withholds from documents and judges a
# flagged sentence unsupported (#1 cited, #5 uncited) without asking the model.
InjectionPolicy = Literal["quarantine", "flag", "penalise"]
INJECTION_POLICIES: tuple[InjectionPolicy, ...] = get_args(InjectionPolicy)
# What flags and withholds text: the rules, and where none fires the learned detector, flag it
# (judge.defence.injection.detect); the default's script check also has the quarantine withhold pieces in a script
# foreign to their text, flagging nothing (judge.defence.script). "rules+learned" leaves the script check out, for
# reports that quote names, titles or text in another script and should be shown them.
InjectionDetector = Literal["rules+learned+script", "rules+learned"]
INJECTION_DETECTORS: tuple[InjectionDetector, ...] = get_args(InjectionDetector)
DEFAULT_INJECTION_DETECTOR: InjectionDetector = "rules+learned+script"
# llama.cpp CPU kernels of the embedded judge (judge.llm.embedded.kernels says what each does).
Kernels = Literal["auto", "safe", "fast"]
KERNEL_CHOICES: tuple[Kernels, ...] = get_args(Kernels)


# The rules of every setting, declared once on the settings objects below. The API checks them when an object is
# built (ValueError/TypeError naming the argument); the CLI reads the same rules for its options' ranges and
# choices (judge.cli.options), so a new setting cannot be checked on one path and not the other
# (tests/test_numeric_options.py walks the CLI, tests/test_api_validation.py the API).

@dataclass(frozen=True)
class Bounds:
    """The declared range of a number: `nan`, `inf` and a value outside it are refused. Upper bounds are far beyond
    any sensible setting; they exist so that a typo (an extra 000) is refused at once instead of allocating
    terabytes or waiting for years."""

    low: float
    high: float
    low_open: bool = False      # (low, high]: e.g. a timeout must be more than 0
    high_open: bool = False     # [low, high): e.g. a confidence level must be less than 1

    def contains(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        above_low = value > self.low if self.low_open else value >= self.low
        below_high = value < self.high if self.high_open else value <= self.high
        return above_low and below_high

    @property
    def interval(self) -> str:
        return f"{'(' if self.low_open else '['}{_show(self.low)}, {_show(self.high)}{')' if self.high_open else ']'}"

    def __str__(self) -> str:
        return f"a number in {self.interval}"


def _show(limit: float) -> str:
    return str(int(limit)) if float(limit).is_integer() else f"{limit:g}"


FRACTION = Bounds(0, 1)
SEED = Bounds(0, 2**32 - 1)            # numpy's and llama.cpp's seeds are unsigned 32-bit
COUNT = Bounds(1, 1_000_000)           # things to do at once, tokens, retrieved sentences
USD = Bounds(0, 1_000_000)
CHARACTERS = Bounds(1, 10**9)          # a passage budget: above any document's length it cuts nothing
SECONDS = Bounds(0, 86_400, low_open=True)  # a request attempt may wait at most a day
CONCURRENCY = Bounds(1, 1024)
WORKERS = Bounds(1, 100_000)           # Ray workers of a cluster
THREADS = Bounds(1, 1024)
TEMPERATURE = Bounds(0, 2)
DOC_BYTES = Bounds(1, 2**40)
BOOTSTRAP = Bounds(0, 1_000_000)
CONFIDENCE = Bounds(0, 1, low_open=True, high_open=True)  # of an interval: 0.95, never 0 or 1


@dataclass(frozen=True)
class Number:
    """A numeric setting: its range, whether it must be a whole number, whether None is allowed."""

    bounds: Bounds
    integer: bool = False
    optional: bool = False

    def check(self, argument: str, value: Any) -> None:
        if value is None and self.optional:
            return
        kinds = (int,) if self.integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            what = "a whole number" if self.integer else "a number"
            raise TypeError(f"{argument} must be {what}{' or None' if self.optional else ''}, "
                            f"not {type(value).__name__} {value!r}")
        if not self.bounds.contains(value):
            raise SettingError(f"{argument}={value!r} is not {self.bounds}")


@dataclass(frozen=True)
class OneOf:
    """A setting that takes one of a few names."""

    choices: tuple[str, ...]
    optional: bool = False

    def check(self, argument: str, value: Any) -> None:
        if value is None and self.optional:
            return
        if value not in self.choices:
            raise SettingError(f"{argument}={value!r}: choose one of {', '.join(self.choices)}")


@dataclass(frozen=True)
class Flag:
    """A yes/no setting (None too when `optional`: decided later)."""

    optional: bool = False

    def check(self, argument: str, value: Any) -> None:
        if not (isinstance(value, bool) or (value is None and self.optional)):
            raise TypeError(f"{argument} must be True or False{' or None' if self.optional else ''}, "
                            f"not {value!r}")


@dataclass(frozen=True)
class InstanceOf:
    """A setting that is itself a settings object (or a path)."""

    kinds: tuple[type, ...]
    optional: bool = False

    def check(self, argument: str, value: Any) -> None:
        if not (isinstance(value, self.kinds) or (value is None and self.optional)):
            names = " or ".join(k.__name__ for k in self.kinds) + (" or None" if self.optional else "")
            raise TypeError(f"{argument} must be {names}, not {type(value).__name__} {value!r}")


Rule = Number | OneOf | Flag | InstanceOf


def check_rules(settings: Any, rules: Mapping[str, Rule]) -> None:
    """Check every field of `settings` that has a rule; the first broken one raises, naming the field."""
    for name, rule in rules.items():
        rule.check(name, getattr(settings, name))


def bounds_of(settings: type, name: str) -> Bounds:
    """The declared range of a numeric setting (what the CLI prints in --help and checks)."""
    rule = settings.RULES[name]
    if not isinstance(rule, Number):
        raise TypeError(f"{settings.__name__}.{name} is not a numeric setting")
    return rule.bounds


def choices_of(settings: type, name: str) -> tuple[str, ...]:
    """The names a setting takes (what the CLI offers and checks)."""
    rule = settings.RULES[name]
    if not isinstance(rule, OneOf):
        raise TypeError(f"{settings.__name__}.{name} is not a choice")
    return rule.choices


@dataclass(frozen=True)
class ModelSettings:
    """Everything about the model that can change an answer (api_base and api_key cannot, so they are not keyed)."""

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 512
    # Seconds per HTTP attempt (--timeout): a server that accepts the connection and never answers costs at most
    # timeout x transport attempts per decision. Not in the cache key: it cannot change an answer, only lose one.
    timeout: float = 120.0
    # Several servers of this one model (--api-base given more than once): litellm's Router spreads the calls
    # over them and fails over when one dies. Empty: `api_base` alone. Not keyed, like api_base.
    api_bases: tuple[str, ...] = ()
    # A litellm Router config (YAML or JSON, --router): its deployments of `model` serve the run.
    router_config: Path | None = None
    # Ask for token log-probabilities (a decision's confidence)? None: only of the embedded judge, the one
    # provider known to return them; hosted providers opt in (not every one accepts the parameter).
    # `judge.llm.logprob.asks_logprobs` resolves it. Not in `sampling()`: the answer does not depend on it.
    logprobs: bool | None = None
    # llama.cpp threads of the embedded judge (--threads). None: as many as the cores free when the model loads.
    # Not keyed: each thread computes its own rows of every product, so the count changes speed, not answers.
    threads: int | None = None
    # llama.cpp CPU kernels of the embedded judge (--kernels auto|safe|fast, judge.llm.embedded.kernels). Not keyed: the
    # paths round differently, but a rerun replays cached answers whichever path made them; run-summary.json
    # records the path a run used.
    kernels: Kernels = "auto"

    RULES: ClassVar[dict[str, Rule]] = {
        "model": InstanceOf((str,)), "api_base": InstanceOf((str,), optional=True),
        "api_key": InstanceOf((str,), optional=True), "temperature": Number(TEMPERATURE),
        "seed": Number(SEED, integer=True, optional=True), "max_tokens": Number(COUNT, integer=True),
        "timeout": Number(SECONDS), "logprobs": Flag(optional=True),
        "threads": Number(THREADS, integer=True, optional=True), "kernels": OneOf(KERNEL_CHOICES),
    }

    def __post_init__(self) -> None:
        check_rules(self, self.RULES)
        if not self.model:
            raise SettingError("model must name a model (a litellm model id such as openai/gpt-4o-mini)")

    @property
    def routed(self) -> bool:
        """Whether calls go through litellm's Router (several servers) rather than straight to litellm."""
        return len(self.api_bases) > 1 or self.router_config is not None

    def sampling(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class RetryPolicy:
    """The one retry policy of the project, applied by judge.llm.client (and nowhere else).

    Three retry layers sit below ours, and each is switched off or counted on purpose (verified against the
    fake endpoint with instructor 1.17 and litellm 1.99 / 1.109; tests/test_fake_endpoint.py pins it):

    1. the openai SDK retries connection errors, timeouts, 408/409/429 and 5xx twice by default (it ignores
       `Retry-After: 0`); litellm passes its `num_retries` on as the SDK's `max_retries`;
    2. litellm's own wrapper loop runs only when `num_retries` is truthy (then N retries give 2N + 1 requests),
       and a global `litellm.num_retries` overrides a per-call 0, so the global stays None;
    3. instructor's `max_retries` is its *re-ask* budget for invalid output; it never reaches litellm and
       instructor wraps HTTP errors in `InstructorRetryException` (the provider error is its `__cause__`).

    So every call passes `num_retries=0` (exactly one HTTP request), transport faults are retried here by
    tenacity (`transport_attempts`, exponential backoff with jitter, each retry counted in the usage), and
    invalid output is re-asked by instructor (`reasks`, in the judge signature, not in the cache key: the budget
    decides whether a decision fails, never what a cached answer is).

    The two budgets are set so that a server failing a third of its requests costs nothing (docs/robustness.md):
    at an independent 1/3 fault rate a decision fails with probability 3^-10 (transport) or 3^-5 (re-asks), and a
    run against such a server writes what an undisturbed run writes (tests/test_failures_and_recovery.py).
    """

    transport_attempts: int = 10      # 1 call + 9 retries on transient faults
    reasks: int = 4                   # instructor re-asks on invalid output
    wait_multiplier: float = 0.5      # seconds; tests shrink it
    wait_max: float = 30.0
    # Transport failures in a row (rate limits aside), across all decisions, with no answer between, after which
    # the server is given up on: the decisions not yet asked are recorded failed (not cached) and the run exits 5.
    # At a random 1/3 fault rate a row of 16 has probability 3^-16 per request, so a flaky server is not given up on.
    give_up_after: int = 16

    RULES: ClassVar[dict[str, Rule]] = {
        "transport_attempts": Number(Bounds(1, 1000), integer=True), "reasks": Number(Bounds(0, 100), integer=True),
        "wait_multiplier": Number(Bounds(0, 3600)), "wait_max": Number(Bounds(0, 86_400)),
        "give_up_after": Number(COUNT, integer=True),
    }

    def __post_init__(self) -> None:
        check_rules(self, self.RULES)


@dataclass(frozen=True)
class PassagePolicy:
    """How much of a long document the judge sees (judge.judging.passages cuts it into the closest passages)."""

    max_chars: int = 6000
    window_chars: int = 800
    # None: no limit. Not in the tag: it refuses documents, it never changes what the judge is shown.
    max_doc_bytes: int | None = None

    RULES: ClassVar[dict[str, Rule]] = {
        "max_chars": Number(CHARACTERS, integer=True), "window_chars": Number(CHARACTERS, integer=True),
        "max_doc_bytes": Number(DOC_BYTES, integer=True, optional=True),
    }

    def __post_init__(self) -> None:
        check_rules(self, self.RULES)

    @property
    def tag(self) -> str:
        return f"passages(max={self.max_chars},window={self.window_chars})"


@dataclass(frozen=True)
class DecisionThreshold:
    """Keep `verdict` for `decision` only when the judge's confidence in it is at least `threshold`; below, the
    decision flips to the other verdict (fitted by `argue-judge calibrate --fit-threshold`)."""

    decision: str
    verdict: bool
    threshold: float


@dataclass(frozen=True)
class Thresholds:
    """The decision thresholds of one thresholds file (judge.judging.thresholds reads and writes it). `digest` hashes
    the file's content and names it in the judge signature."""

    rules: tuple[DecisionThreshold, ...]
    digest: str

    def rule(self, decision: str) -> DecisionThreshold | None:
        return next((r for r in self.rules if r.decision == decision), None)


class DefaultThresholds:
    """The marker for "the decision thresholds this judge gets by default": the shipped rules for the embedded judge
    with the shipped prompts, none for any other judge. `judge.judging.thresholds.choose_thresholds` is the one
    place that decides; every entry point (eval, calibrate, the Python API, the adapters) resolves the marker
    through it before judging, so "the judge I calibrate" and "the judge I run" are the same judge."""

    def __repr__(self) -> str:
        return "DEFAULT_THRESHOLDS"


DEFAULT_THRESHOLDS = DefaultThresholds()


@dataclass(frozen=True)
class JudgeSettings:
    """Judging choices that change outcomes (all in the signature)."""

    policy: CitationPolicy = "all"
    truncate: bool = True
    passages: PassagePolicy = PassagePolicy()
    prompts_dir: Path | None = None
    on_injection: InjectionPolicy = "quarantine"
    # None: no thresholds (the model's own verdicts); DEFAULT_THRESHOLDS: resolved by choose_thresholds.
    thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS
    # Which detector stack flags and withholds text (INJECTION_DETECTORS). Not in the cache key: what the model is
    # shown, after the quarantine, is what the cache keys on.
    injection_detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR

    RULES: ClassVar[dict[str, Rule]] = {
        "policy": OneOf(CITATION_POLICIES), "truncate": Flag(), "passages": InstanceOf((PassagePolicy,)),
        "prompts_dir": InstanceOf((Path,), optional=True), "on_injection": OneOf(INJECTION_POLICIES),
        "thresholds": InstanceOf((Thresholds, DefaultThresholds), optional=True),
        "injection_detector": OneOf(INJECTION_DETECTORS),
    }

    def __post_init__(self) -> None:
        if isinstance(self.prompts_dir, str):  # a notebook writes a path as a string
            object.__setattr__(self, "prompts_dir", Path(self.prompts_dir))
        check_rules(self, self.RULES)

    @property
    def withholds(self) -> bool:
        """Whether the model is shown text with its flagged (and foreign-script) pieces withheld
        (judge.defence.quarantine)."""
        return self.on_injection != "flag"


@dataclass(frozen=True)
class HumanSample:
    """How the human sample behind prediction-powered estimates was drawn, and the level of their intervals
    (docs/ppi.md). Both describe the sample: with none (`given=False`) a value other than the default could not
    take effect, so it is refused rather than ignored; the message names the argument and the option alike."""

    sample: SampleDesign = "reports"
    confidence: float = 0.95
    given: bool = True          # whether there is a human sample (human=, --human) to describe

    RULES: ClassVar[dict[str, Rule]] = {"sample": OneOf(SAMPLE_DESIGNS), "confidence": Number(CONFIDENCE),
                                        "given": Flag()}

    def __post_init__(self) -> None:
        check_rules(self, self.RULES)
        if self.given:
            return
        for name in ("sample", "confidence"):
            default = next(f.default for f in fields(self) if f.name == name)
            if getattr(self, name) != default:
                raise SettingError(f"{name}={getattr(self, name)!r} (--{name}) describes the human sample: give "
                                   "human= too (--human FILE), or leave it at its default")

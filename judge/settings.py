"""Every setting that can change a verdict or a score, frozen, in one place.

Signatures (judge.judging.signature), the decision cache key (judge.llm) and the library path
(judge.run.evaluate) all read these objects, so a setting cannot reach a number without also reaching the
signature. This module imports nothing from the rest of the package except the label vocabulary, so `llm/` may
depend on it.
"""

from __future__ import annotations

import functools
import math
import types
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, Field, Strict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from judge.errors import SettingError
from judge.labels import CitationPolicy, SampleDesign

T = TypeVar("T")

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
# How hard a reasoning judge thinks before it answers (litellm's `reasoning_effort`: OpenAI's effort, Anthropic's and
# Gemini's thinking budgets). judge.llm.judges says which judges take it.
ReasoningEffort = Literal["low", "medium", "high"]
REASONING_EFFORTS: tuple[ReasoningEffort, ...] = get_args(ReasoningEffort)


# The rules of every setting are declared once, as the types of the settings' fields (pydantic validates them when
# an object is built; `settings_class` turns a refusal into one line naming the argument). The CLI reads the same
# declarations for its options' ranges and choices (`bounds_of`, `choices_of`; judge.cli.options), so a new setting
# cannot be checked on one path and not the other (tests/test_numeric_options.py walks the CLI and the API).

@dataclass(frozen=True)
class Bounds:
    """The declared range of a number: `nan`, `inf` and a value outside it are refused. Upper bounds are far beyond
    any sensible setting; they exist so that a typo (an extra 000) is refused at once instead of allocating
    terabytes or waiting for years. Used as metadata of a field's type (`Annotated[int, ..., COUNT]`)."""

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

    def constraint(self) -> Any:
        """The range as pydantic's constraints on a field."""
        low = {"gt": self.low} if self.low_open else {"ge": self.low}
        high = {"lt": self.high} if self.high_open else {"le": self.high}
        return Field(**low, **high, allow_inf_nan=False)

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

# The declared kinds of setting. Strict: `True` is not a number, "3" is not 3 and 1.5 is not a whole number.
Fraction = Annotated[float, Strict(), FRACTION.constraint(), FRACTION]
Seed = Annotated[int, Strict(), SEED.constraint(), SEED]
Count = Annotated[int, Strict(), COUNT.constraint(), COUNT]
Usd = Annotated[float, Strict(), USD.constraint(), USD]
Characters = Annotated[int, Strict(), CHARACTERS.constraint(), CHARACTERS]
Seconds = Annotated[float, Strict(), SECONDS.constraint(), SECONDS]
Concurrency = Annotated[int, Strict(), CONCURRENCY.constraint(), CONCURRENCY]
Workers = Annotated[int, Strict(), WORKERS.constraint(), WORKERS]
Threads = Annotated[int, Strict(), THREADS.constraint(), THREADS]
Temperature = Annotated[float, Strict(), TEMPERATURE.constraint(), TEMPERATURE]
DocBytes = Annotated[int, Strict(), DOC_BYTES.constraint(), DOC_BYTES]
Bootstrap = Annotated[int, Strict(), BOOTSTRAP.constraint(), BOOTSTRAP]
Confidence = Annotated[float, Strict(), CONFIDENCE.constraint(), CONFIDENCE]
Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]

# Settings objects hold other settings objects and a few plain types (paths, thresholds, shards).
_CONFIG = ConfigDict(arbitrary_types_allowed=True, extra="forbid")  # an unknown argument is an error


def settings_class(cls: type[T]) -> type[T]:
    """A frozen pydantic dataclass whose refusals are one line naming the argument: SettingError (a ValueError) for
    a value out of its range or choices, TypeError for a value of the wrong kind. `dataclasses.replace` builds a
    new object and so checks again."""
    checked = pydantic_dataclass(frozen=True, config=_CONFIG)(cls)
    validate = checked.__init__

    @functools.wraps(validate)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            validate(self, *args, **kwargs)
        except ValidationError as exc:
            raise refusal(exc, checked) from None

    checked.__init__ = __init__  # type: ignore[method-assign]
    return checked


def check(argument: str, value: Any, kind: Any) -> None:
    """Check one argument against a declared kind (`check("policy", policy, CitationPolicy)`), with the one-line
    refusal of a settings object's field."""
    try:
        _adapter(kind).validate_python(value)
    except ValidationError as exc:
        raise refusal(exc, None, argument=argument, kind=kind) from None


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind, config=_CONFIG)


def refusal(exc: ValidationError, owner: type | None, *, argument: str | None = None, kind: Any = None
            ) -> Exception:
    """The first error of `exc` as one line: `concurrency=0 is not a number in [1, 1024]`, `policy='most': choose
    one of all, any, ...`, `seed must be a whole number or None, not str '3'`."""
    error = exc.errors()[0]
    raised = error.get("ctx", {}).get("error")
    if isinstance(raised, Exception) and not error["loc"]:  # a check of the object's own (__post_init__), as raised
        return raised
    location = [str(part) for part in error["loc"]]
    if owner is not None and error["loc"] and isinstance(error["loc"][0], int):  # an argument given by position
        location[0] = fields(owner)[error["loc"][0]].name
    name = argument or (location[0] if location else "value")
    if owner is not None and location:
        kind = _field_types(owner).get(location[0], kind)
    value = error.get("input")
    if error["type"] in ("unexpected_keyword_argument", "extra_forbidden", "unexpected_positional_argument"):
        return TypeError(f"unknown argument {name!r}" + (f" of {owner.__name__}" if owner is not None else ""))
    bounds, choices = _declared(kind)
    if error["type"] in _RANGE_ERRORS and bounds is not None:
        return SettingError(f"{name}={value!r} is not {bounds}")
    if error["type"] == "literal_error" and choices:
        return SettingError(f"{name}={value!r}: choose one of {', '.join(map(str, choices))}")
    if error["type"] in _RANGE_ERRORS or error["type"] == "value_error":
        return SettingError(f"{name}={value!r}: {error['msg']}")
    return TypeError(f"{name} must be {_described(kind)}, not {type(value).__name__} {value!r:.60}")


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"}


@functools.cache
def _field_types(owner: type) -> dict[str, Any]:
    return get_type_hints(owner, include_extras=True)


def _declared(kind: Any) -> tuple[Bounds | None, tuple[Any, ...]]:
    """The range (Bounds metadata) and the choices (a Literal's values) a declared kind carries, looking through
    Optional and Annotated."""
    if get_origin(kind) is Annotated:
        base, *metadata = get_args(kind)
        bounds = next((m for m in metadata if isinstance(m, Bounds)), None)
        return (bounds, ()) if bounds is not None else _declared(base)
    if get_origin(kind) is Literal:
        return None, get_args(kind)
    if get_origin(kind) in (Union, types.UnionType):
        for member in get_args(kind):
            found = _declared(member)
            if found != (None, ()):
                return found
    return None, ()


def _described(kind: Any) -> str:
    """What a kind takes, in words."""
    if get_origin(kind) is Annotated:
        return _described(get_args(kind)[0])
    if get_origin(kind) in (Union, types.UnionType):
        return " or ".join(_described(member) for member in get_args(kind))
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(map(repr, get_args(kind)))
    return {int: "a whole number", float: "a number", bool: "True or False", str: "a string",
            type(None): "None", Path: "a path (str or Path)"}.get(kind, getattr(kind, "__name__", str(kind)))


def bounds_of(settings: type, name: str) -> Bounds:
    """The declared range of a numeric setting (what the CLI prints in --help and checks)."""
    bounds, _ = _declared(_field_types(settings)[name])
    if bounds is None:
        raise TypeError(f"{settings.__name__}.{name} is not a numeric setting")
    return bounds


def choices_of(settings: type, name: str) -> tuple[str, ...]:
    """The names a setting takes (what the CLI offers and checks)."""
    _, choices = _declared(_field_types(settings)[name])
    if not choices:
        raise TypeError(f"{settings.__name__}.{name} is not a choice")
    return choices


def check_field(settings: type, name: str, value: Any) -> None:
    """Check one argument against the declared kind of a settings object's field of the same name (before the
    object is built: e.g. before slow inputs are read)."""
    check(name, value, _field_types(settings)[name])


def bounds_in(kind: Any) -> Bounds:
    """The declared range of a numeric kind (an argument declared outside a settings object)."""
    bounds, _ = _declared(kind)
    if bounds is None:
        raise TypeError(f"{kind} declares no range")
    return bounds


@settings_class
class ModelSettings:
    """Everything about the model that can change an answer (api_base and api_key cannot, so they are not keyed)."""

    model: Text
    api_base: Text | None = None
    api_key: Text | None = field(default=None, repr=False)
    temperature: Temperature = 0.0
    seed: Seed | None = 0
    max_tokens: Count = 512
    # Seconds per HTTP attempt (--timeout): a server that accepts the connection and never answers costs at most
    # timeout x transport attempts per decision. Not in the cache key: it cannot change an answer, only lose one.
    timeout: Seconds = 120.0
    # Several servers of this one model (--api-base given more than once): litellm's Router spreads the calls
    # over them and fails over when one dies. Empty: `api_base` alone. Not keyed, like api_base.
    api_bases: tuple[Text, ...] = ()
    # A litellm Router config (YAML or JSON, --router): its deployments of `model` serve the run.
    router_config: Path | None = None
    # Ask for token log-probabilities (a decision's confidence)? None: only of the embedded judge, the one
    # provider known to return them; hosted providers opt in (not every one accepts the parameter).
    # `judge.llm.logprob.asks_logprobs` resolves it. Not in `sampling()`: the answer does not depend on it.
    logprobs: Flag | None = None
    # llama.cpp threads of the embedded judge (--threads). None: as many as the cores free when the model loads.
    # Not keyed: each thread computes its own rows of every product, so the count changes speed, not answers.
    threads: Threads | None = None
    # llama.cpp CPU kernels of the embedded judge (--kernels auto|safe|fast, judge.llm.embedded.kernels). Not keyed: the
    # paths round differently, but a rerun replays cached answers whichever path made them; run-summary.json
    # records the path a run used.
    kernels: Kernels = "auto"
    # A reasoning judge's effort (--reasoning-effort). None: the model's own default, and no field in the signature
    # or the cache key. Keyed and in the signature when set: it changes answers.
    reasoning_effort: ReasoningEffort | None = None
    # Keep the judge's reasoning (a `<think>` block, `reasoning_content`) in each decision's record
    # (--keep-reasoning). Never parsed as the answer either way; not keyed: it changes no answer.
    keep_reasoning: Flag = False

    def __post_init__(self) -> None:
        if not self.model:
            raise SettingError("model must name a model (a litellm model id such as openai/gpt-4o-mini)")

    @property
    def routed(self) -> bool:
        """Whether calls go through litellm's Router (several servers) rather than straight to litellm."""
        return len(self.api_bases) > 1 or self.router_config is not None

    def sampling(self) -> dict[str, Any]:
        """What each call sends that changes its answer, and so the cache key's sampling part; the effort only when
        set, so that keys made without one stay as they were."""
        effort = {"reasoning_effort": self.reasoning_effort} if self.reasoning_effort is not None else {}
        return {"temperature": self.temperature, "seed": self.seed, "max_tokens": self.max_tokens, **effort}


_ATTEMPTS = Bounds(1, 1000)
_REASKS = Bounds(0, 100)
_WAIT = Bounds(0, 3600)
_WAIT_MAX = Bounds(0, 86_400)


@settings_class
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

    transport_attempts: Annotated[int, Strict(), _ATTEMPTS.constraint(), _ATTEMPTS] = 10  # 1 call + 9 retries
    reasks: Annotated[int, Strict(), _REASKS.constraint(), _REASKS] = 4     # instructor re-asks on invalid output
    wait_multiplier: Annotated[float, Strict(), _WAIT.constraint(), _WAIT] = 0.5   # seconds; tests shrink it
    wait_max: Annotated[float, Strict(), _WAIT_MAX.constraint(), _WAIT_MAX] = 30.0
    # Transport failures in a row (rate limits aside), across all decisions, with no answer between, after which
    # the server is given up on: the decisions not yet asked are recorded failed (not cached) and the run exits 5.
    # At a random 1/3 fault rate a row of 16 has probability 3^-16 per request, so a flaky server is not given up on.
    give_up_after: Count = 16



@settings_class
class PassagePolicy:
    """How much of a long document the judge sees (judge.judging.passages cuts it into the closest passages)."""

    max_chars: Characters = 6000
    window_chars: Characters = 800
    # None: no limit. Not in the tag: it refuses documents, it never changes what the judge is shown.
    max_doc_bytes: DocBytes | None = None

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


@settings_class
class JudgeSettings:
    """Judging choices that change outcomes (all in the signature)."""

    policy: CitationPolicy = "all"
    truncate: Flag = True
    passages: PassagePolicy = PassagePolicy()
    prompts_dir: Path | None = None
    on_injection: InjectionPolicy = "quarantine"
    # None: no thresholds (the model's own verdicts); DEFAULT_THRESHOLDS: resolved by choose_thresholds.
    thresholds: Thresholds | DefaultThresholds | None = DEFAULT_THRESHOLDS
    # Which detector stack flags and withholds text (INJECTION_DETECTORS). Not in the cache key: what the model is
    # shown, after the quarantine, is what the cache keys on.
    injection_detector: InjectionDetector = DEFAULT_INJECTION_DETECTOR

    @property
    def withholds(self) -> bool:
        """Whether the model is shown text with its flagged (and foreign-script) pieces withheld
        (judge.defence.quarantine)."""
        return self.on_injection != "flag"


@settings_class
class HumanSample:
    """How the human sample behind prediction-powered estimates was drawn, and the level of their intervals
    (docs/ppi.md). Both describe the sample: with none (`given=False`) a value other than the default could not
    take effect, so it is refused rather than ignored; the message names the argument and the option alike."""

    sample: SampleDesign = "reports"
    confidence: Confidence = 0.95
    given: Flag = True          # whether there is a human sample (human=, --human) to describe

    def __post_init__(self) -> None:
        if self.given:
            return
        for name in ("sample", "confidence"):
            default = next(f.default for f in fields(self) if f.name == name)
            if getattr(self, name) != default:
                raise SettingError(f"{name}={getattr(self, name)!r} (--{name}) describes the human sample: give "
                                   "human= too (--human FILE), or leave it at its default")


class Sectioned:
    """A specification made of settings sections (`SECTIONS`: name → settings class), each field of which has one
    flat name, unique across sections (a settings object nested in a section, `NESTED`, lends its fields too):
    `of(**settings)` builds one from flat names, as a command line or a keyword call gives them; a section may be
    given whole by its own name (`judge=JudgeSettings(...)`), its fields then overriding it. Mixed into a
    `settings_class` (judge.run.spec.EvalSpec)."""

    SECTIONS: ClassVar[dict[str, type]] = {}
    NESTED: ClassVar[dict[type, dict[str, type]]] = {JudgeSettings: {"passages": PassagePolicy}}

    @classmethod
    def flat_names(cls) -> dict[str, tuple[str, ...]]:
        """Every flat name and the path of its field (`seed` → ("model", "seed"), `max_chars` → ("judge",
        "passages", "max_chars")). A new field that repeats a name fails here."""
        return _flat_names(cls)

    @classmethod
    def of(cls: type[S], **settings: Any) -> S:
        """The spec from flat names; an unknown name is a TypeError naming it."""
        return _made(cls, {}, settings)

    def but(self: S, **settings: Any) -> S:
        """This spec with the flat settings given changed (`spec.but(resume=True)`, `spec.but(model="openai/x")`:
        the model's name, its other settings kept), checked as `of` checks."""
        return _made(type(self), {name: getattr(self, name) for name in self.SECTIONS}, settings)


S = TypeVar("S", bound=Sectioned)


def _made(cls: type[S], bases: dict[str, Any], settings: dict[str, Any]) -> S:
    """A `cls` from `bases` (sections given whole) and flat settings over them: a section given whole by its name
    replaces its base; every other name is a field's."""
    names = _flat_names(cls)
    bases = dict(bases)
    given: dict[str, Any] = {}
    for name, value in settings.items():
        kind = cls.SECTIONS.get(name)
        if kind is not None and isinstance(value, kind):
            bases[name] = value
        elif kind is not None and name not in names:
            raise TypeError(f"{name} must be a {kind.__name__}, not {type(value).__name__} {value!r:.60}")
        elif name not in names:
            raise TypeError(f"unknown setting {name!r}: the settings are the fields of {cls.__name__}'s sections")
        else:
            given[name] = value
    return cls(**{name: _section(cls, kind, bases.get(name), given, (name,)) for name, kind in cls.SECTIONS.items()})


@functools.cache
def _flat_names(spec: type[Sectioned]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}

    def walk(kind: type, path: tuple[str, ...]) -> None:
        for field_ in fields(kind):
            nested = spec.NESTED.get(kind, {}).get(field_.name)
            if nested is not None:
                walk(nested, (*path, field_.name))
            elif field_.name in found:
                raise TypeError(f"{spec.__name__} field {field_.name!r} is both {found[field_.name]} and "
                                f"{(*path, field_.name)}")
            else:
                found[field_.name] = (*path, field_.name)

    for section, kind in spec.SECTIONS.items():
        walk(kind, (section,))
    return found


def _section(spec: type[Sectioned], kind: type, base: Any, settings: dict[str, Any], path: tuple[str, ...]) -> Any:
    """A `kind` object: `base` (or its defaults) with the flat settings of its fields over it."""
    changes: dict[str, Any] = {}
    for field_ in fields(kind):
        nested = spec.NESTED.get(kind, {}).get(field_.name)
        if nested is not None:
            if any(f.name in settings for f in fields(nested)):
                inner = getattr(base, field_.name) if base is not None else None
                changes[field_.name] = _section(spec, nested, inner, settings, (*path, field_.name))
        elif field_.name in settings and _flat_names(spec).get(field_.name) == (*path, field_.name):
            changes[field_.name] = settings[field_.name]
    if base is not None:
        return replace(base, **changes) if changes else base
    return kind(**changes)

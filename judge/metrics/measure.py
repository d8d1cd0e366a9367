"""What a measure is, and the one registry of measure names, aliases and families.

A measure is a small immutable object in the ir_measures style with ONE canonical name: `repr(m)` is the name,
`parse_measure(repr(m)) == m`, and the name is the metric column of the scores TSV. Parameters are written
`Name(key=value,...)`: keys sorted, no spaces, parameters at their default left out; values are `True`/`False`
or integers. Parsing never calls `eval`.

A name is `Name` or `provider.name`: measures defined by another tool under its own names carry that tool's
namespace (`autoargue.f1`, `autoargue.sentence_support`), as ir_measures names a measure by its provider, so two
different computations are never told apart by letter case alone (`F1` is ARGUE's, `autoargue.f1` Auto-ARGUE's).
The dot is safe in a TSV column and on a command line. An ALIAS is another spelling of one canonical measure
(`sentence_precision` -> `SentencePrecision`): the same computation, accepted when parsing, never written to an
output.

Each measure owns its per-report sufficient statistics, as sacreBLEU's metrics do, so run aggregates are derived
generically (judge.metrics.scoring):

* `Ratio`: statistics (numerator, denominator); the value is their quotient. Per-request rows carry the plain
  measure; a run's `all` rows carry the plain name as the MACRO mean of the per-report values (NaN skipped) and
  `micro=True` as the MICRO value, the summed numerators over the summed denominators.
* `Harmonic`: the harmonic mean of two ratio measures, per report and (micro) of their micro values.
* `Count`: statistics (count,); the `all` row is the sum over the run's reports.

Adding a measure is one class (with `stats`) and one `register` call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from judge.metrics.facts import ReportFacts

ParamValue = bool | int
Stats = tuple[float, ...]


class Measure:
    """A named metric. Equality and hashing go by the canonical name; calling returns a re-parametrized copy."""

    NAME: ClassVar[str] = ""
    PARAMS: ClassVar[dict[str, ParamValue]] = {}   # parameter -> default (its type is the value's type)
    RATIO: ClassVar[bool] = True                     # ratio measures aggregate micro + macro, counts sum
    SOURCE: ClassVar[str] = ""

    def __init__(self, **params: ParamValue):
        for key, value in params.items():
            if key not in self.PARAMS:
                allowed = ", ".join(sorted(self.PARAMS)) or "none"
                raise ValueError(f"measure {self.NAME} has no parameter {key!r} (parameters: {allowed})")
            default = self.PARAMS[key]
            if type(value) is not type(default):  # bool is an int subclass: compare exact types
                raise ValueError(f"measure {self.NAME}: parameter {key}={value!r} must be "
                                 f"{type(default).__name__}")
        self._params: dict[str, ParamValue] = {**self.PARAMS, **params}
        self._validate()
        shown = [f"{k}={self._params[k]!r}" for k in sorted(self._params) if self._params[k] != self.PARAMS[k]]
        self._name = f"{self.NAME}({','.join(shown)})" if shown else self.NAME

    def _validate(self) -> None:
        pass

    def __call__(self, **params: ParamValue) -> Measure:
        return type(self)(**{**self._params, **params})

    @property
    def name(self) -> str:
        return self._name

    @property
    def params(self) -> Mapping[str, ParamValue]:
        return dict(self._params)

    @property
    def micro(self) -> bool:
        return bool(self._params.get("micro", False))

    @property
    def weighted(self) -> bool:
        return bool(self._params.get("weighted", False))

    @property
    def aliases(self) -> tuple[str, ...]:
        """Alias names that parse to exactly this measure."""
        return tuple(sorted(a for a, m in ALIASES.items() if m == self))

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    # -- statistics ------------------------------------------------------------------------------------------

    def stats(self, facts: ReportFacts) -> Stats | None:
        """This measure's sufficient statistics for one report; None when undefined (left out of pooling)."""
        raise NotImplementedError(f"{type(self).__name__} must define stats()")

    def value(self, stats: Stats | None) -> float:
        raise NotImplementedError


class Ratio(Measure):
    """numerator / denominator. An empty denominator gives EMPTY (NaN unless the measure says otherwise)."""

    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}
    EMPTY: ClassVar[float] = math.nan
    # Said when a run's pooled denominator is empty and EMPTY is not NaN (a silent number needs a warning).
    EMPTY_NOTE: ClassVar[str] = ""

    def value(self, stats: Stats | None) -> float:
        if stats is None:
            return math.nan
        numerator, denominator = stats
        return numerator / denominator if denominator else self.EMPTY


class Count(Measure):
    """A per-report count; a run's `all` row is the sum."""

    RATIO = False

    def value(self, stats: Stats | None) -> float:
        return math.nan if stats is None else float(stats[0])


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean; 0.0 when both are 0; NaN when either is NaN."""
    if math.isnan(precision) or math.isnan(recall):
        return math.nan
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


class Harmonic(Measure):
    """The harmonic mean of two ratio measures (`parts`), per report and of their micro values."""

    PARAMS: ClassVar[dict[str, ParamValue]] = {"micro": False}

    def parts(self) -> tuple[Ratio, Ratio]:
        raise NotImplementedError(f"{type(self).__name__} must define parts()")

    def stats(self, facts: ReportFacts) -> Stats | None:
        return None   # no statistics of its own: it combines its parts' values

    def combine(self, first: float, second: float) -> float:
        return f1_score(first, second)


# ---------------------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------------------

MEASURES: list[Measure] = []             # every per-report measure, in output order
ALIASES: dict[str, Measure] = {}         # alias -> measure
_FAMILIES: dict[str, type[Measure]] = {}  # family name -> class (parse_measure builds parametrized variants)


def register(family: type[Measure], emit: Iterable[Measure] = (), aliases: Mapping[str, Measure] | None = None
             ) -> None:
    """Register a family once: its name parses; `emit` are the variants every report is scored on (in output
    order); `aliases` are further names that parse to a given measure."""
    if family.NAME in _FAMILIES and _FAMILIES[family.NAME] is not family:
        raise ValueError(f"measure family {family.NAME} registered twice")
    _FAMILIES[family.NAME] = family
    for measure in emit:
        if measure in MEASURES:
            raise ValueError(f"measure {measure} registered twice")
        MEASURES.append(measure)
    for alias, measure in (aliases or {}).items():
        if alias in ALIASES or alias in _FAMILIES:
            raise ValueError(f"alias {alias} is already a measure name")
        ALIASES[alias] = measure


def aggregate_measures() -> tuple[Measure, ...]:
    """Measures on a run's `all` rows: each ratio measure as macro (plain) then micro (micro=True); counts."""
    return tuple(variant for m in MEASURES for variant in ((m, m(micro=True)) if m.RATIO else (m,)))


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(rf"\s*({_IDENTIFIER}(?:\.{_IDENTIFIER})?)\s*(?:\((.*)\))?\s*", re.DOTALL)
_PARAM_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(True|False|true|false|[+-]?\d+)\s*")


def _unknown(name: str, why: str) -> ValueError:
    return ValueError(f"{why} in measure {name!r}; known measures: {', '.join(m.name for m in MEASURES)}; "
                      f"aliases: {', '.join(sorted(ALIASES))}; micro aggregates add micro=True to a ratio "
                      "measure, e.g. SentencePrecision(micro=True)")


def parse_measure(name: str | Measure) -> Measure:
    """Parse `Name` or `Name(key=value,...)` (values True/False or integers) without eval.

    Accepts canonical family names and aliases; anything else raises ValueError listing the known measures.
    """
    if isinstance(name, Measure):
        return name
    match = _NAME_RE.fullmatch(name)
    if not match:
        raise _unknown(name, "bad syntax")
    base, arg_text = match.group(1), match.group(2)
    params: dict[str, ParamValue] = {}
    if arg_text is not None and arg_text.strip():
        for part in arg_text.split(","):
            pm = _PARAM_RE.fullmatch(part)
            if not pm:
                raise _unknown(name, f"bad parameter {part.strip()!r} (expected key=True|False|<integer>)")
            key, raw = pm.group(1), pm.group(2)
            if key in params:
                raise _unknown(name, f"parameter {key!r} given twice")
            params[key] = raw.lower() == "true" if raw.lower() in ("true", "false") else int(raw)
    if base in ALIASES:
        alias = ALIASES[base]
        # An alias fixes every parameter it sets except `micro`, which selects the aggregate.
        clash = {k for k, v in params.items() if k != "micro" and k in alias.params and alias.params[k] != v}
        if clash:
            raise _unknown(name, f"alias {base} fixes {', '.join(sorted(clash))}")
        try:
            return alias(**params) if params else alias
        except ValueError as exc:
            raise _unknown(name, str(exc)) from None
    family = _FAMILIES.get(base)
    if family is None:
        raise _unknown(name, f"unknown name {base!r}")
    try:
        return family(**params)
    except (ValueError, TypeError) as exc:
        raise _unknown(name, str(exc)) from None

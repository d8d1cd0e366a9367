"""One rule for a statistic that cannot be computed on the data given: it is undefined, never a number.

- A computation that meets a degenerate sample (no items, one run, a constant column, every run tied, every item
  in one class) raises `Undefined(reason)`; `Reasons.value` turns that into None and keeps the reason.
- Every result model of the calibration statistics derives from `Statistics`: each of its `float | None` fields
  is a statistic, and a None (or a NaN or infinity, made None here) has its reason in `undefined[field]`. The
  calibration report prints such a cell as "undefined (reason)", and calibration.json carries the same reasons.
- A tie-broken or resampled figure is undefined where the thing it breaks ties of is: a random order of runs that
  are all tied is a coin toss, not an agreement of -0.01.

May import only the standard library and pydantic. It stands with the metrics so that what scoring computes (the
agreement among a panel's judges, judge.metrics.panel_agreement) follows the same rule;
judge.calibration.stats.undefined re-exports it.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, model_validator

# What a None read from a file written before reasons were recorded (or built by hand without one) says.
NOT_RECORDED = "reason not recorded"


class Undefined(Exception):
    """A statistic that cannot be computed on these data; `reason` says why in a few words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def require(condition: bool, reason: str) -> None:
    """Raise Undefined(reason) unless `condition` holds."""
    if not condition:
        raise Undefined(reason)


def finite(value: Any, reason: str) -> float:
    """`value` as a float, or Undefined(reason) when it is None, NaN or infinite."""
    if value is None or not math.isfinite(float(value)):
        raise Undefined(reason)
    return float(value)


class Reasons(dict[str, str]):
    """Why the statistics of one result are undefined, field name -> reason, filled as they are computed."""

    def value(self, name: str, compute: Callable[..., float], *args: Any, **kwargs: Any) -> float | None:
        """`compute(*args, **kwargs)`, or None with the reason kept under `name` when it raises Undefined."""
        try:
            return compute(*args, **kwargs)
        except Undefined as exc:
            self[name] = exc.reason
            return None

    def mark(self, reason: str, *names: str) -> None:
        """Each of `names` is undefined for `reason` (the first reason given for a name stays)."""
        for name in names:
            self.setdefault(name, reason)


def _is_statistic(annotation: Any) -> bool:
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return False
    return set(typing.get_args(annotation)) == {float, type(None)}


class Statistics(BaseModel):
    """A result whose `float | None` fields are statistics: None means undefined, and `undefined` says why."""

    undefined: dict[str, str] = Field(default_factory=dict, description="statistic -> why it is undefined (null)")

    @classmethod
    def statistic_fields(cls) -> tuple[str, ...]:
        return tuple(name for name, field in cls.model_fields.items() if _is_statistic(field.annotation))

    @model_validator(mode="after")
    def _undefined_has_a_reason(self) -> Statistics:
        reasons = dict(self.undefined)
        for name in self.statistic_fields():
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                object.__setattr__(self, name, None)
                value = None
            if value is None:
                reasons.setdefault(name, NOT_RECORDED)
            else:
                reasons.pop(name, None)  # a value is defined: no reason may claim otherwise
        object.__setattr__(self, "undefined", dict(sorted(reasons.items())))
        return self

    def why(self, name: str) -> str | None:
        """The reason statistic `name` is undefined, None when it has a value."""
        return self.undefined.get(name) if getattr(self, name) is None else None

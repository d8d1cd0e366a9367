"""The decisions the judge knows, in order, built from their modules' `DECISION` declarations.

The flowchart's registry (judge.judging.decisions.REGISTRY) is in the order of the chart's rows, which is the
signature's (`prompts:sc=...+an=...+...`); nugget creation's and pooling's (NUGGET_REGISTRY) is built the same
way from judge.chart.NUGGET_QUESTIONS. Names and abbreviations are unique. Every per-decision lookup outside the
decision modules goes through a `Registry` (or judge.judging.decisions.spec_of, across both), so a new decision is
its module plus its place in the flowchart.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from types import ModuleType

from judge.judging.decisions.spec import DecisionSpec


class Registry:
    """Decision specs by name, in the order given."""

    def __init__(self, specs: Iterable[DecisionSpec]):
        ordered = list(specs)
        for kind, values in (("name", [s.name for s in ordered]), ("signature abbreviation",
                                                                     [s.abbreviation for s in ordered])):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"two decisions share a {kind}: {', '.join(repeated)}")
        self._specs = {spec.name: spec for spec in ordered}

    @classmethod
    def of_modules(cls, modules: Iterable[ModuleType]) -> Registry:
        """The registry of these decision modules, each declaring its `DECISION`."""
        specs = []
        for module in modules:
            spec = getattr(module, "DECISION", None)
            if not isinstance(spec, DecisionSpec):
                raise TypeError(f"{module.__name__} declares no DECISION = DecisionSpec(...)")
            specs.append(spec)
        return cls(specs)

    @classmethod
    def of_package(cls, package: str, names: Iterable[str], *, flowchart: bool = True) -> Registry:
        """The registry of the decisions `names`, each the module `<package>.<name>` declaring a DECISION of
        that name (a module and its decision share their name, so the flowchart's names find the modules).
        `flowchart`: they are diamonds, each declaring how the walker fills its prompt (`prepare_for`); otherwise
        questions asked outside the flowchart (nugget creation and pooling), which declare none."""
        names = tuple(names)
        modules = []
        for name in names:
            try:
                module = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as missing:
                if missing.name != f"{package}.{name}":
                    raise  # the module exists but imports something missing: that error, as it is
                raise ModuleNotFoundError(f"the flowchart asks '{name}', but there is no decision module "
                                          f"{package}.{name}", name=missing.name) from None
            modules.append(module)
        registry = cls.of_modules(modules)
        for name, module, spec in zip(names, modules, registry, strict=True):
            if spec.name != name:
                raise ValueError(f"{module.__name__} declares the decision '{spec.name}', not '{name}': a decision's "
                                 "module is named after it")
            if spec.in_flowchart != flowchart:
                raise ValueError(f"{module.__name__}: " + (
                    "a diamond of the flowchart declares how the walker fills its prompt (prepare_for=...)" if flowchart
                    else "a question outside the flowchart declares no prepare_for: the walker never asks it"))
        return registry

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def __getitem__(self, name: str) -> DecisionSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise KeyError(f"unknown decision {name!r}; known: {', '.join(self._specs)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[DecisionSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def labels(self) -> dict[str, tuple[str, str]]:
        """Each decision's yes / no verdict words (calibration tables, thresholds files)."""
        return {spec.name: spec.labels for spec in self}

    def with_threshold(self) -> tuple[str, ...]:
        """The decisions whose verdict a decision threshold may flip."""
        return tuple(spec.name for spec in self if spec.takes_threshold)

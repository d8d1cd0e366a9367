"""MkDocs hook: the measure reference of docs/metrics.md, generated from the measure registry at build time.

As ir_measures generates its list of measures, the page is never written by hand: every measure registered in
judge.metrics (judge/metrics/measure.py's registry, filled by argue.py, autoargue.py and flagged.py) appears with its
canonical name, the variants every report is scored on, its aliases, how a run aggregates it, its source and its
docstring; then every other name the parser accepts (aliases: another spelling of one canonical measure). The
page holds the marker below where the reference goes; a page without it fails the build.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from generated_section import ROOT, checkout_first, insert_section

MARKER = "<!-- measure-reference -->"
PAGE = "metrics.md"


def _registry():
    checkout_first()
    from judge.metrics import ALIASES, MEASURES
    from judge.metrics.measure import Count, Harmonic

    return MEASURES, ALIASES, Count, Harmonic


def _paragraphs(doc: str) -> str:
    """A docstring as Markdown paragraphs: lines of one paragraph joined, so no line of it can start a heading."""
    return "\n\n".join(" ".join(line.strip() for line in block.splitlines()) for block in doc.split("\n\n")
                       if block.strip())


def _source_file(cls: type) -> str:
    return Path(inspect.getfile(cls)).resolve().relative_to(ROOT).as_posix()


def render() -> str:
    """The reference: one section per module of measures, one entry per measure family, in output order."""
    measures, aliases, count, harmonic = _registry()
    families: dict[type, list] = {}
    for measure in measures:
        families.setdefault(type(measure), []).append(measure)
    out: list[str] = []
    module = None
    for cls, variants in families.items():
        if cls.__module__ != module:
            module = cls.__module__
            intro = (inspect.getdoc(sys.modules[module]) or "").split("\n\n")[0]
            out += [f"## `{module}`", "", _paragraphs(intro), ""]
        kind = ("count: a run's `all` row is the sum over its reports" if issubclass(cls, count) else
                "harmonic mean of two ratio measures: macro over reports, micro of the parts' micro values"
                if issubclass(cls, harmonic) else
                "ratio: a run's `all` row is the macro mean over reports; `micro=True` the pooled ratio")
        names = {m.name for m in variants}
        family_aliases = sorted(a for a, m in aliases.items() if m.name in names or
                                any(m == v(micro=True) for v in variants if not issubclass(cls, count)))
        params = ", ".join(f"`{k}` (default `{v!r}`)" for k, v in cls.PARAMS.items()) or "none"
        out += [f"### `{cls.NAME}`", "",
                f"*{kind}.* Source: {cls.SOURCE or 'argue-judge'}. Defined in `{_source_file(cls)}`.", "",
                _paragraphs(inspect.getdoc(cls) or ""), "",
                f"- scored on every report as: {', '.join(f'`{m.name}`' for m in variants)}",
                f"- parameters: {params}"]
        if family_aliases:
            out.append(f"- aliases (parsed to the canonical name; outputs write the canonical name): "
                       f"{', '.join(f'`{a}`' for a in family_aliases)}")
        out.append("")
    return "\n".join(out + _other_names(aliases))


def _other_names(aliases) -> list[str]:
    """Every alias with the one canonical measure it stands for."""
    out = ["## Other names", "",
           "An alias is another spelling of ONE canonical measure: the same computation, accepted wherever a measure "
           "is named, never written to an output (the scores TSV and the leaderboard use the canonical name).", "",
           "| alias | canonical measure |", "| --- | --- |"]
    out += [f"| `{alias}` | `{measure.name}` |" for alias, measure in sorted(aliases.items())]
    return out + [""]


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (MkDocs' hook signature)
    return insert_section(markdown, page, PAGE, MARKER, "measure reference", render)

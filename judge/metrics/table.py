"""Scores as rows: what a notebook does with a result (records, a pandas frame, a leaderboard drawn in the cell).

`ScoreTable` is mixed into every result that holds `scores` and a `signature` (judge.run.outputs.Evaluation,
judge.api.ScoredJudgments). `measures` selects measures by name as ir_measures does (`["F1", "SentencePrecision",
"NuggetRecall(weighted=True)"]`, aliases too, parsed by judge.metrics.measure.parse_measure); None keeps every one.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from judge.formats.scores import ScoreRow, leaderboard
from judge.metrics.measure import MEASURES, Measure, aggregate_measures, parse_measure

# The leaderboard a result draws when no measures were chosen: the ARGUE headline measures.
HEADLINE = ("F1", "SentencePrecision", "NuggetRecall", "NuggetRecall(weighted=True)")
RECORD_FIELDS = ("run_id", "request_id", "measure", "value")


def select_measures(measures: Iterable[str | Measure] | str | Measure | None, argument: str = "measures"
                    ) -> tuple[str, ...] | None:
    """Canonical names of the chosen measures, each one a score computes (per report or on the `all` rows);
    ValueError naming `argument` otherwise. None: every measure."""
    if measures is None:
        return None
    if isinstance(measures, str | Measure):
        measures = [measures]
    if not isinstance(measures, Iterable):
        raise TypeError(f"{argument} must be measure names (a list of str such as ['F1']), "
                        f"not {type(measures).__name__}")
    computed = {m.name for m in MEASURES} | {m.name for m in aggregate_measures()}
    names: list[str] = []
    for given in measures:
        if not isinstance(given, str | Measure):
            raise TypeError(f"{argument}: {given!r} is not a measure name (a str such as 'F1')")
        try:
            name = parse_measure(given).name
        except ValueError as exc:
            raise ValueError(f"{argument}: {exc}") from None
        if name not in computed:
            raise ValueError(f"{argument}: {name} is not computed by scoring; choose among "
                             f"{', '.join(sorted(computed))}")
        if name not in names:
            names.append(name)
    if not names:
        raise ValueError(f"{argument}: choose at least one measure (None keeps them all)")
    return tuple(names)


class ScoreTable:
    """Rows of a result's scores: `to_records`, `to_pandas`, `leaderboard`, and the leaderboard as HTML in a
    notebook (`_repr_html_`). The class using it provides `scores` (judge.metrics.Scores), `signature` (with
    `.short()`) and `measures` (see select_measures)."""

    scores: Any
    signature: Any
    measures: tuple[str, ...] | None

    def _rows(self, aggregate: bool) -> Iterable[ScoreRow]:
        rows = self.scores.aggregate_rows() if aggregate else self.scores.iter_rows()
        keep = self.measures
        return rows if keep is None else (row for row in rows if row.metric in keep)

    def to_records(self, *, aggregate: bool = False) -> list[dict[str, Any]]:
        """One dict per score (run_id, request_id, measure, value), the rows of scores.tsv; `aggregate=True`:
        the `all` rows alone (request_id 'all')."""
        return [{"run_id": r.run_id, "request_id": r.request_id, "measure": r.metric, "value": r.value}
                for r in self._rows(aggregate)]

    def to_pandas(self, *, aggregate: bool = False) -> Any:
        """`to_records` as a pandas DataFrame (pandas is not a dependency: ImportError saying so when absent)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas (or use to_records())") from None
        return pandas.DataFrame.from_records(self.to_records(aggregate=aggregate), columns=list(RECORD_FIELDS))

    def aggregates(self) -> dict[str, dict[str, float]]:
        """Each run's `all` values by measure: {run_id: {measure: value}} (ir_measures' calc_aggregate, per run)."""
        table: dict[str, dict[str, float]] = {}
        for row in self._rows(aggregate=True):
            table.setdefault(row.run_id, {})[row.metric] = row.value
        return table

    def leaderboard(self, digits: int = 4) -> tuple[list[str], list[list[str]]]:
        """Header and body: one row per run, best first by the first measure (the chosen ones, else HEADLINE)."""
        columns: Sequence[str] = self.measures or HEADLINE
        return leaderboard(self._rows(aggregate=True) if self.measures else self.scores.aggregate_rows(),
                           list(columns), digits=digits)

    def _repr_html_(self) -> str:
        header, body = self.leaderboard()
        cells = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
        return (f"<table><thead><tr>{cells}</tr></thead><tbody>{rows}</tbody></table>"
                f"<p><code>{html.escape(self._signature_text())}</code></p>")

    def _signature_text(self) -> str:
        short = getattr(self.signature, "short", None)
        return short() if callable(short) else str(self.signature)


__all__ = ["HEADLINE", "RECORD_FIELDS", "ScoreTable", "select_measures"]

"""`--human` for `argue-judge eval` and `score`: prediction-powered estimates, written and printed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from judge.cli.render import SHORT_NAMES, console
from judge.judging.signature import ScoreSignature
from judge.metrics.argue import F1

if TYPE_CHECKING:  # the estimators import scipy (seconds): loaded only when --human asks for them
    from judge.metrics.corrected import CorrectedScores
    from judge.metrics.ppi import Interval


def show(corrected: CorrectedScores, signature: ScoreSignature, paths: list[Path]) -> None:
    """Print the estimates, their signature and the files written."""
    print_corrected(corrected)
    console.print(f"ppi signature: {signature.short()}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(p) for p in paths)}", highlight=False, soft_wrap=True)


def _interval(i: Interval, digits: int = 3) -> str:
    if math.isnan(i.value):
        return "–"
    bounds = "" if math.isnan(i.low) else f" [{i.low:.{digits}f}, {i.high:.{digits}f}]"
    return f"{i.value:.{digits}f}{bounds}"


# Below this many columns (an 80-column terminal, a log, a pipe) the table keeps what ranks the runs: the judge's
# value and the corrected one with its interval. Nine columns squeezed into 80 truncate every number to "0…".
FULL_TABLE_WIDTH = 120


def print_corrected(corrected: CorrectedScores) -> None:
    from judge.metrics.corrected import PPI_MEASURES

    level = f"{corrected.confidence:.0%}"
    full = console.width >= FULL_TABLE_WIDTH
    table = Table(title=f"Prediction-powered estimates ({level} intervals; sample: {corrected.design})",
                  title_justify="left")
    columns = ["run_id", "measure", "rank", "n/N", "judge", *(["human only"] if full else []), "PPI",
               *(["λ", "labels worth"] if full else [])]
    for name in columns:
        table.add_column(name, justify="left" if name in ("run_id", "measure") else "right",
                         no_wrap=name in ("run_id", "measure", "PPI"))
    for measure in PPI_MEASURES:
        for r in corrected.of_measure(measure):
            e = r.estimate
            worth = "–" if math.isnan(e.effective_labels) else "all" if e.effective_labels == math.inf \
                else f"{e.effective_labels:.1f}"
            cells = {"run_id": r.run_id, "measure": measure.name if full else SHORT_NAMES.get(measure.name,
                                                                                                measure.name),
                     "rank": "–" if r.rank is None else str(r.rank), "n/N": f"{e.labelled}/{e.units}",
                     "judge": "–" if math.isnan(e.judge_only) else f"{e.judge_only:.3f}",
                     "human only": _interval(e.human_only),
                     "PPI": _interval(e.ppi) if e.estimable else "not estimable",
                     "λ": "–" if math.isnan(e.lam) else f"{e.lam:.2f}", "labels worth": worth}
            table.add_row(*(cells[name] for name in columns))
        table.add_section()
    console.print(table)
    apart = corrected.distinguishable(F1)
    pairs = [p for p in corrected.pairs if p.measure == F1.name]
    console.print(f"F1: {len(apart)} of {len(pairs)} pairs of runs told apart at {level}"
                  + "".join(f"\n  {p.run_a} − {p.run_b}: {_interval(p.estimate.ppi)}" for p in apart),
                  highlight=False, soft_wrap=True)
    if not full:
        console.print("(P, R, wR, F1 as in the leaderboard; wF1: the F1 of P and wR. The human-only estimates, λ "
                      "and what the labels are worth are in ppi.tsv, and here in a terminal 120 columns wide.)",
                      highlight=False)
    for note in corrected.notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)

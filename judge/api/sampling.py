"""Which reports people should judge: `judge.sample` (argue-judge sample), the sample behind `human=` weighted by how
it was drawn (docs/ppi.md, "Choosing what to label")."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.api._inputs import JudgmentInputs, PathLike, _check_path, _judgment_records


@dataclass(frozen=True)
class DrawnSample:
    """The reports drawn for human judgment, each with its probability of being drawn (`rows`: run_id,
    request_id, probability, round, uncertainty), the file's `header` (kind, rounds, reports), and `path` when
    written. Give the file beside the human judgments (`human=[judged, path]`, `--human`) and the estimate is
    inverse-probability weighted."""

    header: dict[str, Any]
    rows: list[dict[str, Any]]
    path: Path | None = None
    notes: list[str] = field(default_factory=list)

    def to_records(self) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows]


def sample(judgments: JudgmentInputs, budget: int, *, seed: int = 0, min_probability: float | None = None,
           uniform: bool = False, previous: PathLike | None = None, out: PathLike | None = None) -> DrawnSample:
    """Draw `budget` reports for people to judge (new ones on a second round: `previous`, the first round's sample
    file). Each report's probability grows with the judge's doubt on it (1 - the confidence its model gave its
    verdicts; reports without any confidence get the mean), never below `min_probability` (default a quarter of
    budget / N); `uniform=True` draws every report with budget / N. `seed` fixes the draw. `out`: the sample file
    to write (JSON lines). Raises InputError on a budget below 2 or above the reports left, ValueError/TypeError
    on a wrong argument."""
    from judge.errors import InputError
    from judge.run.prediction_powered import draw_sample, write_sample

    if isinstance(budget, bool) or not isinstance(budget, int):
        raise TypeError(f"budget must be a whole number of reports, not {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, not {seed!r}")
    if min_probability is not None and not 0 < min_probability <= 1:
        raise ValueError(f"min_probability must be in (0, 1], not {min_probability}")
    _check_path("previous", previous)
    _check_path("out", out)
    records = _judgment_records("judgments", judgments)
    if not records:
        raise InputError("no judged report to sample from", "judgments")
    header, rows = draw_sample(records, budget, seed, min_probability, uniform, previous)
    notes = []
    if header["without_confidence"] and not uniform:
        share = header["without_confidence"]
        notes.append(f"{share} of {header['reports']} reports carry no confidence (no log-probabilities): they get "
                     "the mean doubt of the others" if share < header["reports"] else
                     "no report carries a confidence (no log-probabilities): the sample is uniform")
    path = write_sample(Path(out), header, rows) if out is not None else None
    return DrawnSample(header, rows, path, notes)

"""The scores TSV every scorer writes (ARGUE, Auto-ARGUE-compatible, EXAM, ROUGE, pa-BLEU ...), and leaderboards.

    run_id<TAB>request_id<TAB>metric<TAB>value

Per-request rows carry the request id; aggregates over a run use request_id `all`. A first line starting with
`#` holds the signature of the settings behind the numbers. Undefined values (an empty denominator) are `nan`.
Values are written at full precision (`repr` of the float, so reading the file back gives the same numbers);
leaderboards round for display only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from judge.errors import InputError
from judge.formats._jsonl import row_breaking, tsv_line
from judge.formats.atomic import atomic_path, write_text_atomic

ALL = "all"


@dataclass(frozen=True, order=True)
class ScoreRow:
    run_id: str
    request_id: str
    metric: str
    value: float


def format_value(value: float, digits: int | None = None) -> str:
    """Full precision by default (the scores TSV); `digits` rounds for display (leaderboards)."""
    if math.isnan(value):
        return "nan"
    return repr(float(value)) if digits is None else f"{value:.{digits}f}"


def write_scores(path: Path, rows: Iterable[ScoreRow], signature: str | None = None) -> None:
    """One line per row, written as the rows come (a TREC-size table is never held as one text), to a temporary
    file that replaces `path` when complete. A table with neither signature nor rows is a single newline."""
    with atomic_path(path) as temp, temp.open("w", encoding="utf-8") as out:
        written = False
        if signature:
            out.write(f"# {signature}\n")
            written = True
        for r in rows:
            out.write(tsv_row((r.run_id, r.request_id, r.metric, format_value(r.value)), path))
            written = True
        if not written:
            out.write("\n")


def tsv_row(fields: Iterable[str], path: Path) -> str:
    """One line of a TSV output. The readers refuse ids with a tab or a line break where they read them (naming
    file:line); this is the last guard for rows built in memory, so no table is ever written with a row of the
    wrong shape (the output is left as it was)."""
    fields = list(fields)
    line = tsv_line(fields)
    if line is None:
        value = next(v for v in fields if row_breaking(v) is not None)
        raise InputError(f"cannot write the field {value!r}: it contains a tab or a line break, which would "
                         "break the table's rows; remove it from the run or request id", path)
    return line


def read_scores(path: Path) -> list[ScoreRow]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 4:
            raise InputError("expected 4 tab-separated fields: run_id, request_id, metric, value", path, number)
        try:
            value = float(parts[3])
        except ValueError:
            raise InputError(f"value {parts[3]!r} is not a number", path, number) from None
        rows.append(ScoreRow(parts[0], parts[1], parts[2], value))
    return rows


def run_aggregates(rows: Iterable[ScoreRow]) -> dict[str, dict[str, float]]:
    """{run_id: {metric: value}} from the `all` rows."""
    table: dict[str, dict[str, float]] = {}
    for row in rows:
        if row.request_id == ALL:
            table.setdefault(row.run_id, {})[row.metric] = row.value
    return table


def per_request(rows: Iterable[ScoreRow], metric: str) -> dict[str, dict[str, float]]:
    """{run_id: {request_id: value}} for one metric, aggregates left out."""
    table: dict[str, dict[str, float]] = {}
    for row in rows:
        if row.metric == metric and row.request_id != ALL:
            table.setdefault(row.run_id, {})[row.request_id] = row.value
    return table


def leaderboard(rows: Iterable[ScoreRow], metrics: Sequence[str], sort_by: str | None = None, digits: int = 4
                ) -> tuple[list[str], list[list[str]]]:
    """Header and body of a leaderboard: one row per run, best first by `sort_by` (default: first metric),
    values rounded to `digits` decimals for display."""
    table = run_aggregates(rows)
    key = sort_by or metrics[0]

    def rank_key(run: str) -> tuple[float, str]:
        value = table[run].get(key, math.nan)
        return (-value if not math.isnan(value) else math.inf, run)

    body = [[run] + [format_value(table[run].get(m, math.nan), digits) for m in metrics]
            for run in sorted(table, key=rank_key)]
    return ["run_id", *metrics], body


def write_leaderboard(path: Path, header: list[str], body: list[list[str]], signature: str | None = None) -> None:
    lines = [f"# {signature}\n"] if signature else []
    lines += [tsv_row(header, path)] + [tsv_row(row, path) for row in body]
    write_text_atomic(path, "".join(lines))

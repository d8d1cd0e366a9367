"""Printing results: leaderboards as rich tables, signatures, usage. Formatting only."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from judge.chart import OUTCOME_VALUE, Outcome, Value
from judge.cli.errors import TolerantConsole
from judge.diagnostics import Diagnostics
from judge.formats.scores import ALL, ScoreRow, leaderboard

if TYPE_CHECKING:  # the type alone: the client imports litellm, which `score` and `merge` must not pay for
    from judge.llm.client import Usage

# Markup off: run ids, paths and warnings are user text and may contain [brackets].
console = TolerantConsole(markup=False)

SHORT_NAMES = {
    "SentencePrecision": "P", "NuggetRecall": "R", "NuggetRecall(weighted=True)": "wR", "F1": "F1",
    "F1(weighted=True)": "wF1",
    **{f"OutcomeCount(outcome={int(n)})": f"#{int(n)}" for n in Outcome}, "Truncated": "cut", "Failed": "fail",
    "Flagged": "flag",  # sentences that address the judge (judge.defence.injection): gaming, shown even where it fails
}


SCORE_COLUMNS = ("SentencePrecision", "NuggetRecall", "NuggetRecall(weighted=True)", "F1", "Truncated", "Failed",
                 "Flagged")
OUTCOME_COLUMNS = tuple(f"OutcomeCount(outcome={int(n)})" for n in Outcome)
# "+: #3 #8   -: #1 #5 #7   0: #2 #4 #6", from the flowchart's table
OUTCOME_VALUES = "   ".join(f"{v.value}: " + " ".join(f"#{int(o)}" for o in Outcome if OUTCOME_VALUE[o] is v)
                            for v in (Value.POSITIVE, Value.NEGATIVE, Value.NEUTRAL))


def print_argue_leaderboard(rows: list[ScoreRow]) -> None:
    """Scores first, then why: the outcome histogram (+ #3 #8, - #1 #5 #7, 0 #2 #4 #6) per run."""
    print_leaderboard(rows, SCORE_COLUMNS, "ARGUE leaderboard (macro over requests, best F1 first)", sort_by="F1")
    print_leaderboard(rows, OUTCOME_COLUMNS, f"Outcomes per run ({OUTCOME_VALUES})", sort_by="F1")


def print_flags(rows: list[ScoreRow], judgments: str) -> None:
    """One line per run whose sentences address the judge (or cite documents that do), pointing to `judgments`,
    the file(s) that hold each flag and its rule; nothing when none do."""
    counts: dict[str, dict[str, float]] = {}
    for row in rows:
        if row.request_id == ALL and row.metric in ("Flagged", "Flagged(documents=True)"):
            counts.setdefault(row.run_id, {})[row.metric] = row.value
    for run_id, found in sorted(counts.items()):
        own, cited = int(found.get("Flagged", 0)), int(found.get("Flagged(documents=True)", 0))
        if own or cited:
            console.print(Text.assemble(("flagged: ", "yellow"), f"run {run_id}: {own} sentence(s) address the "
                                        f"judge, {cited} cite a document that does (see {judgments})"),
                          highlight=False, soft_wrap=True)


def print_leaderboard(rows: list[ScoreRow], measures: tuple[str, ...] | list[str], title: str,
                      sort_by: str | None = None) -> None:
    header, body = leaderboard(rows, list(measures), sort_by=sort_by)
    table = Table(title=title, title_justify="left")
    for name in header:
        if name == "run_id":
            table.add_column(name, no_wrap=True)
        else:
            table.add_column(SHORT_NAMES.get(name, name), justify="right")
    for row in body:
        table.add_row(*(_tidy(v) for v in row))
    console.print(table)


def _tidy(value: str) -> str:
    # Counts print as integers; rates keep four decimals.
    if value.endswith(".0000"):
        return value[:-5]
    return value


def print_usage(usage: Usage, seconds: float) -> None:
    cost = f"${usage.cost:.4f}" + ("" if usage.cost_known else " (some prices unknown)")
    cached = f" ({usage.cached_prompt_tokens} cached)" if usage.cached_prompt_tokens else ""
    reasoning = (f" ({usage.reasoning_tokens} reasoning, ${usage.reasoning_cost:.4f})"
                 if usage.reasoning_tokens else "")
    console.print(
        f"decisions: {usage.decisions} ({usage.cache_hits} from cache, {usage.model_calls} model calls, "
        f"{usage.transport_retries} retries, {usage.failures} failed"
        f"{f', {usage.unasked} not asked' if usage.unasked else ''})  tokens: {usage.prompt_tokens} in{cached} / "
        f"{usage.completion_tokens} out{reasoning}  cost: {cost}  time: {seconds:.1f}s", highlight=False)


def print_panel(panel: dict | None) -> None:
    """The agreement among a panel's judges per decision (run-summary.json's `run.panel`,
    judge.run.outputs.panel_summary); nothing for a single judge."""
    if not panel:
        return
    table = Table(title=f"agreement among the judges of {panel['judge']}")
    for column in ("decision", "decisions", "split", "Fleiss' κ", "Krippendorff's α", "Cohen's κ per pair"):
        table.add_column(column)

    def shown(value: float | None, undefined: dict, name: str) -> str:
        return f"{value:.3f}" if value is not None else f"undefined ({undefined.get(name, '')})"

    for decision, agreement in panel["agreement"].items():
        pairs = "; ".join(f"{p['judges'][0]} / {p['judges'][1]}: {shown(p['kappa'], p['undefined'], 'kappa')}"
                          for p in agreement["pairwise"])
        table.add_row(decision, str(agreement["decisions"]), str(agreement["split"]),
                      shown(agreement["fleiss_kappa"], agreement["undefined"], "fleiss_kappa"),
                      shown(agreement["krippendorff_alpha"], agreement["undefined"], "krippendorff_alpha"), pairs)
    console.print(table)


def print_diagnostics(diagnostics: Diagnostics, summary: Path | None, limit: int = 20) -> None:
    """Every kind of diagnostic of a run, once, at the end: notes first (what was done), then warnings. A kind
    said many times (one warning per empty report) is its first message and a count, pointing to `summary`, the
    file written with every message; with no such file, every message is printed."""
    if summary is None:
        ordered = [(item, 1) for item in sorted(diagnostics, key=lambda item: item.level != "note")]
        limit = len(ordered)
    else:
        ordered = sorted(diagnostics.collapsed(), key=lambda pair: pair[0].level != "note")
    for item, count in ordered[:limit]:
        style = "cyan" if item.level == "note" else "yellow"
        more = f" (and {count - 1:,} more like it, see {summary})" if count > 1 else ""
        console.print(Text.assemble((f"{item.level}: ", style), item.message, more), highlight=False,
                      soft_wrap=True)
    if len(ordered) > limit:
        console.print(Text(f"... and {len(ordered) - limit} more (see {summary})", style="yellow"))

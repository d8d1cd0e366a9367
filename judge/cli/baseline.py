"""`argue-judge baseline ...`: cheap automatic baselines on the same reports (EXAM, ROUGE, pa-BLEU,
pa-METEOR).

Each command reads the inputs, calls one library function in judge.baselines, writes DIR/<name>.scores.tsv
(with a signature line listing every setting) and prints the leaderboard. Bad input or a missing model /
extra: one line on stderr and exit code 2 (input) or 3 (configuration), as in every argue-judge command.
Undefined values (NaN) come with a warning on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from judge.api import BASELINE_RULES, BaselineScores, baseline
from judge.cli import options
from judge.cli.errors import user_errors
from judge.diagnostics import Diagnostics
from judge.settings import bounds_in

app = typer.Typer(
    help="Automatic baselines (EXAM, ROUGE, pa-BLEU, pa-METEOR) that score the same reports and write the "
         "same scores TSV, for correlating their leaderboards with the human one.",
    no_args_is_help=True,
)

T = TypeVar("T")

Reports = Annotated[list[Path], typer.Argument(help="Report files (JSONL) or directories of *.jsonl.",
                                               show_default=False)]
Gold = Annotated[list[Path], typer.Option("--gold", "-g", help="Gold (reference) report files or "
                                          "directories; repeat the option for several.", show_default=False)]
Out = Annotated[Path, typer.Option("--out", "-o", help="Output directory for <name>.scores.tsv.",
                                   show_default=False, callback=options.under_folders)]
Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")]


class MultiRef(str, Enum):
    max = "max"
    mean = "mean"


class MatchMode(str, Enum):
    f1 = "f1"
    exact = "exact"


class Smoothing(str, Enum):
    exp = "exp"
    floor = "floor"
    add_k = "add-k"
    none = "none"


@contextmanager
def _known_errors(debug: bool) -> Iterator[None]:
    """Known errors through the core CLI's rule (judge.cli.errors: InputError -> one line on stderr, exit 2;
    ConfigurationError -> exit 3); BaselineWarnings are collected and printed once, as `warning: ...` lines on
    stderr, when the command succeeds."""
    from judge.baselines import BaselineWarning

    diagnostics = Diagnostics()
    with user_errors(debug):
        with diagnostics.capture_warnings(BaselineWarning, "baselines"):
            yield
        for message in diagnostics.messages():
            typer.echo(f"warning: {message}", err=True)


def _finish(scored: BaselineScores, out: Path) -> None:
    """Print the leaderboard of a baseline whose NAME.scores.tsv is written."""
    from judge.cli.render import console, print_leaderboard

    print_leaderboard(scored.rows, list(scored.measures or [scored.headline]), f"{scored.name} leaderboard")
    console.print(f"wrote {out / f'{scored.name}.scores.tsv'}", highlight=False)


def _run(debug: bool, work: Callable[[], T]) -> T:
    with _known_errors(debug):
        return work()


@app.command()
def exam(
    reports: Reports,
    out: Out,
    nuggets: Annotated[list[Path], typer.Option("--nuggets", "-n", help="Nugget bank files (v3 JSON) or "
                                                "directories; repeat for several.", show_default=False)],
    gold: Annotated[list[Path] | None, typer.Option(
        "--gold", "-g", help="Gold reports: adds n-EXAM = sum EXAM(run) / sum EXAM(gold).",
        show_default=False)] = None,
    qa: Annotated[str, typer.Option(help="QA reader: embedding (all-MiniLM-L6-v2 retrieve-and-verify), "
                                    "embedding:DIR, or extractive:DIR (a local SQuAD 2.0 checkpoint).")
                  ] = "embedding",
    k: Annotated[int, options.number("--k", bounds=bounds_in(BASELINE_RULES["k"]),
                                     help="Sentences the embedding reader retrieves per question.")] = 3,
    match: Annotated[MatchMode, typer.Option(help="f1: normalised exact match or token F1 >= threshold; "
                                             "exact: normalised exact match only.")] = MatchMode.f1,
    f1_threshold: Annotated[float, options.number("--f1-threshold", bounds=bounds_in(BASELINE_RULES["f1_threshold"]),
                                                  help="Token F1 needed in f1 mode.")] = 0.5,
    null_threshold: Annotated[float, options.number(
        "--null-threshold", bounds=bounds_in(BASELINE_RULES["null_threshold"]),
        help="Extractive reader: answer when best span score - null score >= -THRESHOLD.")] = 0.0,
    debug: Debug = False,
) -> None:
    """EXAM: the share of nugget questions a QA reader answers correctly from the report text alone."""

    _run(debug, lambda: _finish(baseline("exam", reports, nuggets=nuggets, gold=gold or None, out=out, qa=qa, k=k,
                                         match=match.value, f1_threshold=f1_threshold,
                                         null_threshold=null_threshold), out))


@app.command()
def rouge(
    reports: Reports,
    gold: Gold,
    out: Out,
    multi: Annotated[MultiRef, typer.Option(help="Several references: max (best reference by F) or mean."
                                            )] = MultiRef.max,
    stem: Annotated[bool, typer.Option(help="Porter-stem tokens longer than 3 characters.")] = True,
    stopwords: Annotated[bool, typer.Option(help="Remove the shipped English stop-word list first.")] = True,
    debug: Debug = False,
) -> None:
    """ROUGE-1, ROUGE-2 (rouge-score) and ROUGE-SU4 precision, recall and F1 against the gold reports."""

    _run(debug, lambda: _finish(baseline("rouge", reports, gold=gold, out=out, multi=multi.value, stem=stem,
                                         stopwords=stopwords), out))


@app.command("pa-bleu")
def pa_bleu(
    reports: Reports,
    gold: Gold,
    out: Out,
    smooth: Annotated[Smoothing, typer.Option(help="sacrebleu sentence-BLEU smoothing.")] = Smoothing.exp,
    smooth_value: Annotated[float | None, options.number(
        "--smooth-value", bounds=bounds_in(BASELINE_RULES["smooth_value"]), show_default=False,
        help="k for add-k, epsilon for floor (sacrebleu defaults when omitted).")] = None,
    debug: Debug = False,
) -> None:
    """pa-BLEU (consensus-weighted over the gold reports) and BLEU (max over them)."""

    _run(debug, lambda: _finish(baseline("pa-bleu", reports, gold=gold, out=out, smooth=smooth.value,
                                         smooth_value=smooth_value), out))


@app.command("pa-meteor")
def pa_meteor(reports: Reports, gold: Gold, out: Out, debug: Debug = False) -> None:
    """pa-METEOR (consensus-weighted over the gold reports) and METEOR (max over them); exact matches only."""

    _run(debug, lambda: _finish(baseline("pa-meteor", reports, gold=gold, out=out), out))

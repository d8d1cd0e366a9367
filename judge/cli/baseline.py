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

from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.options import Bounds
from judge.diagnostics import Diagnostics
from judge.formats.scores import ScoreRow, write_scores

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


def _read_reports(paths: list[Path]) -> list:
    from judge.formats import read_reports

    return read_reports(paths)


def _read_banks(paths: list[Path]) -> dict:
    from judge.formats import read_nugget_banks

    return read_nugget_banks(paths)


def _finish(rows: list[ScoreRow], out: Path, name: str, signature: str, metrics: list[str]) -> None:
    from judge.cli.render import console, print_leaderboard

    path = out / f"{name}.scores.tsv"
    write_scores(path, rows, signature)
    print_leaderboard(rows, metrics, f"{name} leaderboard")
    console.print(f"wrote {path}", highlight=False)


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
    k: Annotated[int, options.number("--k", bounds=Bounds(1, 1000),
                                     help="Sentences the embedding reader retrieves per question.")] = 3,
    match: Annotated[MatchMode, typer.Option(help="f1: normalised exact match or token F1 >= threshold; "
                                             "exact: normalised exact match only.")] = MatchMode.f1,
    f1_threshold: Annotated[float, options.number("--f1-threshold", bounds=Bounds(0, 1, low_open=True),
                                                  help="Token F1 needed in f1 mode.")] = 0.5,
    null_threshold: Annotated[float, options.number(
        "--null-threshold", bounds=Bounds(-1000, 1000),
        help="Extractive reader: answer when best span score - null score >= -THRESHOLD.")] = 0.0,
    debug: Debug = False,
) -> None:
    """EXAM: the share of nugget questions a QA reader answers correctly from the report text alone."""

    def work() -> None:
        from judge.baselines.answers import AnswerMatcher
        from judge.baselines.exam import N_EXAM, exam_scores, exam_signature
        from judge.baselines.readers import load_qa

        matcher = AnswerMatcher(match.value, f1_threshold)
        runs = _read_reports(reports)
        banks = _read_banks(nuggets)
        gold_reports = _read_reports(gold) if gold else None
        reader = load_qa(qa, k=k, matcher=matcher, null_threshold=null_threshold)
        rows = exam_scores(runs, banks, reader, gold=gold_reports, matcher=matcher)
        metrics = ["EXAM"] + ([N_EXAM] if gold_reports is not None else [])
        _finish(rows, out, "exam", exam_signature(reader, matcher, gold=gold_reports is not None), metrics)

    _run(debug, work)


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

    def work() -> None:
        from judge.baselines.rouge import rouge_scores, rouge_signature

        rows = rouge_scores(_read_reports(reports), _read_reports(gold), multi=multi.value, stem=stem,
                            stopwords=stopwords)
        metrics = ["ROUGE-1-F", "ROUGE-2-F", "ROUGE-SU4-F"]  # P and R are in the TSV
        _finish(rows, out, "rouge", rouge_signature(stem, stopwords, multi.value), metrics)

    _run(debug, work)


@app.command("pa-bleu")
def pa_bleu(
    reports: Reports,
    gold: Gold,
    out: Out,
    smooth: Annotated[Smoothing, typer.Option(help="sacrebleu sentence-BLEU smoothing.")] = Smoothing.exp,
    smooth_value: Annotated[float | None, options.number(
        "--smooth-value", bounds=Bounds(0, 100), show_default=False,
        help="k for add-k, epsilon for floor (sacrebleu defaults when omitted).")] = None,
    debug: Debug = False,
) -> None:
    """pa-BLEU (consensus-weighted over the gold reports) and BLEU (max over them)."""

    def work() -> None:
        from judge.baselines.consensus import pa_bleu_scores, pa_bleu_signature

        rows = pa_bleu_scores(_read_reports(reports), _read_reports(gold), smooth.value, smooth_value)
        _finish(rows, out, "pa-bleu", pa_bleu_signature(smooth.value, smooth_value), ["pa-BLEU", "BLEU"])

    _run(debug, work)


@app.command("pa-meteor")
def pa_meteor(reports: Reports, gold: Gold, out: Out, debug: Debug = False) -> None:
    """pa-METEOR (consensus-weighted over the gold reports) and METEOR (max over them); exact matches only."""

    def work() -> None:
        from judge.baselines.consensus import pa_meteor_scores, pa_meteor_signature

        rows = pa_meteor_scores(_read_reports(reports), _read_reports(gold))
        _finish(rows, out, "pa-meteor", pa_meteor_signature(), ["pa-METEOR", "METEOR"])

    _run(debug, work)

"""`argue-judge import auto-argue` and `argue-judge export auto-argue`: judgments to and from Auto-ARGUE's format.

Importing lets `calibrate --human/--judged` compare our judge with Auto-ARGUE's decision by decision; exporting
lets argue-viz and other Auto-ARGUE tooling show our judgments. Both need the nugget banks: Auto-ARGUE names
matched nuggets by question text and derives citation relevance from the banks' answer references.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.api import read_judgments, write_judgments
from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.formats.paths import check_apart

import_app = typer.Typer(help="Read judgments written by other tools into argue-judge's judgments format.",
                         no_args_is_help=True)
export_app = typer.Typer(help="Write argue-judge judgments in other tools' formats.", no_args_is_help=True)

Nuggets = Annotated[list[Path], typer.Option(
    "--nuggets", "-n", help="The v3 nugget banks Auto-ARGUE used: files or a directory.")]


@import_app.command("auto-argue")
def import_auto_argue(
    source: Annotated[Path, typer.Argument(help="An Auto-ARGUE judgments file (JSONL, .gz too).")],
    nuggets: Nuggets,
    out: options.Out = Path("argue-out"),
    debug: options.Debug = False,
) -> None:
    """Convert Auto-ARGUE judgments into OUT/judgments.jsonl (no model calls)."""
    with user_errors(debug):
        check_apart([out], {"judgments": [source], "nuggets": nuggets}, folders=True)
        judgments = read_judgments(source, nuggets=nuggets, format="auto-argue")
        path = out / "judgments.jsonl"
        write_judgments(path, judgments)
    console.print(f"wrote {len(judgments)} report judgments to {path}", highlight=False)


@export_app.command("auto-argue")
def export_auto_argue(
    judgments: Annotated[list[Path], typer.Argument(help="argue-judge judgments files.")],
    nuggets: Nuggets,
    out: Annotated[Path, typer.Option("--out", "-o", help="The Auto-ARGUE judgments file to write.",
                                      callback=options.under_folders)],
    docs: Annotated[list[Path] | None, typer.Option(
        "--docs", "-d", help="Documents (JSONL), to fill each citation's text (argue-viz shows it).")] = None,
    cache_dir: options.CacheDir = options.DEFAULT_CACHE,
    debug: options.Debug = False,
) -> None:
    """Write argue-judge judgments as an Auto-ARGUE judgments file."""
    with user_errors(debug):
        check_apart([out], {"judgments": judgments, "nuggets": nuggets, "documents": docs or []})
        records = [j for path in judgments for j in read_judgments(path)]
        written = write_judgments(out, records, format="auto-argue", nuggets=nuggets, docs=docs, cache=cache_dir)
    console.print(f"wrote {written} Auto-ARGUE judgments records to {out}", highlight=False)

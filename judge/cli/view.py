"""`argue-judge view`: static HTML pages of judgments (LLM judges or human assessors)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.api import html_view
from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.labels import CITATION_POLICIES


def view_command(
    judgments: Annotated[list[Path], typer.Argument(help="Judgments files (LLM judge or human assessors).")],
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", "-n", help="v3 nugget banks, for records that carry none, and to show attesting documents.")
    ] = None,
    requests: Annotated[Path | None, typer.Option(
        "--requests", "-r", help="Report requests (JSONL): shows each request's statement.")] = None,
    docs: Annotated[list[Path] | None, typer.Option(
        "--docs", "-d", help="Documents (JSONL): shows cited titles and highlights the evidence in the text.")
    ] = None,
    against: Annotated[list[Path] | None, typer.Option(
        "--against", help="Judgments of the same reports by another judge or assessor: adds comparison pages.")
    ] = None,
    citation_policy: Annotated[str, typer.Option(
        "--citation-policy", callback=lambda value: options.one_of(value, CITATION_POLICIES),
        help="Policy for records that give decisions without outcomes.")] = "all",
    cache_dir: options.CacheDir = options.DEFAULT_CACHE,
    out: options.Out = Path("argue-view"),
    debug: options.Debug = False,
) -> None:
    """Write DIR/index.html (leaderboard, outcome histograms) and one page per report; no server, no network."""
    with user_errors(debug):
        files = html_view(judgments, out=out, nuggets=nuggets, requests=requests, docs=docs, against=against,
                     policy=citation_policy, cache=cache_dir)  # type: ignore[arg-type]
    pages = len(files.pages)
    console.print(f"wrote {files.index} and {pages} page(s), {files.total_bytes / 1024:.0f} KiB in all",
                  highlight=False, soft_wrap=True)

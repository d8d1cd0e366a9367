"""`argue-judge merge OUT1 OUT2 ... --out DIR`: the shards of one evaluation into the files of a single run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.api import merge
from judge.cli import options
from judge.cli.errors import run_failed, user_errors
from judge.cli.render import console, print_argue_leaderboard


def merge_command(
    shards: Annotated[list[Path], typer.Argument(help="The --out directories of `eval --shard I/N` runs.")],
    out: options.Out = Path("argue-out"),
    debug: options.Debug = False,
) -> None:
    """Combine shard outputs into exactly the judgments, scores and leaderboard a single run writes."""
    with user_errors(debug):
        merged = merge(shards, out=out)
    print_argue_leaderboard(merged.rows)
    for note in merged.notes:
        console.print(f"note: {note}", highlight=False)
    console.print(f"merged {merged.reports} reports from {len(shards)} shards; wrote "
                  f"{', '.join(str(p) for p in merged.paths.values())}", highlight=False, soft_wrap=True)
    if merged.failure:  # a shard's run failed (it exited 5): so did the whole run, as eval would say
        run_failed(merged.failure)

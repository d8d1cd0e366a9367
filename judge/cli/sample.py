"""`argue-judge sample JUDGMENTS --budget N`: which reports people should judge, each with its probability."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.api import sample
from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.settings import Bounds

BUDGET = Bounds(2, 10_000_000)                  # a sample of one report has no variance to estimate
PROBABILITY = Bounds(0, 1, low_open=True)       # every report must be drawable: (0, 1]


def sample_command(
    judgments: Annotated[list[Path], typer.Argument(help="The judge's judgments of every report (judgments.jsonl).")],
    budget: Annotated[int, options.number("--budget", bounds=BUDGET, help="How many reports people will judge "
                                          "(new ones on a second round).")],
    out: Annotated[Path, typer.Option("--out", help="The sample file to write (JSON lines).")] = Path("sample.jsonl"),
    seed: Annotated[int, options.number("--seed", bounds=options.settings.SEED, help="Seed of the draw.")] = 0,
    min_probability: Annotated[float | None, options.number(
        "--min-probability", bounds=PROBABILITY,
        help="Every report's least probability of being drawn (default: a quarter of budget / reports).")] = None,
    uniform: Annotated[bool, typer.Option("--uniform", help="Every report with the same probability (a simple "
                                          "random sample), not by the judge's confidence.")] = False,
    previous: Annotated[Path | None, typer.Option(
        "--previous", help="The first round's sample file: draw a second round among the reports not drawn yet "
        "(the file written holds both rounds).")] = None,
    debug: options.Debug = False,
) -> None:
    """Choose the reports people should judge: where the judge is least sure, each with its probability, so that
    `score --human JUDGED --human SAMPLE` weights the estimate by how the sample was drawn (docs/ppi.md)."""
    with user_errors(debug):
        drawn = sample(judgments, budget, seed=seed, min_probability=min_probability, uniform=uniform,
                       previous=previous, out=out)
    for note in drawn.notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)
    new = sum(1 for row in drawn.rows if row["round"] == len(drawn.header["rounds"]))
    low = min(row["probability"] for row in drawn.rows)
    high = max(row["probability"] for row in drawn.rows)
    console.print(f"drew {new} of {drawn.header['reports']} reports ({drawn.header['kind']}, round "
                  f"{len(drawn.header['rounds'])}; probabilities {low:.3g} to {high:.3g}); wrote {drawn.path}",
                  highlight=False, soft_wrap=True)
    console.print(f"judge them, then: argue-judge score {' '.join(str(j) for j in judgments)} --human JUDGED.jsonl "
                  f"--human {drawn.path}", highlight=False, soft_wrap=True)

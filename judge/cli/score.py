"""`argue-judge score`: every metric recomputed from judgments alone. Never calls a model, and its import chain
holds no model client (tests/test_cli_startup.py): it starts in a fraction of eval's time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.api import score
from judge.cli import options, ppi
from judge.cli.errors import user_errors
from judge.cli.render import console, print_argue_leaderboard, print_diagnostics, print_flags
from judge.run.outputs import SCORE_NAMES


def score_command(
    judgments: Annotated[list[Path], typer.Argument(help="Judgments files (ours or Auto-ARGUE's, detected).")],
    citation_policy: options.Policy = "all",
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", "-n", help=f"Nugget banks: {options.NUGGET_FORMATS}. Needed for Auto-ARGUE "
        "judgments and Auto-ARGUE's relevance and coverage measures.")] = None,
    human: options.Human = None,
    sample: options.Sample = "reports",
    confidence: options.Confidence = 0.95,
    out: options.Out = Path("argue-out"),
    debug: options.Debug = False,
) -> None:
    """Recompute every metric from judgments alone (no model calls): LLM judgments and human labels alike. With
    --human, also the prediction-powered estimates of each run's scores from a human sample (docs/ppi.md)."""
    with user_errors(debug):
        scored = score(judgments, nuggets=nuggets, policy=citation_policy,  # type: ignore[arg-type]
                       human=human, sample=sample, confidence=confidence, out=out)
    rows = scored.scores.aggregate_rows()
    print_argue_leaderboard(rows)
    print_flags(rows, ", ".join(str(path) for path in judgments))
    print_diagnostics(scored.diagnostics, scored.summary)
    console.print(f"signature: {scored.signature.short()}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(out / name) for name in SCORE_NAMES)}", highlight=False)
    if scored.estimates is not None:
        ppi.show(scored.estimates.corrected, scored.estimates.signature, scored.estimates.paths)

"""`argue-judge score`: every metric recomputed from judgments alone. Never calls a model, and its import chain
holds no model client (tests/test_cli_startup.py): it starts in a fraction of eval's time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.adapters.autoargue import read_any_judgments
from judge.cli import options, ppi
from judge.cli.errors import user_errors
from judge.cli.render import console, print_argue_leaderboard, print_diagnostics, print_flags
from judge.diagnostics import Diagnostics
from judge.formats import read_nugget_banks
from judge.formats.lock import output_lock
from judge.formats.sniff import naming_the_format
from judge.run.outputs import write_scored
from judge.run.score import judge_label_of, score


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
    ppi.check_design(sample)
    ppi.check_human_options(human, sample, confidence)
    with user_errors(debug):
        banks = read_nugget_banks(list(nuggets)) if nuggets else None
        with naming_the_format("an argue-judge judgments file"):
            records = read_any_judgments(list(judgments), banks)
        scores, signature, warnings = score(records, judge_label_of(records), citation_policy, banks)  # type: ignore[arg-type]
        diagnostics = Diagnostics()
        diagnostics.extend(warnings, "scores")
        corrected = None
        if human:  # the estimators import scipy (seconds of start-up): loaded only when asked for
            from judge.run.prediction_powered import estimate_with_humans

            corrected = estimate_with_humans(scores, signature, human, records, sample, confidence,  # type: ignore[arg-type]
                                             citation_policy, banks, diagnostics)  # type: ignore[arg-type]
        with output_lock(out, "score"):
            scored = write_scored(scores, signature, out, diagnostics)
            ppi_paths = ppi.write(*corrected, out) if corrected is not None else []
    print_argue_leaderboard(scores.aggregate_rows())
    print_flags(scores.aggregate_rows(), ", ".join(str(path) for path in judgments))
    print_diagnostics(diagnostics, scored[-1])
    console.print(f"signature: {signature.short()}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(path) for path in scored)}", highlight=False)
    if corrected is not None:
        ppi.show(*corrected, ppi_paths)

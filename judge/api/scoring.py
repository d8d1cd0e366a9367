"""`score`: every metric from judgments alone, as `argue-judge score` does; never calls a model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.api._inputs import (
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    _banks,
    _check_input,
    _check_path,
    _humans,
    _judgment_records,
)
from judge.api.estimates import HumanEstimates, _estimates, _write_estimates
from judge.diagnostics import Diagnostics
from judge.formats.judgments import ReportJudgment
from judge.labels import CitationPolicy
from judge.metrics.table import ScoreTable, select_measures
from judge.settings import HumanSample, check
from judge.types import NuggetBank

if TYPE_CHECKING:
    from judge.judging.signature import ScoreSignature
    from judge.metrics.scoring import Scores


@dataclass(frozen=True)
class ScoredJudgments(ScoreTable):
    """What `score` returns: the scores, the signature that says how they were made, the scoring notes, and with
    `human=` the prediction-powered estimates. As rows: `to_records()`, `to_pandas()`, `aggregates()`."""

    scores: Scores
    signature: ScoreSignature
    warnings: list[str] = field(default_factory=list)
    measures: tuple[str, ...] | None = None
    estimates: HumanEstimates | None = None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)  # the warnings with their sources
    summary: Path | None = None    # score-summary.json, with every warning, when `out` was given

    def __getitem__(self, run_id: str) -> Any:
        """One run's scores: `scored["run-cited"]["F1"]` is that run's mean F1."""
        return self.scores.runs[run_id]


def score(judgments: JudgmentInputs, *, nuggets: NuggetInputs | None = None, policy: CitationPolicy = "all",
          measures: Sequence[str] | None = None, human: JudgmentInputs | None = None, sample: str = "reports",
          confidence: float = 0.95, out: PathLike | None = None) -> ScoredJudgments:
    """Every metric from judgments alone, as `argue-judge score` does: LLM judgments and human labels alike; never
    calls a model. `judgments`: files (ours or Auto-ARGUE's, told apart by their first record), ReportJudgment
    records or dicts. `nuggets`: the banks (paths or NuggetBank objects), which Auto-ARGUE's measures and Auto-ARGUE
    files need. `measures`: the measures the rows keep (ir_measures' way: names, aliases). `human`, `sample`,
    `confidence`: prediction-powered estimates (`scored.estimates`). `out`: also write scores.tsv and
    leaderboard.tsv (and the ppi files) there. The signature names the judge the records carry (an LLM judge's
    signature, or the assessors: `human:...`).

    >>> import judge
    >>> scored = judge.score("argue-out/judgments.jsonl", nuggets="examples/nuggets")
    >>> sorted(scored.scores.runs)
    ['run-cited', 'run-miscited', 'run-padded']
    >>> scored["run-cited"]["SentencePrecision"] > scored["run-miscited"]["SentencePrecision"]
    True
    >>> scored.signature.short().startswith("argue-judge:0.1.0|judge:openai/fake|")
    True
    >>> f1 = judge.score("argue-out/judgments.jsonl", nuggets="examples/nuggets", measures=["F1"])
    >>> sorted({row["measure"] for row in f1.to_records()})
    ['F1']
    """
    from judge.formats.sniff import naming_the_format
    from judge.run.score import judge_label_of
    from judge.run.score import score as score_records

    check("policy", policy, CitationPolicy)
    chosen = select_measures(measures)
    HumanSample(sample, confidence, given=human is not None)  # type: ignore[arg-type]
    _check_path("out", out)
    _check_input("judgments", judgments, ReportJudgment, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("human", human, ReportJudgment)
    banks = _banks("nuggets", nuggets)
    with naming_the_format("an argue-judge judgments file"):
        records = _judgment_records("judgments", judgments, banks)
    scores, signature, warnings = score_records(records, judge_label_of(records), policy, banks or None)
    diagnostics = Diagnostics()
    diagnostics.extend(warnings, "scores")
    estimates = None
    if human is not None:
        estimates = _estimates(scores, signature, _humans("human", human, sample), records, sample, confidence,
                               policy, banks or None, diagnostics)
    summary = None
    if out is not None:
        from judge.formats.lock import output_lock
        from judge.run.outputs import write_scored

        with output_lock(Path(out), "score"):
            summary = write_scored(scores, signature, Path(out), diagnostics)[-1]
            if estimates is not None:
                estimates = _write_estimates(estimates, Path(out))
    return ScoredJudgments(scores, signature, diagnostics.messages(), chosen, estimates, diagnostics, summary)


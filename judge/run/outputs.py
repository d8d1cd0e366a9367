"""The output contract of a run, written once: the five files of an output folder, the keys of run-summary.json,
and the writers `eval`, `merge` and `score` share.

judgments.jsonl, scores.tsv and leaderboard.tsv are byte-identical on a rerun (and a merge of shards writes the
bytes a single run writes); run-summary.json and cache-log.jsonl hold the per-run facts. Every file is written in
the working folder `OUT/.argue-run` and moved into place with the others only when all are complete
(judge.formats.atomic.WorkingFolder). Nothing here talks to a model: `merge` and `score` import this module, and
must start without litellm (tests/test_cli_startup.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.chart import Outcome
from judge.diagnostics import Diagnostics
from judge.errors import OutputError
from judge.formats.atomic import WorkingFolder, staged
from judge.formats.judgments import ReportJudgment, write_judgments
from judge.formats.scores import leaderboard, write_leaderboard, write_scores
from judge.judging.signature import JudgeSignature, ScoreSignature
from judge.metrics import Scores
from judge.metrics.panel_agreement import panel_agreement
from judge.metrics.table import ScoreTable
from judge.run.streaming import StoredJudgments

if TYPE_CHECKING:  # only the type: importing the client would pull litellm into `merge` and `score`
    from judge.llm.client import Usage

OUTPUT_NAMES = ("judgments.jsonl", "scores.tsv", "leaderboard.tsv", "run-summary.json", "cache-log.jsonl")
# what `score` writes: the score files, and its warnings in full (the console shows each kind once)
SCORE_NAMES = ("scores.tsv", "leaderboard.tsv", "score-summary.json")
LEADERBOARD_MEASURES = (
    "F1", "SentencePrecision", "NuggetRecall", "NuggetRecall(weighted=True)",
    *(f"OutcomeCount(outcome={int(n)})" for n in Outcome), "Truncated", "Failed", "Flagged",
)
# run-summary.json: the same keys whether `eval` or `merge` wrote it (tests/test_merge.py compares them).
SUMMARY_KEYS = ("judge_signature", "score_signature", "usage", "seconds", "failed", "warnings", "diagnostics", "run")
# Its `run` object: per-run facts that change no verdict. `kernels` is there only for the embedded judge;
# `merged_from` lists the shard folders a merge combined (empty for a run that judged its reports itself).
RUN_KEYS = ("timeout_seconds", "servers", "shard", "resumed_reports", "reports", "merged_from")
# The stages of a run in the order it reports their diagnostics (judge.run.evaluate); merge puts the shards'
# diagnostics back in this order.
DIAGNOSTIC_SOURCES = ("documents", "inputs", "cache", "scores", "settings", "embedded judge", "baselines", "human")


@dataclass
class Evaluation(ScoreTable):
    """What a run produced, ready to be written: judgments (a run into an output folder reads them back from its
    judgments.jsonl one at a time: StoredJudgments), their scores, and the per-run facts of run-summary.json.
    `signature` is the scores' signature (what scores.tsv and the leaderboard carry); `judge_signature` the
    judge's, in full. As rows: `to_records()`, `to_pandas()` (judge.metrics.table)."""

    judgments: Sequence[ReportJudgment]
    scores: Scores
    usage: Usage
    judge_signature: JudgeSignature
    signature: ScoreSignature
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    seconds: float = 0.0
    failure: str | None = None  # why the run as a whole failed (see run_failure); outputs are written anyway
    # Where the judgments were streamed to and finalised, if anywhere: the working folder of `out`, from which
    # write_outputs moves the file into place (and then points this, and `judgments`, at its final path).
    judgments_path: Path | None = None
    # Per-run facts for run-summary.json that change no verdict (RUN_KEYS): timeout, servers, shard, ...
    run: dict[str, Any] = field(default_factory=dict)
    # The measures the rows and the leaderboard keep (judge.metrics.table.select_measures); None: every one.
    measures: tuple[str, ...] | None = None
    # What the Python API adds when asked (judge.api.evaluate): prediction-powered estimates from a human sample
    # (judge.api.HumanEstimates), the HTML view's index page, the baselines' scores.
    estimates: Any = None
    view_index: Path | None = None
    baseline_results: list[Any] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        return self.diagnostics.messages()


def run_summary(judge_signature: dict[str, Any], score_signature: ScoreSignature, usage: dict[str, Any],
                seconds: float, failure: str | None, diagnostics: Diagnostics, run: dict[str, Any]) -> dict[str, Any]:
    """The run-summary.json object (SUMMARY_KEYS), built the one way for `eval` and `merge`."""
    missing = [key for key in RUN_KEYS if key not in run]
    if missing:  # a programming error, not a user's: the contract says what `run` holds
        raise ValueError(f"run facts lack {missing}")
    return {
        "judge_signature": judge_signature,
        "score_signature": score_signature.short(),
        "usage": usage,
        "seconds": round(seconds, 3),
        "failed": failure,
        "warnings": diagnostics.messages(),
        "diagnostics": diagnostics.as_json(),
        "run": run,
    }


def panel_summary(judgments: Iterable[ReportJudgment]) -> dict[str, Any] | None:
    """run-summary.json's `run.panel` for judgments decided by a panel of judges (judge.judging.panel): the panel,
    its judges, and per decision the agreement among them (judge.metrics.panel_agreement); None for a single
    judge, whose summary has no such key. Read from the judgments alone, like the scores."""
    summary = panel_agreement(judgments)
    return None if summary is None else summary.model_dump(mode="json")


def write_outputs(evaluation: Evaluation, out_dir: Path) -> dict[str, Path]:
    """All five files of an evaluation, in the working folder `out_dir/.argue-run`, moved into place together only
    when every one is complete; on an output error the finished files stay as they were. The caller holds the
    folder's lock (judge.formats.lock) for the whole run that writes it."""
    out_dir = Path(out_dir)
    work = WorkingFolder(out_dir)
    streamed = evaluation.judgments_path is not None and \
        evaluation.judgments_path.resolve() == work.file("judgments.jsonl").resolve()
    if not streamed:
        work.start()
    try:
        _write_evaluation(work, evaluation, streamed)
        paths = work.commit(OUTPUT_NAMES)
    except OutputError:
        work.discard()  # a rerun is free (every decision is in the cache); no half-written folder stays
        raise
    if streamed:  # the file moved: read it from where it is now
        evaluation.judgments_path = paths["judgments.jsonl"]
        if isinstance(evaluation.judgments, StoredJudgments):
            evaluation.judgments.path = paths["judgments.jsonl"]
    return paths


def _write_evaluation(work: WorkingFolder, evaluation: Evaluation, streamed: bool) -> None:
    """The run's outputs, in the working folder (the finalised judgments log is there already when `streamed`)."""
    paths = {name: work.file(name) for name in OUTPUT_NAMES}
    summary = run_summary(evaluation.judge_signature.as_dict(), evaluation.signature, asdict(evaluation.usage),
                          evaluation.seconds, evaluation.failure, evaluation.diagnostics, evaluation.run)
    try:
        if not streamed:
            write_judgments(paths["judgments.jsonl"], evaluation.judgments)
        write_score_files(evaluation.scores, evaluation.signature, paths["scores.tsv"],
                          paths["leaderboard.tsv"])
        write_run_summary(paths["run-summary.json"], summary)
        write_cache_log(paths["cache-log.jsonl"], evaluation.judgments)
    except OSError as exc:
        raise work.output_error(exc, OUTPUT_NAMES) from exc


def write_score_files(scores: Scores, signature: ScoreSignature, scores_path: Path, board_path: Path) -> None:
    """scores.tsv (every measure of every report, then the aggregates) and leaderboard.tsv, both signed."""
    write_scores(scores_path, scores.iter_rows(), signature.short())  # one run's rows at a time
    header, body = leaderboard(scores.aggregate_rows(), LEADERBOARD_MEASURES, sort_by="F1")
    write_leaderboard(board_path, header, body, signature.short())


def write_scored(scores: Scores, signature: ScoreSignature, out_dir: Path,
                 diagnostics: Diagnostics | None = None) -> list[Path]:
    """`score`'s outputs: scores.tsv, leaderboard.tsv and score-summary.json (the signature and every warning) in
    `out_dir`, replaced together when all are complete."""
    targets = [Path(out_dir) / name for name in SCORE_NAMES]
    with staged(targets) as temps:
        write_score_files(scores, signature, *(temps[target] for target in targets[:2]))
        write_run_summary(temps[targets[2]], {"signature": signature.short(),
                                              "diagnostics": (diagnostics or Diagnostics()).as_json()})
    return targets


def write_run_summary(path: Path, summary: dict[str, Any]) -> None:
    path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_cache_log(path: Path, judgments: Iterable[ReportJudgment]) -> None:
    """One line per decision: which report, sentence and documents it was about, and whether the cache had it."""
    with path.open("w", encoding="utf-8") as log:
        for j in judgments:
            for s in j.sentences:
                for d in s.decisions:
                    log.write(json.dumps({"run_id": j.run_id, "request_id": j.request_id, "sentence": s.index,
                                          "decision": d.decision, "doc_ids": d.doc_ids, "cached": d.cached},
                                         sort_keys=True) + "\n")

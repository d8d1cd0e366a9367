"""The judging step of `argue-judge eval`: judge every report of the loaded inputs (judge.run.inputs), score the
judgments (judge.run.score) and return an Evaluation for judge.run.outputs to write.

The CLI only parses options, calls these and prints; scripts and notebooks call the same functions
(`evaluate_async` inside a running event loop, e.g. Jupyter).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.diagnostics import Diagnostics
from judge.event_loop import run_sync
from judge.formats.atomic import WorkingFolder
from judge.formats.judgments import ReportJudgment, nugget_summaries
from judge.formats.reports import ReportEntry
from judge.judging.panel import open_panel
from judge.judging.signature import JudgeSignature
from judge.judging.walker import ReportWalker, within_limit
from judge.llm.batch import JOURNAL, BatchRounds
from judge.llm.cache.store import DecisionCache, open_decision_cache
from judge.llm.client import DecisionClient, Usage
from judge.llm.logprob import asks_logprobs
from judge.llm.router import servers
from judge.run.executors import Executor, Judging, executor_for
from judge.run.inputs import Inputs
from judge.run.outputs import Evaluation, panel_summary
from judge.run.score import score
from judge.run.spec import EvalPlan, EvalSpec
from judge.run.streaming import JudgmentStream, StoredJudgments
from judge.settings import ModelSettings
from judge.types import Report

__all__ = ["JudgingProgress", "evaluate", "evaluate_async", "run_failure", "stream_for"]


@dataclass
class JudgingProgress:
    """Callbacks the CLI hands in (a rich progress bar); the library never prints."""

    # `planned`: the spec is resolved (the CLI says which default thresholds the judge got); `loaded`: the inputs are
    # read and checked, judging is about to start (the CLI says what it will judge).
    planned: Callable[[EvalPlan], None] | None = None
    loaded: Callable[[Inputs], None] | None = None
    start: Callable[[int], None] = lambda total: None
    sentence_done: Callable[[], None] = lambda: None
    decision_done: Callable[[bool], None] = lambda cached: None
    # With batch jobs: called when a job changes state (rounds, jobs, their states: judge.llm.batch.RoundStats).
    batch_state: Callable[[Any], None] = lambda stats: None


def evaluate(inputs: Inputs, config: EvalPlan | EvalSpec, progress: JudgingProgress | None = None,
             out: Path | None = None) -> Evaluation:
    """Judge every report and score the judgments (safe inside a running event loop: judge.event_loop.run_sync;
    async code awaits `evaluate_async`). With `out`, each report's judgment is appended to `out/judgments.jsonl` the
    moment it is complete, and the file is put in its final order at the end (see judge.run.streaming); that file is in
    the working folder `out/.argue-run`, so the finished files of an earlier run stay as they are until
    `write_outputs` replaces them all at once."""
    return run_sync(evaluate_async(inputs, config, progress, out))


async def evaluate_async(inputs: Inputs, config: EvalPlan | EvalSpec, progress: JudgingProgress | None = None,
                         out: Path | None = None) -> Evaluation:
    config = config if isinstance(config, EvalPlan) else config.resolve()
    progress = progress or JudgingProgress()
    started = time.perf_counter()
    signature = JudgeSignature.of(config.model, config.retry, config.asked_judge if config.panel else config.judge,
                                  inputs.requests.values(), panel=config.panel, vote=config.vote)
    stream = None
    cache = None
    executor = executor_for(config.ray, config.workers)
    rounds = None
    try:
        # The cache first: a configuration error (unreachable Redis, a corrupt database) stops the run before
        # anything in `out` is touched.
        cache = open_decision_cache(config.cache) if config.cache else None
        stream = stream_for(Path(out), config.resume, signature.short()) if out is not None else None
        if config.batch:
            rounds = BatchRounds(config.model.model, api_base=config.model.api_base, api_key=config.model.api_key,
                                 journal=WorkingFolder(out).file(JOURNAL) if out is not None else None,
                                 poll_interval=config.batch_poll, on_state=progress.batch_state)
        judgments, usage, resumed, (kernels, worker_events) = await _judge_all(inputs, config, signature, cache,
                                                                               progress, stream, executor, rounds)
    finally:
        executor.close()
        if stream:
            stream.close()  # a no-op after finalise; otherwise the log stays for --resume
        if cache:
            cache.close()
    scores, score_signature, notes = score(judgments, signature.short(), config.judge.policy)
    diagnostics = Diagnostics(inputs.diagnostics)
    if cache:
        diagnostics.extend(cache.problems(), "cache")
    diagnostics.extend(notes, "scores")
    diagnostics.extend(config.unapplied, "settings")
    if config.resume and out is not None and not resumed:
        diagnostics.note(f"--resume: {out} held no judgments of an earlier run of these reports; every report was "
                         "judged", "settings")
    diagnostics.extend(confidence_missing(judgments, config.model), "settings")
    for source, message in worker_events:  # each named by what it happened to (judge.run.executors.Judged)
        diagnostics.extend([message], source)
    run = {"timeout_seconds": config.model.timeout, "servers": len(servers(config.model)),
           "shard": str(config.shard) if config.shard else None, "resumed_reports": resumed,
           "reports": len(judgments),  # what merge checks a shard's judgments.jsonl against
           "merged_from": []}
    if kernels is not None:  # the embedded judge's llama.cpp kernels (judge.llm.embedded.kernels)
        run["kernels"] = kernels
    if config.panel:  # the agreement among the judges, per decision (judge.metrics.panel_agreement)
        run["panel"] = panel_summary(judgments)
    if rounds is not None:  # what the batch jobs did; `cost` of the usage is at the batch price
        run["batch"] = rounds.stats.as_dict()
    return Evaluation(judgments, scores, usage, signature, score_signature, diagnostics,
                      time.perf_counter() - started, run_failure(judgments, usage, config.max_failed_fraction),
                      judgments_path=stream.path if stream else None, run=run)


def stream_for(out: Path, resume: bool, signature: str) -> JudgmentStream:
    """The judgments log of a run into `out`, in its working folder. With `resume`: a killed run's log if the
    folder holds one, else a copy of the finished `out/judgments.jsonl` (a finished run resumed: every unchanged
    report is kept); without, an empty log (a killed run's is discarded; its decisions are in the cache)."""
    work = WorkingFolder(out)
    log = work.file("judgments.jsonl")
    # The batch journal is kept whatever `resume` says: the jobs it names are paid for (judge.llm.batch).
    work.start(keep=[log.name, JOURNAL] if resume else [JOURNAL])
    if resume and not log.exists() and (out / "judgments.jsonl").is_file():
        try:
            shutil.copyfile(out / "judgments.jsonl", log)
        except OSError as exc:
            raise work.output_error(exc, [log.name]) from exc
    return JudgmentStream.open(log, resume=resume, signature=signature)


async def _judge_all(inputs: Inputs, config: EvalPlan, signature: JudgeSignature,
                     cache: DecisionCache | None, progress: JudgingProgress,
                     stream: JudgmentStream | None = None, executor: Executor | None = None,
                     rounds: BatchRounds | None = None
                     ) -> tuple[Sequence[ReportJudgment], Usage, int,
                                tuple[dict[str, Any] | None, list[tuple[str, str]]]]:
    """Judge the reports left to judge with `executor` (judge.run.executors: this process by default), taking
    each judgment as it completes: with a stream it goes to disk at once, and the judgments returned are read back
    from the final file one at a time (StoredJudgments), so memory stays bounded."""
    panel = None
    if config.panel:  # a panel of judges (judge.judging.panel): it stands where the client stands
        panel = open_panel(config.panel, config.vote, config.asked_judge, cache,
                           concurrency=config.in_flight, retry=config.retry, max_cost=config.max_cost,
                           price_per_1k=config.price_per_1k, on_decision=progress.decision_done)
    client = panel or DecisionClient(config.model, cache, concurrency=config.in_flight, retry=config.retry,
                                     max_cost=config.max_cost, price_per_1k=config.price_per_1k,
                                     on_decision=progress.decision_done,
                                     completions=rounds.acompletion if rounds is not None else None)
    walker = ReportWalker(client, inputs.documents, config.judge, on_sentence=progress.sentence_done, decider=panel)
    ordered = sorted(inputs.reports.entries, key=lambda e: e.key)
    todo: list[ReportEntry] = []
    sentences = 0
    for entry in ordered:  # one light pass: what is left to judge, and how many sentences that is
        report = inputs.reports.read(entry)
        walker.refuse_unshowable(report, inputs.requests[report.request_id])
        if not (stream and _already_judged(stream, report, inputs, config)):
            todo.append(entry)
            sentences += len(within_limit(report, inputs.requests[report.request_id], config.judge.truncate)[0])
    progress.start(sentences)
    judged: dict[tuple[str, str], ReportJudgment] = {}
    cached_flags: dict[tuple[str, str], bytes] = {}  # for cache-log.jsonl, which the file cannot hold

    def deliver(judgment: ReportJudgment) -> None:
        if stream is None:
            judged[judgment.key] = judgment
        else:
            stream.append(judgment)
            cached_flags[judgment.key] = bytes(d.cached for s in judgment.sentences for d in s.decisions)

    done = await (executor or executor_for(None, None)).judge(
        Judging(inputs, config, signature.short(), todo, walker, client, cache, progress, panel),  # type: ignore[arg-type]
        deliver)
    embedded = (done.kernels, done.events or [])
    if stream is None:
        return [judged[e.key] for e in ordered], done.usage, 0, embedded
    for key in stream.done() - {e.key for e in ordered}:
        stream.discard(key)  # a resumed log's report that this run's inputs no longer have
    stream.finalise()
    # Resumed reports: nothing was asked for them in this run, so every decision counts as cached.
    return (StoredJudgments(stream.path, len(stream), cached_flags), done.usage, len(ordered) - len(todo),
            embedded)


def _already_judged(stream: JudgmentStream, report: Report, inputs: Inputs, config: EvalPlan) -> bool:
    """Whether the resumed log's judgment of `report` is the one this run would write from these inputs: same
    sentences and citations, same length cut, same nuggets (the signature is checked when the log is opened), and
    no failed decision: failures are never cached, so a report with one is judged again (its other decisions
    come from the cache) and the failed ones are asked again."""
    if not config.resume or report.key not in stream:
        return False
    earlier = stream.get(report.key)
    _, cut = within_limit(report, inputs.requests[report.request_id], config.judge.truncate)
    truncated = {s.index for s in cut}
    return earlier is not None and earlier.team_id == report.team_id \
        and [(s.index, s.text, s.citations) for s in earlier.sentences] == \
            [(s.index, s.text, list(s.citations)) for s in report.sentences] \
        and {s.index for s in earlier.sentences if s.status == "truncated"} == truncated \
        and earlier.nuggets == nugget_summaries(inputs.banks.get(report.request_id)) \
        and not any(s.status == "failed" or any(d.error for d in s.decisions) for s in earlier.sentences)


def run_failure(judgments: Iterable[ReportJudgment], usage: Usage, max_failed_fraction: float) -> str | None:
    """Why the run as a whole must be reported failed (the CLI exits 5), or None. A run in which no decision
    succeeded, or more than `max_failed_fraction` of the judged sentences failed, yields numbers that say more
    about the server than about the reports."""
    if usage.stopped:  # the server was given up on: the reason names it and what to do
        return usage.stopped
    first_error, judged, failed = "", 0, 0
    for judgment in judgments:
        for sentence in judgment.sentences:
            if not first_error:
                first_error = next((d.error for d in sentence.decisions if d.error), "")
            if sentence.status != "truncated":
                judged += 1
                failed += sentence.status == "failed"
    if usage.decisions and usage.failures >= usage.decisions:
        return (f"no decision succeeded: all {usage.failures} failed (first: {first_error[:160]}); check --model, "
                "--api-base and the server")
    if judged and failed / judged > max_failed_fraction:
        return (f"{failed} of {judged} sentences ({failed / judged:.0%}) failed, more than "
                f"--max-failed-fraction {max_failed_fraction:g}; rerun to ask them again (answers are cached)")
    return None


def confidence_missing(judgments: Iterable[ReportJudgment], model: ModelSettings) -> list[str]:
    """A warning when log-probabilities were asked for and the server sent none for any decision it answered: no
    confidence is recorded, so no decision threshold could apply."""
    if not asks_logprobs(model):
        return []
    answered = with_confidence = 0
    for judgment in judgments:
        for sentence in judgment.sentences:
            for record in sentence.decisions:
                if record.error is None and record.verdict is not None:
                    answered += 1
                    # a panel's record carries its judges' confidences, not one of its own
                    with_confidence += record.confidence is not None or any(
                        member.confidence is not None for member in record.panel or ())
    if answered and not with_confidence:
        return [f"log-probabilities were asked for, but {model.model} returned none for any of {answered} "
                "decisions: no decision carries a confidence, so no decision threshold applied (the signature's lp "
                "says what was asked)"]
    return []

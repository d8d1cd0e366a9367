"""`argue-judge merge OUT1 OUT2 ...`: combine the output directories of shards (`eval --shard I/N`) into the
files a single run over all the reports writes.

judgments.jsonl, scores.tsv and leaderboard.tsv are byte-identical to a single run: the judgments are put in the
single run's order (run id, then request id) with their bytes unchanged, and every score is recomputed from the
merged judgments through the same `judge.run.evaluate.score` a run uses (a macro mean over requests cannot be
merged from shard means). cache-log.jsonl gets the shards' lines in the merged order.
run-summary.json has the keys eval's has (judge.run.outputs: SUMMARY_KEYS), holding per-run facts merged as such:
the judge signature (which every shard must share), the recomputed score signature, usage summed over the shards,
`seconds` the longest shard's (the wall time when the shards run side by side), `failed`, the diagnostics a single
run would give (the shards' own, read from the structure of their summaries, in a single run's order, with the
scoring ones recomputed from the merged judgments), and `run.merged_from`, the shard directories.

What is merged must be a whole evaluation: the shards of `eval --shard I/N` record I/N in their run summaries, so
merge refuses a missing shard, a shard given twice or shards of different counts; each summary records how many
reports its run wrote, so a judgments.jsonl that does not hold them (a killed rerun's log beside an older summary)
is refused too. A shard whose run failed (its summary's `failed`, exit 5) makes the merged run failed the same
way. The output folder must not be one of the shards, and it is locked and written as eval writes its own
(judge.formats.lock, judge.formats.atomic.WorkingFolder).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from judge.diagnostics import Diagnostic, Diagnostics
from judge.errors import InputError
from judge.formats.atomic import WorkingFolder
from judge.formats.judgments import ReportJudgment, write_judgments
from judge.formats.lock import output_lock, reading_lock
from judge.judging.judgments_reader import iter_judgments, iter_judgments_located
from judge.run.outputs import DIAGNOSTIC_SOURCES, OUTPUT_NAMES, run_summary, write_run_summary, write_score_files
from judge.run.score import score
from judge.run.shards import Shard

Key = tuple[str, str]


@dataclass
class ShardOutput:
    """One shard's output directory, indexed: where each report's judgment is in its judgments.jsonl (the
    judgments themselves are read one at a time when they are merged, so memory does not grow with them)."""

    directory: Path
    summary: dict[str, Any]
    judge_label: str
    places: dict[Key, tuple[int, int]] = field(default_factory=dict)  # (byte offset, length) of each line
    signatures: list[str] = field(default_factory=list)                # every signature its judgments carry
    diagnostics: list[Diagnostic] = field(default_factory=list)        # as its run-summary.json lists them

    @classmethod
    def read(cls, directory: Path) -> ShardOutput:
        if WorkingFolder(directory).committing():
            raise InputError("a run into this folder was killed while it replaced its files: run the same eval "
                             "into it again (add --resume) to finish, then merge", directory)
        for name in ("judgments.jsonl", "run-summary.json"):
            if not (directory / name).is_file():
                raise InputError(f"no {name}: not the output directory of an `eval` run (or it did not finish)",
                                 directory)
        summary_path = directory / "run-summary.json"
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
            # a summary of an eval run names its judge, its diagnostics and how many reports it wrote
            summary["judge_signature"]["model"], summary["diagnostics"], int(summary["run"]["reports"])
        except (json.JSONDecodeError, KeyError, AttributeError, TypeError, ValueError) as exc:
            raise InputError(f"not a run summary ({type(exc).__name__}: {exc}); was it edited?", summary_path) \
                from None
        try:
            diagnostics = [Diagnostic.from_json(item) for item in summary["diagnostics"]]
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InputError(f"`diagnostics` is not a list of diagnostics ({type(exc).__name__}: {exc}); was it "
                             "edited?", summary_path) from None
        places: dict[Key, tuple[int, int]] = {}
        signatures: list[str] = []  # in file order: the first is the label the shard's scores are signed with
        # A shard that drew no report wrote an empty file: nothing to merge from it, which is not an error.
        path = directory / "judgments.jsonl"
        if path.stat().st_size:
            for line, offset, raw, judgment in iter_judgments_located(path):
                if judgment.key in places:
                    run, request = judgment.key
                    raise InputError(f"a second judgment of the report of run {run!r} for request {request!r}: "
                                     "a run writes each report once; was the file edited or concatenated?", path, line)
                places[judgment.key] = (offset, len(raw))
                if judgment.signature and judgment.signature not in signatures:
                    signatures.append(judgment.signature)
        shard = cls(directory, summary, signatures[0] if signatures else "unknown", places, signatures, diagnostics)
        shard.check_complete()
        return shard

    @property
    def shard(self) -> Shard | None:
        """The --shard I/N its run judged (None for a run without --shard), from its run summary."""
        spec = (self.summary.get("run") or {}).get("shard")
        return Shard.parse(spec) if spec else None

    def check_complete(self) -> None:
        """The judgments.jsonl must hold every report its run-summary.json counts: a run killed while it wrote
        judgments.jsonl in place (before outputs were swapped in whole) left a partial log beside an older
        summary (its count is `run.reports`)."""
        expected = int(self.summary["run"]["reports"])
        if expected != len(self.places):
            raise InputError(f"judgments.jsonl holds {len(self.places)} reports but run-summary.json counts "
                             f"{expected}: a run into it did not finish (killed?); rerun that shard's eval into it "
                             "(add --resume), then merge", self.directory)

    def judgments(self) -> Iterator[ReportJudgment]:
        """This shard's judgments, read from its file one at a time."""
        path = self.directory / "judgments.jsonl"
        return iter_judgments(path) if path.stat().st_size else iter(())


@dataclass
class Merged:
    paths: dict[str, Path]
    reports: int
    notes: list[str] = field(default_factory=list)   # what the merge could not carry over, for the user
    rows: list[Any] = field(default_factory=list)    # the merged `all` rows (what the leaderboards show), to print
    failure: str | None = None  # why a shard's run failed: the merged run failed too (the CLI exits 5, as eval)


def merge_outputs(directories: Sequence[str | Path], out_dir: str | Path) -> Merged:
    if not directories:
        raise InputError("nothing to merge: give the output directories of the shards")
    out_dir = Path(out_dir)
    _check_out_is_no_input(out_dir, [Path(d) for d in directories])
    with ExitStack() as held:
        for directory in directories:  # no eval may rewrite a shard while it is read
            held.enter_context(reading_lock(Path(directory)))
        shards = [ShardOutput.read(Path(d)) for d in directories]
        _check_same_judge(shards)
        order = _merged_order(shards)  # overlapping shards first: the most specific reason
        notes = _check_whole(shards)
        # the shards are checked: only now is --out touched
        held.enter_context(output_lock(out_dir, "merge"))
        work = WorkingFolder(out_dir)
        work.start()
        try:
            merged = _merge(shards, order, notes, work)
            merged.paths = work.commit(OUTPUT_NAMES)
        except BaseException:
            work.discard()
            raise
    return merged


def _check_out_is_no_input(out_dir: Path, directories: list[Path]) -> None:
    """Merging into a shard's folder would replace that shard's files while they are read (its cache-log lines
    were lost)."""
    for directory in directories:
        if out_dir.resolve() == directory.resolve():
            raise InputError(f"--out {out_dir} is one of the shards being merged; write the merge to another folder")


def _merge(shards: list[ShardOutput], order: list[tuple[Key, ShardOutput]], notes: list[str], work: WorkingFolder
           ) -> Merged:
    """The merged outputs, written in the working folder of --out (an OSError becomes the OutputError eval gives)."""
    paths = {name: work.file(name) for name in OUTPUT_NAMES}
    try:
        _write_merged_judgments(order, paths["judgments.jsonl"])
        scores, score_signature, score_notes = score(
            iter_judgments(paths["judgments.jsonl"]) if order else iter(()),
            shards[0].judge_label)
        write_score_files(scores, score_signature, paths["scores.tsv"], paths["leaderboard.tsv"])
        failure = "; ".join(f"shard {f'{s.shard} ({s.directory})' if s.shard else s.directory} failed: "
                            f"{s.summary['failed']}" for s in shards if s.summary.get("failed")) or None
        summary = run_summary(shards[0].summary["judge_signature"], score_signature,
                              _sum_usage([s.summary.get("usage", {}) for s in shards]),
                              max(float(s.summary.get("seconds", 0.0)) for s in shards), failure,
                              _merged_diagnostics(shards, score_notes), _merged_run(shards, len(order)))
        write_run_summary(paths["run-summary.json"], summary)
        _merge_cache_logs(shards, [key for key, _ in order], paths["cache-log.jsonl"])
    except OSError as exc:
        raise work.output_error(exc, OUTPUT_NAMES) from exc
    leftovers = sorted({p.name for s in shards for p in s.directory.glob("*.scores.tsv")} - {"scores.tsv"})
    notes += [f"not merged: {name} (baseline scores are not additive; rerun the baselines on all the reports)"
              for name in leftovers]
    notes += [f"{s.directory} holds an unfinished run (killed?): merged its last finished run"
              for s in shards if WorkingFolder(s.directory).exists()]
    return Merged(paths, len(order), notes, scores.aggregate_rows(), failure)


def _merged_run(shards: list[ShardOutput], reports: int) -> dict[str, Any]:
    """The `run` facts of the merged summary: the first shard's settings (timeout, servers, the embedded judge's
    kernels), the counts summed, no shard of its own, and the folders it was merged from."""
    first = shards[0].summary.get("run") or {}
    run = {"timeout_seconds": first.get("timeout_seconds"), "servers": first.get("servers"), "shard": None,
           "resumed_reports": sum(int((s.summary.get("run") or {}).get("resumed_reports") or 0) for s in shards),
           "reports": reports, "merged_from": [str(s.directory) for s in shards]}
    if "kernels" in first:
        run["kernels"] = first["kernels"]
    return run


def _merged_diagnostics(shards: list[ShardOutput], score_notes: list[str]) -> Diagnostics:
    """The diagnostics a single run over all the reports gives, from the shards' structured ones: each stage's
    (DIAGNOSTIC_SOURCES) in a run's order; within a stage, those about one input by their place (reports by file
    and line, then requests by id), then the others as they came; one the shards share is said once. The scoring
    ones are the merged judgments' own (`score_notes`): the shards' were about their part of the reports."""
    by_source: dict[str, dict[Diagnostic, None]] = {}
    for shard in shards:
        for item in shard.diagnostics:
            if item.source != "scores":
                by_source.setdefault(item.source, {}).setdefault(item, None)
    by_source["scores"] = {Diagnostic(note, "scores"): None for note in score_notes}
    stages = sorted(by_source, key=lambda source: DIAGNOSTIC_SOURCES.index(source)
                    if source in DIAGNOSTIC_SOURCES else len(DIAGNOSTIC_SOURCES))  # stable: others as they came
    merged = Diagnostics()
    for source in stages:
        placed = sorted((item for item in by_source[source] if item.place is not None),
                        key=lambda item: (item.place or (2, "", 0), item.message))
        for item in placed + [item for item in by_source[source] if item.place is None]:
            merged.add(item)
    return merged


def _check_whole(shards: list[ShardOutput]) -> list[str]:
    """Refuse a set of `eval --shard I/N` outputs that is not all N shards, each once; outputs of runs without
    --shard (each over its own part of the reports) cannot be checked, and the note says so."""
    parts = [s.shard for s in shards]
    if all(part is None for part in parts):
        return ([] if len(shards) == 1 else
                ["these runs record no --shard I/N, so merge cannot check that no part of the evaluation is missing"])
    if any(part is None for part in parts):
        plain = next(s.directory for s in shards if s.shard is None)
        raise InputError(f"{plain} was not run with --shard I/N but the others were; merge the N shards of one "
                         "evaluation")
    counts = sorted({part.count for part in parts if part})
    if len(counts) > 1:
        raise InputError(f"shards of different counts ({', '.join(f'/{n}' for n in counts)}): merge the N shards "
                         "of one evaluation")
    count = counts[0]
    seen: dict[int, Path] = {}
    for shard in shards:
        index = shard.shard.index if shard.shard else 0
        if index in seen:
            raise InputError(f"shard {index}/{count} given twice: {seen[index]} and {shard.directory}")
        seen[index] = shard.directory
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        given = ", ".join(f"{i}/{count} ({seen[i]})" for i in sorted(seen))
        raise InputError(f"shard {', '.join(missing)} missing: got {given}; give the --out folder of every shard")
    return []


def _check_same_judge(shards: list[ShardOutput]) -> None:
    labels: dict[str, Path] = {}
    for shard in shards:
        labels.setdefault(shard.judge_label, shard.directory)
        for signature in shard.signatures:
            labels.setdefault(signature, shard.directory)
    if len(labels) > 1:
        first, second = list(labels.items())[:2]
        raise InputError(f"the shards were judged with different settings: {first[1]} has {first[0]}, "
                         f"{second[1]} has {second[0]}; merge only shards of one evaluation")
    signatures = {json.dumps(s.summary.get("judge_signature"), sort_keys=True) for s in shards}
    if len(signatures) > 1:
        raise InputError("the shards' run-summary.json files name different judge signatures; merge only shards "
                         "of one evaluation")


def _merged_order(shards: list[ShardOutput]) -> list[tuple[Key, ShardOutput]]:
    """Every report once, with the shard that has it, in the order a single run writes (evaluate() judges the
    reports sorted by (run_id, request_id))."""
    where: dict[Key, ShardOutput] = {}
    for shard in shards:
        for key in shard.places:
            if key in where:
                run, request = key
                raise InputError(f"the report of run {run!r} for request {request!r} is in {where[key].directory} "
                                 f"and in {shard.directory}: the shards overlap (the same directory twice, or "
                                 "shards of different --shard I/N counts?)")
            where[key] = shard
    return sorted(where.items(), key=lambda item: item[0])


class _ByteRanges:
    """Reads byte ranges of several files, each file opened once (closed when the block ends)."""

    def __init__(self) -> None:
        self._handles: dict[Path, IO[bytes]] = {}

    def __enter__(self) -> _ByteRanges:
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles.values():
            handle.close()

    def read(self, path: Path, offset: int, length: int) -> bytes:
        handle = self._handles.get(path) or self._handles.setdefault(path, path.open("rb"))
        handle.seek(offset)
        return handle.read(length)


def _write_merged_judgments(order: list[tuple[Key, ShardOutput]], path: Path) -> None:
    """The merged judgments.jsonl: each record read from its shard, written by `write_judgments`."""
    with _ByteRanges() as ranges:
        write_judgments(path, (next(iter_judgments(ranges.read(shard.directory / "judgments.jsonl",
                                                               *shard.places[key]).decode("utf-8")))
                               for key, shard in order))


def _sum_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards' usage as one run's: counts and costs summed; a flag (cost_known) true only if true in every
    shard; a reason (`stopped`: why a shard gave up on its server) every shard's that has one, or None."""
    total: dict[str, Any] = {}
    for usage in usages:
        for name, value in usage.items():
            if isinstance(value, bool):  # e.g. cost_known: known only if known in every shard
                total[name] = total.get(name, True) and value
            elif isinstance(value, int | float):
                total[name] = total.get(name, 0) + value
            elif value is None or isinstance(value, str):
                total[name] = "; ".join(filter(None, (total.get(name), value))) or None
    if isinstance(total.get("cost"), float):
        total["cost"] = round(total["cost"], 10)  # summing shard costs must not print 0.30000000000000004
    return total


def _merge_cache_logs(shards: list[ShardOutput], order: list[Key], path: Path) -> None:
    """The shards' cache-log lines in the merged order. Only where each report's lines are is kept in memory (a
    shard writes a report's lines together, so that is usually one block per report)."""
    blocks: dict[Key, list[tuple[Path, int, int]]] = {}
    for shard in shards:
        log = shard.directory / "cache-log.jsonl"
        if not log.is_file():
            continue
        offset = 0
        with log.open("rb") as lines:
            for number, line in enumerate(lines, start=1):
                try:
                    entry = json.loads(line)
                    key = (entry["run_id"], entry["request_id"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise InputError("not a cache-log line (needs run_id and request_id)", log, number) from None
                places = blocks.setdefault(key, [])
                if places and places[-1][0] == log and places[-1][1] + places[-1][2] == offset:
                    places[-1] = (log, places[-1][1], places[-1][2] + len(line))  # the block goes on
                else:
                    places.append((log, offset, len(line)))
                offset += len(line)
    with _ByteRanges() as ranges, path.open("wb") as out:
        for key in order:
            for log, start, length in blocks.get(key, []):
                block = ranges.read(log, start, length)
                out.write(block if block.endswith(b"\n") else block + b"\n")

"""The library path behind `--human`: the judge's scores of every report, human judgments of a sample of them,
and the prediction-powered estimates that follow (ppi.tsv, ppi-pairs.tsv, ppi.json).

`argue-judge score ... --human FILE` and `eval ... --human FILE` call `estimate_with_humans` then
`write_ppi_files`; a notebook calls the same. The estimators are judge.metrics.ppi (formulas), judge.metrics.sampling
(designs) and judge.metrics.corrected (runs, pairs, ranking); docs/ppi.md explains them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import replace
from pathlib import Path

from judge.diagnostics import Diagnostics
from judge.errors import InputError
from judge.formats._jsonl import expand_paths, is_literal, source_name
from judge.formats.atomic import staged
from judge.formats.judgments import NuggetSummary, ReportJudgment
from judge.formats.pairing import check_same_report, sentence_texts
from judge.formats.reports import ReportIndex
from judge.formats.scores import format_value, tsv_row
from judge.formats.sniff import naming_the_format
from judge.judging.judgments_reader import iter_judgments_located
from judge.judging.signature import ScoreSignature
from judge.labels import CitationPolicy
from judge.metrics import Scores
from judge.metrics.corrected import PPI_MEASURES, CorrectedScores, correct_scores
from judge.metrics.ppi import Estimate, Interval
from judge.metrics.sampling import Design, Inclusion, check_subset
from judge.run.score import score
from judge.types import NuggetBank

PPI_FILES = ("ppi.tsv", "ppi-pairs.tsv", "ppi.json")
RUN_COLUMNS = ("run_id", "measure", "rank", "reports", "labelled", "judge_only", "human_only", "human_low",
               "human_high", "ppi", "ppi_low", "ppi_high", "lambda", "effective_labels", "status")
PAIR_COLUMNS = ("measure", "run_a", "run_b", "requests", "labelled", "judge_diff", "human_diff", "ppi_diff",
                "ppi_low", "ppi_high", "distinguishable", "status")


def human_digest(paths: Sequence[str | Path]) -> str:
    """A short hash of the human judgments' bytes (every file, in the order given; a directory's files sorted)."""
    digest = hashlib.sha256()
    for source in expand_paths(list(paths)):
        digest.update(source.encode("utf-8") if is_literal(source) else Path(source).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:8]


# What the judge's side knows of each report: its sentences' texts (after judging) or only their number (before).
JudgedReports = Mapping[tuple[str, str], Sequence[str] | int]


def _read_checked(paths: Sequence[str | Path], judged: JudgedReports | Set[tuple[str, str]]
                  ) -> list[tuple[str, ReportJudgment]]:
    """The human records with their file's name, each file checked to judge a subset of `judged`, each record the
    same report as the judge's (same sentences, when `judged` maps reports to them), no report judged twice."""
    records: list[tuple[str, ReportJudgment]] = []
    seen: set[tuple[str, str]] = set()
    for path in paths:
        name = source_name(path)
        # the judgments format, as assessors write it
        with naming_the_format("an argue-judge judgments file"):
            file_records = list(iter_judgments_located(path))
        check_subset(set(judged), [j.key for _, _, _, j in file_records], name)
        for line, _, _, j in file_records:
            if j.key in seen:
                raise InputError(f"two human judgments of run {j.run_id} request {j.request_id}", name, line)
            seen.add(j.key)
            if isinstance(judged, Mapping):
                check_same_report(j, judged[j.key], name, line)
            records.append((name, j))
    return records


def _with_banks(records: list[tuple[str, ReportJudgment]], judged: Iterable[ReportJudgment]
                ) -> list[tuple[str, ReportJudgment]]:
    # A record without a nugget bank gets the judge's record's bank for its request: the bank belongs to the
    # request, not to the assessor, and recall is undefined without it.
    nuggets: dict[str, list[NuggetSummary]] = {}
    for j in judged:
        if j.nuggets is not None:
            nuggets.setdefault(j.request_id, j.nuggets)
    return [(name, j if j.nuggets is not None or j.request_id not in nuggets
             else j.model_copy(update={"nuggets": nuggets[j.request_id]})) for name, j in records]


def read_human(paths: Sequence[str | Path], judged: Iterable[ReportJudgment]) -> list[ReportJudgment]:
    """Human judgments records, each file checked to judge a subset of the judged reports, each record the same
    report (same sentences) as the judge's (InputError naming the file and line otherwise). A record without a
    nugget bank gets the judge's record's bank for its request."""
    judged = list(judged)
    reports = {j.key: sentence_texts(j) for j in judged}
    return [j for _, j in _with_banks(_read_checked(paths, reports), judged)]


class _ReportTexts(Mapping[tuple[str, str], Sequence[str]]):
    """The sentences of each indexed report, read from its file only when a human record asks for it."""

    def __init__(self, reports: ReportIndex):
        self._reports = reports
        self._entries = {entry.key: entry for entry in reports.entries}

    def __getitem__(self, key: tuple[str, str]) -> Sequence[str]:
        return tuple(s.text for s in self._reports.read(self._entries[key]).sentences)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def check_human_files(paths: Sequence[str | Path], reports: ReportIndex, design: Design) -> None:
    """Refuse, before any judging, human files that judge reports outside `reports`, or another version of one
    (other sentences), judge one twice, or do not fit the design (InputError naming the file and line)."""
    texts = _ReportTexts(reports)
    keys = {j.key for _, j in _read_checked(paths, texts)}
    Inclusion(design, set(texts), keys, ", ".join(str(p) for p in paths))


def human_warnings(records: list[tuple[str, ReportJudgment]], policy: CitationPolicy = "all",
                   banks: Mapping[str, NuggetBank] | None = None) -> list[str]:
    """What scoring each human file says of it (sentences judged without an outcome, undefined precision, ...),
    each warning led by the file's name: the same warnings `argue-judge score FILE` gives."""
    found: list[str] = []
    for name in dict.fromkeys(name for name, _ in records):
        _, _, warnings = score([j for n, j in records if n == name], "human", policy, banks)
        found += [f"{name}: {warning}" for warning in warnings]
    return found


def estimate_with_humans(judge_scores: Scores, judge_signature: ScoreSignature, human_paths: Sequence[str | Path],
                         judged: Iterable[ReportJudgment], design: Design = "reports", confidence: float = 0.95,
                         policy: CitationPolicy = "all", banks: Mapping[str, NuggetBank] | None = None,
                         diagnostics: Diagnostics | None = None) -> tuple[CorrectedScores, ScoreSignature]:
    """Prediction-powered estimates of every run's ARGUE measures and of every pair's difference, with the score
    signature extended by the human sample (hash, design, confidence). `judged`: the judge's records (for the
    subset check, the sentences each human record must share and the nugget banks); raises InputError on a human
    file that is not a subset, a record of another version of a report, or (design 'requests') a file that
    judged part of a request. The human files' own warnings go to `diagnostics` (source "human"): every
    path that reads a human file reports what `score` of that file alone would."""
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must be between 0 and 1 (e.g. 0.95), not {confidence}")
    judged = list(judged)
    located = _with_banks(_read_checked(human_paths, {j.key: sentence_texts(j) for j in judged}), judged)
    human_records = [j for _, j in located]
    warnings = human_warnings(located, policy, banks)
    if diagnostics is not None:
        diagnostics.extend(warnings, "human")
    human_scores, _, _ = score(human_records, "human", policy, banks)
    judged_keys = {(run.run_id, request) for run in judge_scores for request in run.reports}
    inclusion = Inclusion(design, judged_keys, {j.key for j in human_records},
                          ", ".join(str(p) for p in human_paths))
    corrected = correct_scores(judge_scores, human_scores, inclusion, confidence)
    signature = replace(judge_signature, human=f"{len(human_records)}@{human_digest(human_paths)}", sample=design,
                        confidence=confidence)
    return corrected, signature


def _number(value: float) -> str:
    return "inf" if value == math.inf else format_value(value)


def _run_row(run_id: str, measure: str, rank: int | None, e: Estimate) -> list[str]:
    return [run_id, measure, "" if rank is None else str(rank), str(e.units), str(e.labelled),
            *(_number(v) for v in (e.judge_only, e.human_only.value, e.human_only.low, e.human_only.high,
                                   e.ppi.value, e.ppi.low, e.ppi.high, e.lam, e.effective_labels)), e.status]


def ppi_json(corrected: CorrectedScores, signature: ScoreSignature) -> dict:
    """The estimates as one JSON document (NaN as null), what the HTML view and scripts read."""
    def clean(value: float) -> float | str | None:
        return None if math.isnan(value) else "inf" if value == math.inf else round(value, 6)

    def interval(i: Interval) -> dict:
        return {"value": clean(i.value), "low": clean(i.low), "high": clean(i.high)}

    def estimate(e: Estimate) -> dict:
        return {"reports": e.units, "labelled": e.labelled, "judge_only": clean(e.judge_only),
                "human_only": interval(e.human_only), "ppi": interval(e.ppi), "lambda": clean(e.lam),
                "effective_labels": clean(e.effective_labels), "status": e.status}

    return {
        "signature": signature.short(), "sample": corrected.design, "confidence": corrected.confidence,
        "measures": [m.name for m in PPI_MEASURES], "notes": list(corrected.notes),
        "runs": [{"run_id": r.run_id, "measure": r.measure, "rank": r.rank, **estimate(r.estimate)}
                 for m in PPI_MEASURES for r in corrected.of_measure(m)],
        "pairs": [{"measure": p.measure, "run_a": p.run_a, "run_b": p.run_b, "distinguishable": p.distinguishable,
                   **estimate(p.estimate)} for p in corrected.pairs],
    }


def write_ppi_files(corrected: CorrectedScores, signature: ScoreSignature, out_dir: Path) -> dict[str, Path]:
    """ppi.tsv (one row per run and measure, best first), ppi-pairs.tsv (one row per pair and measure) and
    ppi.json, each with the signature; written together, renamed into place when all are complete."""
    paths = {name: out_dir / name for name in PPI_FILES}
    header = f"# {signature.short()}\n# sample: {corrected.design}; confidence {corrected.confidence:g}\n"
    runs = [_run_row(r.run_id, r.measure, r.rank, r.estimate) for m in PPI_MEASURES for r in corrected.of_measure(m)]
    pairs = [[p.measure, p.run_a, p.run_b, str(p.estimate.units), str(p.estimate.labelled),
              *(_number(v) for v in (p.estimate.judge_only, p.estimate.human_only.value, p.estimate.ppi.value,
                                     p.estimate.ppi.low, p.estimate.ppi.high)),
              "yes" if p.distinguishable else "no", p.estimate.status] for p in corrected.pairs]
    out_dir.mkdir(parents=True, exist_ok=True)
    with staged(paths.values()) as temp:
        for name, columns, rows in (("ppi.tsv", RUN_COLUMNS, runs), ("ppi-pairs.tsv", PAIR_COLUMNS, pairs)):
            temp[paths[name]].write_text(header + "".join(tsv_row(row, paths[name]) for row in (columns, *rows)),
                                         encoding="utf-8")
        temp[paths["ppi.json"]].write_text(json.dumps(ppi_json(corrected, signature), indent=1) + "\n",
                                           encoding="utf-8")
    return paths

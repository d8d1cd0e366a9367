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


Located = list[tuple[str, int, ReportJudgment]]   # (file name, line, record) of every human record


def _read_files(paths: Sequence[str | Path]) -> Located:
    """Every human record with its file and line; no report judged twice; a file in another known format is
    named as such (an Auto-ARGUE file, a reports file, ...)."""
    located: Located = []
    seen: set[tuple[str, str]] = set()
    for path in paths:
        name = source_name(path)
        with naming_the_format("an argue-judge judgments file"):  # the judgments format, as assessors write it
            for line, _, _, j in iter_judgments_located(path):
                if j.key in seen:
                    raise InputError(f"two human judgments of run {j.run_id} request {j.request_id}", name, line)
                seen.add(j.key)
                located.append((name, line, j))
    return located


def _check_pairs(located: Located, judged: Set[tuple[str, str]], sentences: Mapping[tuple[str, str], Sequence[str]]
                 ) -> None:
    """Each file judges a subset of `judged`, and each record the same report as the judge's (same sentences)."""
    for name in dict.fromkeys(name for name, _, _ in located):
        check_subset(judged, [j.key for n, _, j in located if n == name], name)
    for name, line, j in located:
        check_same_report(j, sentences[j.key], name, line)


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
    located = _read_files(paths)
    texts = _ReportTexts(reports)
    _check_pairs(located, set(texts), texts)
    Inclusion(design, set(texts), {j.key for _, _, j in located}, ", ".join(str(p) for p in paths))


def read_human(paths: Sequence[str | Path], judged: Iterable[ReportJudgment]) -> Located:
    """Human judgments records with their file and line, each file checked to judge a subset of the judged
    reports, each record the same report (same sentences) as the judge's (InputError naming the file and line
    otherwise). Reads `judged` once, keeping the sentences of the human-judged reports alone. A record without a
    nugget bank gets the judge's record's bank for its request: the bank belongs to the request, not to the
    assessor, and recall is undefined without it."""
    located = _read_files(paths)
    wanted = {j.key for _, _, j in located}
    keys: set[tuple[str, str]] = set()
    sentences: dict[tuple[str, str], Sequence[str]] = {}
    nuggets: dict[str, list[NuggetSummary]] = {}
    for j in judged:
        keys.add(j.key)
        if j.key in wanted:
            sentences[j.key] = sentence_texts(j)
        if j.nuggets is not None:
            nuggets.setdefault(j.request_id, j.nuggets)
    _check_pairs(located, keys, sentences)
    return [(name, line, j if j.nuggets is not None or j.request_id not in nuggets
             else j.model_copy(update={"nuggets": nuggets[j.request_id]})) for name, line, j in located]


def human_warnings(located: Located, policy: CitationPolicy = "all",
                   banks: Mapping[str, NuggetBank] | None = None) -> list[str]:
    """What scoring each human file says of it (sentences judged without an outcome, undefined precision, ...),
    each warning led by the file's name: the same warnings `argue-judge score FILE` gives."""
    found: list[str] = []
    for name in dict.fromkeys(name for name, _, _ in located):
        _, _, warnings = score([j for n, _, j in located if n == name], "human", policy, banks)
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
    located = read_human(human_paths, judged)
    human_records = [j for _, _, j in located]
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

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from judge.diagnostics import Diagnostics
from judge.errors import InputError
from judge.formats._jsonl import expand_paths, is_literal, source_name
from judge.formats.atomic import staged
from judge.formats.judgments import NuggetSummary, ReportJudgment, dumps
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
from judge.metrics.sampling import SAMPLE_KEY, Design, Inclusion, WeightedInclusion, check_subset, is_sample_file
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


Located = list[tuple[str, int | None, ReportJudgment]]   # (file name, line, record) of every human record


@dataclass(frozen=True)
class HumanJudgments:
    """Human judgments of a sample, read and checked once: each record with where it is (its file and line, or
    `human[index]` for a record given in memory), the file each belongs to (`groups`, what the per-file checks and
    warnings go by), the sample file given among them (None without one), and the digest of what was given (the
    signature's `human=` field: the files' bytes, or the records' lines as the judgments file holds them)."""

    located: Located
    groups: tuple[str, ...]
    sample: str | Path | None
    digest: str
    names: str

    @classmethod
    def read(cls, paths: Sequence[str | Path], design: Design) -> HumanJudgments:
        """The human judgments files (and a sample file among them, see `_split_sample`); InputError naming the
        file and line of a report judged twice or of a file in another known format."""
        files, sample = _split_sample(paths, design)
        located = _read_files(files)
        return cls(located, tuple(name for name, _, _ in located), sample, human_digest(files),
                   ", ".join(str(p) for p in files))

    @classmethod
    def of(cls, records: Sequence[ReportJudgment], argument: str = "human") -> HumanJudgments:
        """Records given in memory (checked records, e.g. by the API), named `argument[index]`."""
        located: Located = []
        seen: dict[tuple[str, str], int] = {}
        for index, j in enumerate(records):
            if j.key in seen:
                raise InputError(f"two human judgments of run {j.run_id} request {j.request_id} (first at "
                                 f"{argument}[{seen[j.key]}])", f"{argument}[{index}]")
            seen[j.key] = index
            located.append((f"{argument}[{index}]", None, j))
        digest = hashlib.sha256("".join(dumps(j) + "\n" for j in records).encode("utf-8") + b"\0").hexdigest()[:8]
        return cls(located, (argument,) * len(located), None, digest, argument)

    @property
    def records(self) -> list[ReportJudgment]:
        return [j for _, _, j in self.located]

    def by_group(self) -> dict[str, list[ReportJudgment]]:
        found: dict[str, list[ReportJudgment]] = {}
        for group, (_, _, j) in zip(self.groups, self.located, strict=True):
            found.setdefault(group, []).append(j)
        return found

    def check(self, judged: Set[tuple[str, str]], sentences: Mapping[tuple[str, str], Sequence[str]]) -> None:
        """Each file judges a subset of `judged`, and each record the same report as the judge's (same
        sentences)."""
        for group, records in self.by_group().items():
            check_subset(judged, [j.key for j in records], group)
        for name, line, j in self.located:
            check_same_report(j, sentences[j.key], name, line)


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


def check_human(human: HumanJudgments, reports: ReportIndex, design: Design) -> None:
    """Refuse, before any judging, human judgments of reports outside `reports`, or of another version of one
    (other sentences), or that do not fit the design or the sample file (InputError naming the file and line)."""
    texts = _ReportTexts(reports)
    human.check(set(texts), texts)
    labelled = {j.key for j in human.records}
    if human.sample is None:
        Inclusion(design, set(texts), labelled, human.names)
    else:
        _, rows = read_sample(human.sample)
        WeightedInclusion({(r["run_id"], r["request_id"]): float(r["probability"]) for r in rows}, set(texts),
                          labelled, str(human.sample), human.names)


def _split_sample(paths: Sequence[str | Path], design: str) -> tuple[list[str | Path], str | Path | None]:
    """(human judgments files, the sample file if one is among them): a sample file `argue-judge sample` wrote may be
    given as one of the --human files; its probabilities then weight the estimate. One at most, with design
    'reports' (its units are reports)."""
    samples = [p for p in expand_paths(list(paths)) if is_sample_file(p)]
    if len(samples) > 1:
        raise InputError(f"{len(samples)} sample files among the --human files ({samples[0]}, {samples[1]}); give the "
                         "last round's file alone (it holds every round)")
    if samples and design != "reports":
        raise InputError(f"a sample file weights reports; --sample {design} cannot use its weights (leave --sample "
                         "at reports)", str(samples[0]))
    rest = [p for p in expand_paths(list(paths)) if not samples or p != samples[0]]
    if not rest:
        raise InputError("the --human files hold a sample file but no human judgments; add the judged reports",
                         str(samples[0]) if samples else "--human")
    return rest, samples[0] if samples else None


def read_human(human: HumanJudgments, judged: Iterable[ReportJudgment]) -> Located:
    """The human records checked against the judge's (`judged`): each file judges a subset of the judged reports,
    each record the same report (same sentences) as the judge's (InputError naming the file and line otherwise).
    Reads `judged` once, keeping the sentences of the human-judged reports alone. A record without a nugget bank
    gets the judge's record's bank for its request: the bank belongs to the request, not to the assessor, and
    recall is undefined without it."""
    wanted = {j.key for j in human.records}
    keys: set[tuple[str, str]] = set()
    sentences: dict[tuple[str, str], Sequence[str]] = {}
    nuggets: dict[str, list[NuggetSummary]] = {}
    for j in judged:
        keys.add(j.key)
        if j.key in wanted:
            sentences[j.key] = sentence_texts(j)
        if j.nuggets is not None:
            nuggets.setdefault(j.request_id, j.nuggets)
    human.check(keys, sentences)
    return [(name, line, j if j.nuggets is not None or j.request_id not in nuggets
             else j.model_copy(update={"nuggets": nuggets[j.request_id]})) for name, line, j in human.located]


def human_warnings(located: Located, policy: CitationPolicy = "all",
                   banks: Mapping[str, NuggetBank] | None = None, groups: Sequence[str] | None = None) -> list[str]:
    """What scoring each human file says of it (sentences judged without an outcome, undefined precision, ...),
    each warning led by the file's name: the same warnings `argue-judge score FILE` gives. `groups`: the file of
    each record (default: its name)."""
    by_file: dict[str, list[ReportJudgment]] = {}
    for group, (_, _, j) in zip(groups or [name for name, _, _ in located], located, strict=True):
        by_file.setdefault(group, []).append(j)
    found: list[str] = []
    for name, records in by_file.items():
        _, _, warnings = score(records, "human", policy, banks)
        found += [f"{name}: {warning}" for warning in warnings]
    return found


def estimate_with_humans(judge_scores: Scores, judge_signature: ScoreSignature, human: HumanJudgments,
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
    sample = human.sample
    located = read_human(human, judged)
    human_records = [j for _, _, j in located]
    warnings = human_warnings(located, policy, banks, human.groups)
    if diagnostics is not None:
        diagnostics.extend(warnings, "human")
    human_scores, _, _ = score(human_records, "human", policy, banks)
    judged_keys = {(run.run_id, request) for run in judge_scores for request in run.reports}
    files = human.names
    inclusion: Inclusion | WeightedInclusion
    if sample is None:
        inclusion = Inclusion(design, judged_keys, {j.key for j in human_records}, files)
    else:
        header, rows = read_sample(sample)
        inclusion = WeightedInclusion({(r["run_id"], r["request_id"]): float(r["probability"]) for r in rows},
                                      judged_keys, {j.key for j in human_records}, str(sample), files,
                                      str(header.get("kind", "active")))
    corrected = correct_scores(judge_scores, human_scores, inclusion, confidence)
    signature = replace(judge_signature, human=f"{len(human_records)}@{human.digest}",
                        sample=design if sample is None else f"weighted@{human_digest([sample])}",
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


# -- samples the tool draws (`argue-judge sample`), and their files ------------------------------------------



def report_uncertainty(record: ReportJudgment) -> float | None:
    """The judge's expected error on a report, sqrt(mean over its decisions of their doubt)
    (judge.metrics.sampling.decision_doubt: 1 - the confidence its model gave its verdict, or the distance from the
    threshold the verdict was held to); None when no decision of the report carries a confidence."""
    from judge.metrics.sampling import decision_doubt

    doubts = [float(decision_doubt(d.confidence, d.threshold)) for s in record.sentences for d in s.decisions
              if d.confidence is not None]
    return math.sqrt(sum(doubts) / len(doubts)) if doubts else None


def draw_sample(judged: Iterable[ReportJudgment], budget: int, seed: int = 0, min_probability: float | None = None,
                uniform: bool = False, previous: str | Path | None = None) -> tuple[dict, list[dict]]:
    """(header, rows) of a sample of `budget` reports (new ones, on a second round) drawn with the judge's
    confidence setting each report's probability (judge.metrics.sampling.active_probabilities; `uniform`: budget / N
    each), the Pareto draw seeded by `seed`. `min_probability`: the floor (None: a quarter of budget / N). A second
    round (`previous`, the first round's file) draws among the reports not drawn yet; each row then carries its
    probability of having been drawn in either round, 1 - (1 - pi_1)(1 - pi_2)."""
    import numpy as np

    from judge.metrics.sampling import active_probabilities, pareto_draw

    records = list(judged)
    keys = [j.key for j in records]
    if len(set(keys)) != len(keys):
        raise InputError("the judgments hold a report twice; give each report once")
    units = len(keys)
    rounds: list[dict] = []
    settled = np.zeros(units)
    drawn_before: dict[tuple[str, str], dict] = {}
    if previous is not None:
        header, rows = read_sample(previous)
        rounds = list(header["rounds"])
        if header.get("reports") != units:
            raise InputError(f"the sample was drawn from {header.get('reports')} reports, these judgments have "
                             f"{units}; draw the second round from the same judgments", str(previous))
        drawn_before = {(r["run_id"], r["request_id"]): r for r in rows}
        index = {k: i for i, k in enumerate(keys)}
        unknown = [k for k in drawn_before if k not in index]
        if unknown:
            raise InputError(f"the sample lists {len(unknown)} report(s) these judgments do not have "
                             f"({unknown[0][0]}/{unknown[0][1]}); draw the second round from the same judgments",
                             str(previous))
        settled = _settled(records, rounds, units, header["kind"] == "uniform")
        for key, row in drawn_before.items():
            if abs(settled[index[key]] - row["probability"]) > 1e-6:
                raise InputError(f"report {key[0]}/{key[1]} has probability {row['probability']} in the sample but "
                                 f"{settled[index[key]]:.6f} from these judgments; draw the second round from the "
                                 "same judgments", str(previous))
        kind = header["kind"]
        if uniform != (kind == "uniform"):
            raise InputError(f"the first round was {kind}; draw the second the same way", str(previous))
    left = units - len(drawn_before)
    if not 2 <= budget <= left:
        raise InputError(f"--budget must be between 2 and the {left} reports left to draw, not {budget}")
    floor = budget / left / 4 if min_probability is None else min_probability
    if not 0 < floor <= 1:
        raise InputError(f"--min-probability must be in (0, 1], not {min_probability}")
    kind = "uniform" if uniform else "active"
    uncertainty = _uncertainties(records, uniform)
    try:
        pi = active_probabilities(uncertainty, budget, floor, settled)
    except ValueError as error:
        raise InputError(str(error)) from None
    open_units = np.array([k not in drawn_before for k in keys])
    rng = np.random.default_rng(seed)
    chosen = pareto_draw(np.where(open_units, pi, 0.0), budget, rng)
    chosen = [i for i in chosen if open_units[i]]
    rounds.append({"budget": budget, "seed": seed, "min_probability": floor})
    overall = 1 - (1 - settled) * (1 - pi)
    number = len(rounds)
    rows_out = [{**row, "probability": round(float(overall[keys.index(key)]), 9)}
                for key, row in drawn_before.items()]
    rows_out += [{"run_id": keys[i][0], "request_id": keys[i][1], "probability": round(float(overall[i]), 9),
                  "round": number,
                  "uncertainty": None if math.isnan(uncertainty[i]) else round(float(uncertainty[i]), 6)}
                 for i in chosen]
    header = {SAMPLE_KEY: 1, "kind": kind, "unit": "report", "reports": units, "rounds": rounds,
              "without_confidence": int(np.isnan(_raw_uncertainties(records)).sum())}
    return header, rows_out


def _raw_uncertainties(records: Sequence[ReportJudgment]) -> list[float]:
    return [math.nan if (u := report_uncertainty(j)) is None else u for j in records]


def _uncertainties(records: Sequence[ReportJudgment], uniform: bool) -> list[float]:
    """Each report's uncertainty; a report without a confidence gets the mean of the others (all equal: uniform)."""
    raw = _raw_uncertainties(records)
    known = [u for u in raw if not math.isnan(u)]
    if uniform or not known:
        return [1.0] * len(raw)
    mean = sum(known) / len(known)
    return [mean if math.isnan(u) else u for u in raw]


def _settled(records: Sequence[ReportJudgment], rounds: Sequence[dict], units: int, uniform: bool) -> Any:
    """Each report's probability of having been drawn in the rounds so far (recomputed from the judgments)."""
    import numpy as np

    from judge.metrics.sampling import active_probabilities

    settled = np.zeros(units)
    uncertainty = _uncertainties(records, uniform)
    for spec in rounds:
        pi = active_probabilities(uncertainty, spec["budget"], spec["min_probability"], settled)
        settled = 1 - (1 - settled) * (1 - pi)
    return settled


def write_sample(path: Path, header: dict, rows: Sequence[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with staged([path]) as temp:
        temp[path].write_text("".join(json.dumps(line) + "\n" for line in (header, *rows)), encoding="utf-8")
    return path


def read_sample(path: str | Path) -> tuple[dict, list[dict]]:
    """(header, rows) of a sample file; InputError naming the file and line on a malformed one or a probability
    outside (0, 1]."""
    name = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise InputError(f"cannot read the sample file: {error.strerror}", name) from None
    try:
        header = json.loads(lines[0]) if lines else {}
    except ValueError:
        header = {}
    if not isinstance(header, dict) or SAMPLE_KEY not in header or not isinstance(header.get("rounds"), list):
        raise InputError("not a sample file (its first line should be the header `argue-judge sample` writes)",
                         name, 1)
    rows = []
    seen = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (str(row["run_id"]), str(row["request_id"]))
            p = float(row["probability"])
        except (ValueError, KeyError, TypeError):
            raise InputError("each line needs run_id, request_id and a numeric probability", name, number) from None
        if not 0 < p <= 1:
            raise InputError(f"probability {row['probability']} is outside (0, 1]", name, number)
        if key in seen:
            raise InputError(f"report {key[0]}/{key[1]} is listed twice", name, number)
        seen.add(key)
        rows.append(row)
    return header, rows

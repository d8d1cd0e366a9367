"""Label sources -> calibration items.

- `read_attributionbench`: AttributionBench JSONL -> supports_citation items, group = src_dataset.
- `read_wice`: WiCE claim-level JSONL -> supports_citation items (three ways to treat "partially_supported").
- `items_from_nugget_banks`: v3 nugget banks + documents -> document-level answers_nugget items.
- `stratified_sample`: a deterministic, label-stratified subsample.

Each reader takes a path (str or Path; `.gz` is read through gzip) or literal JSONL text (a str containing a
newline or starting with `{`, reported as `<string>`), and raises `judge.errors.InputError(message, path, line)`
on a malformed line or a missing / ill-typed field. Items come out in input order (nugget items: sorted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from judge.calibration.items import PARTIALLY_SUPPORTED, CalibrationItem
from judge.chart import ABSENCE_NUGGET, ANSWERS_NUGGET, SUPPORTS_CITATION
from judge.errors import InputError
from judge.formats._jsonl import iter_jsonl, source_name
from judge.formats.judgments import ReportJudgment
from judge.formats.pairing import check_same_report, sentence_texts
from judge.formats.sniff import naming_the_format
from judge.judging.decisions import DECISION_LABELS
from judge.judging.judgments_reader import iter_judgments_located
from judge.types import Document, NuggetBank

__all__ = [
    "CalibrationItem",
    "ImportResult",
    "items_from_nugget_banks",
    "read_attributionbench",
    "read_paired_judgments",
    "read_wice",
    "stratified_sample",
]

SUPPORTED, NOT_SUPPORTED = DECISION_LABELS[SUPPORTS_CITATION]
ANSWERS, DOES_NOT_ANSWER = DECISION_LABELS[ANSWERS_NUGGET]

PartialPolicy = Literal["strict", "exclude", "separate"]


class ImportResult(BaseModel):
    """Items plus what was left out and why. Iterates (and len()s) over the items."""

    items: list[CalibrationItem] = Field(default_factory=list)
    skipped: dict[str, int] = Field(default_factory=dict, description="reason -> count of items left out")
    missing_doc_ids: list[str] = Field(default_factory=list, description="documents get_doc did not find")

    def __iter__(self) -> Iterator[CalibrationItem]:  # type: ignore[override]
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> CalibrationItem:
        return self.items[index]

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count


# ---------------------------------------------------------------------------------------------------------------
# Plumbing
# ---------------------------------------------------------------------------------------------------------------

def _iter_objects(source: str | Path) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(file name, 1-based line number, object) per non-blank JSONL line; the one JSONL reader of the project."""
    name = source_name(source)
    for number, obj in iter_jsonl(source):
        yield name, number, obj


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _text(obj: dict[str, Any], field: str, name: str, line: int) -> str:
    if field not in obj:
        raise InputError(f"missing field '{field}'", name, line)
    value = obj[field]
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"field '{field}' must be a non-empty string, found {_type(value)}", name, line)
    return value


def _text_list(obj: dict[str, Any], field: str, name: str, line: int) -> list[str]:
    if field not in obj:
        raise InputError(f"missing field '{field}'", name, line)
    value = obj[field]
    if not isinstance(value, list):
        raise InputError(f"field '{field}' must be a list of strings, found {_type(value)}", name, line)
    if not value:
        raise InputError(f"field '{field}' is empty; an item needs at least one text", name, line)
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise InputError(f"field '{field}[{i}]' must be a string, found {_type(text)}", name, line)
    return value


def _id(value: Any, field: str, name: str, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or (isinstance(value, str) and not value.strip()):
        raise InputError(f"field '{field}' must be a non-empty string or an integer, found {_type(value)}",
                         name, line)
    return str(value)


def _unique(item_id: str, seen: dict[str, int], name: str, line: int) -> None:
    if item_id in seen:
        raise InputError(f"item id {item_id!r} already used on line {seen[item_id]}", name, line)
    seen[item_id] = line


# ---------------------------------------------------------------------------------------------------------------
# AttributionBench
# ---------------------------------------------------------------------------------------------------------------

_ATTRIBUTION = {"attributable": SUPPORTED, "not attributable": NOT_SUPPORTED}


def read_attributionbench(source: str | Path) -> ImportResult:
    """AttributionBench JSONL -> supports_citation items.

    Fields used: `id`, `claim`, `references` (list of document texts, all shown together), `attribution_label`
    ("attributable" -> supported, "not attributable" -> not_supported; case and `_` for space tolerated),
    `src_dataset` (-> group). `question` is kept in `extra`.
    """
    result = ImportResult()
    seen: dict[str, int] = {}
    for name, line, obj in _iter_objects(source):
        if "id" not in obj:
            raise InputError("missing field 'id'", name, line)
        item_id = _id(obj["id"], "id", name, line)
        claim = _text(obj, "claim", name, line)
        references = _text_list(obj, "references", name, line)
        raw_label = _text(obj, "attribution_label", name, line)
        label = _ATTRIBUTION.get(raw_label.strip().lower().replace("_", " "))
        if label is None:
            raise InputError(f"attribution_label is {raw_label!r}; expected 'attributable' or 'not attributable'",
                             name, line)
        group = _text(obj, "src_dataset", name, line)
        _unique(item_id, seen, name, line)
        extra: dict[str, Any] = {"source": f"{name}:{line}"}
        if isinstance(obj.get("question"), str):
            extra["question"] = obj["question"]
        result.items.append(CalibrationItem(item_id=item_id, decision=SUPPORTS_CITATION, claim=claim,
                                            documents=references, human_label=label, group=group, extra=extra))
    return result


# ---------------------------------------------------------------------------------------------------------------
# WiCE
# ---------------------------------------------------------------------------------------------------------------

_WICE_LABELS = ("supported", "partially_supported", "not_supported")


def read_wice(source: str | Path, partial: PartialPolicy = "strict", group: str | None = "WiCE") -> ImportResult:
    """WiCE claim-level JSONL -> supports_citation items.

    Fields used: `claim`, `evidence` (sentences; the document text is them joined by newlines), `label`
    (supported / partially_supported / not_supported); the item id is `meta.id` (or `id`), else
    `wice-<line>`; `supporting_sentences` and the claim's article title are kept in `extra`.

    `partial`: "strict" maps partially_supported -> not_supported (the ARGUE reading: a citation must support
    the whole sentence); "exclude" drops those items (counted in `skipped["partially_supported"]`);
    "separate" keeps the label "partially_supported" as its own class.
    Every item gets `group` (default "WiCE", so a mix with AttributionBench items breaks down by source).
    """
    if partial not in ("strict", "exclude", "separate"):
        raise ValueError(f"partial must be 'strict', 'exclude' or 'separate', not {partial!r}")
    result = ImportResult()
    seen: dict[str, int] = {}
    for name, line, obj in _iter_objects(source):
        claim = _text(obj, "claim", name, line)
        evidence = _text_list(obj, "evidence", name, line)
        raw_label = _text(obj, "label", name, line)
        if raw_label not in _WICE_LABELS:
            raise InputError(f"label is {raw_label!r}; expected one of {', '.join(_WICE_LABELS)}", name, line)
        meta = obj.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise InputError(f"field 'meta' must be an object, found {_type(meta)}", name, line)
        if meta and "id" in meta:
            item_id = _id(meta["id"], "meta.id", name, line)
        elif "id" in obj:
            item_id = _id(obj["id"], "id", name, line)
        else:
            item_id = f"wice-{line}"
        _unique(item_id, seen, name, line)
        if raw_label == PARTIALLY_SUPPORTED:
            if partial == "exclude":
                result.skip(PARTIALLY_SUPPORTED)
                continue
            label = NOT_SUPPORTED if partial == "strict" else PARTIALLY_SUPPORTED
        else:
            label = raw_label
        extra: dict[str, Any] = {"source": f"{name}:{line}", "original_label": raw_label}
        if "supporting_sentences" in obj:
            extra["supporting_sentences"] = obj["supporting_sentences"]
        if meta and isinstance(meta.get("claim_title"), str):
            extra["title"] = meta["claim_title"]
        result.items.append(CalibrationItem(item_id=item_id, decision=SUPPORTS_CITATION, claim=claim,
                                            documents=["\n".join(evidence)], human_label=label, group=group,
                                            extra=extra))
    return result


# ---------------------------------------------------------------------------------------------------------------
# Nugget banks -> document-level answers_nugget
# ---------------------------------------------------------------------------------------------------------------

def _lookup(get_doc: Callable[[str], Document | None], doc_id: str) -> Document | None:
    try:
        return get_doc(doc_id)
    except KeyError:
        return None


def _cached_document(get_doc: Callable[[str], Document | None], doc_id: str,
                     cache: dict[str, Document | None], result: ImportResult) -> Document | None:
    """Look each document up once per import; a missing one is recorded once in `result.missing_doc_ids`."""
    if doc_id not in cache:
        cache[doc_id] = _lookup(get_doc, doc_id)
        if cache[doc_id] is None:
            result.missing_doc_ids.append(doc_id)
    return cache[doc_id]


def items_from_nugget_banks(
    banks: Mapping[str, NuggetBank],
    get_doc: Callable[[str], Document | None],
    *,
    pool: Mapping[str, Iterable[str]] | None = None,
) -> ImportResult:
    """(document, nugget) pairs of each request -> answers_nugget items.

    A request's documents are `pool[request_id]` when a pool is given (e.g. the judged documents), else every
    document the request's nugget bank cites for any answer. For each non-absence nugget and each such document:
    "answers" when the assessor bound at least one of the nugget's answers to the document, "does_not_answer"
    when the document attests none of them. Absence nuggets are left out (no documents; a separate decision)
    and counted in `skipped["absence_nugget"]`. A pair whose document `get_doc` cannot find (None or KeyError)
    is skipped and counted in `skipped["missing_document"]`; the ids go to `missing_doc_ids`.

    Order: requests sorted, nuggets in bank order, documents sorted. item_id = "<request>/<nugget>/<doc>",
    claim = the nugget question, group = the request id; `extra` holds request_id, nugget_id, answers (all
    answer texts), attested_answers (those bound to this document), importance, aggregator.
    """
    result = ImportResult()
    cache: dict[str, Document | None] = {}
    for request_id in sorted(banks):
        bank = banks[request_id]
        if pool is not None and request_id in pool:
            doc_ids = sorted(set(pool[request_id]))
        else:
            doc_ids = sorted({d for n in bank.nuggets if not n.absence for a in n.answers for d in a.doc_ids})
        for nugget in bank.nuggets:
            if nugget.absence:
                result.skip(ABSENCE_NUGGET)
                continue
            answers = [a.text for a in nugget.answers]
            for doc_id in doc_ids:
                doc = _cached_document(get_doc, doc_id, cache, result)
                if doc is None:
                    result.skip("missing_document")
                    continue
                attested = [a.text for a in nugget.answers_attested_by(frozenset({doc_id}))]
                text = f"{doc.title}\n\n{doc.text}" if doc.title else doc.text
                result.items.append(CalibrationItem(
                    item_id=f"{request_id}/{nugget.nugget_id}/{doc_id}", decision=ANSWERS_NUGGET,
                    claim=nugget.question, documents=[text], doc_ids=[doc_id],
                    human_label=ANSWERS if attested else DOES_NOT_ANSWER, group=request_id,
                    extra={"request_id": request_id, "nugget_id": nugget.nugget_id, "answers": answers,
                           "attested_answers": attested, "importance": nugget.importance,
                           "aggregator": nugget.aggregator}))
    result.missing_doc_ids.sort()
    return result


# ---------------------------------------------------------------------------------------------------------------
# Stratified sampling
# ---------------------------------------------------------------------------------------------------------------

def _allocate(counts: dict[tuple[str, str], int], n: int) -> dict[tuple[str, str], int]:
    """Proportional allocation of n over strata (largest remainder), at least one per stratum when n allows."""
    total = sum(counts.values())
    keys = sorted(counts)
    if n < len(keys):
        # Not enough for one each: the n largest strata (ties by key) get one.
        chosen = sorted(keys, key=lambda k: (-counts[k], k))[:n]
        return {k: (1 if k in chosen else 0) for k in keys}
    quota = {k: n * counts[k] / total for k in keys}
    alloc = {k: min(counts[k], max(1, math.floor(quota[k]))) for k in keys}
    while sum(alloc.values()) < n:  # hand out the rest by largest remainder (ties by key)
        k = min((k for k in keys if alloc[k] < counts[k]), key=lambda k: (-(quota[k] - alloc[k]), k))
        alloc[k] += 1
    while sum(alloc.values()) > n:  # the forced ones overshot: take from the most over-allocated
        k = min((k for k in keys if alloc[k] > 1), key=lambda k: (quota[k] - alloc[k], k))
        alloc[k] -= 1
    return alloc


def stratified_sample(items: Iterable[CalibrationItem], n: int, seed: int = 0) -> list[CalibrationItem]:
    """A sample of n items stratified by (decision, human label), in the items' original order.

    Allocation is proportional to stratum size by the largest-remainder method, with at least one item per
    stratum when n >= the number of strata (the overshoot is taken back from the most over-allocated strata);
    with fewer than one per stratum, the largest strata get one each. Within a stratum, items are drawn
    without replacement with numpy.random.default_rng(seed) (one generator, strata visited in sorted order),
    so the sample depends only on the items, n and seed. n >= len(items) returns all items.
    """
    pool = list(items)
    if n < 0:
        raise ValueError("n must be >= 0")
    if n >= len(pool):
        return pool
    strata: dict[tuple[str, str], list[int]] = {}
    for i, item in enumerate(pool):
        strata.setdefault((item.decision, item.human_label), []).append(i)
    alloc = _allocate({k: len(v) for k, v in strata.items()}, n)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for key in sorted(strata):
        members = strata[key]
        take = alloc[key]
        if take:
            chosen.extend(members[i] for i in rng.choice(len(members), size=take, replace=False))
    return [pool[i] for i in sorted(chosen)]


def _located(paths: Iterable[str | Path]) -> list[tuple[str, int, ReportJudgment]]:
    found = []
    for path in paths:
        with naming_the_format("an argue-judge judgments file"):
            found += [(source_name(path), line, j) for line, _, _, j in iter_judgments_located(path)]
    return found


def read_paired_judgments(human: list[str | Path], judged: list[str | Path], *,
                          located: tuple[list[tuple[str, int | None, ReportJudgment]] | None, ...] = (None, None)
                          ) -> tuple[list[ReportJudgment], list[ReportJudgment], dict[str, list[ReportJudgment]]]:
    """Human judgments and the judge's of the same reports (`calibrate --human --judged`). InputError naming both
    files when no report (run, request) is in both, and naming the human file and line of a record that judges
    another version of a report the judge judged (other sentences): its labels would pair with the wrong
    sentences. Also returns each file's records, by name, for the warnings scoring each file gives. A sample file
    (`argue-judge sample`) among them is refused: agreement counts every item alike and cannot use its weights."""
    from judge.metrics.sampling import is_sample_file

    for path in human if located[0] is None else ():
        if is_sample_file(path):
            raise InputError("a sample file's weights cannot be used by calibrate's agreement statistics (they count "
                             "every item alike); give the human judgments alone (score --human uses the weights)",
                             str(path))
    # `located`: records already read (the API's, named human[index]) for either side; `human`, `judged` name them
    human_records = located[0] if located[0] is not None else _located(human)
    judged_records = located[1] if located[1] is not None else _located(judged)
    judged_reports = {j.key: sentence_texts(j) for _, _, j in judged_records}
    common = [(name, line, j) for name, line, j in human_records if j.key in judged_reports]
    if not common:
        raise InputError(f"no report (run_id, request_id) is judged in both {', '.join(map(str, human))} (--human) "
                         f"and {', '.join(map(str, judged))} (--judged): nothing can be compared; give the judge's "
                         "judgments of the reports the assessors judged")
    for name, line, j in common:
        check_same_report(j, judged_reports[j.key], name, line)
    files: dict[str, list[ReportJudgment]] = {}
    for name, _, j in (*human_records, *judged_records):
        files.setdefault(name, []).append(j)
    return [j for _, _, j in human_records], [j for _, _, j in judged_records], files

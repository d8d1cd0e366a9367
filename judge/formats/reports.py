"""Report runs (JSONL, one report per line) in the TREC NeuCLIR 2024 and TREC RAG 2024 formats.

NeuCLIR 2024:
    {"metadata": {"run_id", "topic_id", "team_id"?, ...},
     "responses": [{"text", "citations": [doc_id, ...] | {doc_id: score, ...}}, ...], "references"?: [...]}
TREC RAG 2024:
    {"metadata": {"run_id", "narrative_id" | "topic_id", "team_id"?, ...},
     "answer": [{"text", "citations": [int, ...]}, ...], "references": [doc_id, ...]}

RAGTIME 2025: like NeuCLIR, with the request id in `metadata.request_id` and citations as {doc_id: confidence}.
All ids found in `metadata` (topic_id, narrative_id, request_id) must agree.

Either variant may mix the citation forms: a string is a document id, an integer is a 0-based index into the
report's top-level `references` list. Score dictionaries keep their JSON key order (scores are ignored).
Each response entry is one sentence, exactly as the writer segmented it; its index is its 0-based position.

`read_reports` returns every report in memory; `ReportIndex.scan` checks every report the same way but keeps
only where each one is, and reads it again when it is needed (a TREC-size evaluation holds tens of thousands).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from judge.errors import InputError
from judge.formats import registry
from judge.formats._jsonl import (
    Source,
    Sources,
    expand_paths,
    get_id,
    is_literal,
    iter_jsonl_located,
    read_jsonl_line,
    read_one,
    source_name,
    type_name,
)
from judge.types import Report, Sentence

# Where each variant keeps the request id, in order of preference. `request_id` is accepted too because some
# tools normalise to it.
_REQUEST_ID_KEYS = ("topic_id", "narrative_id", "request_id")
# A report's `source` as a reader sets it: "file:line".
_LOCATED = re.compile(r"(.+):(\d+)")


def read_reports(sources: Sources) -> list[Report]:
    """Every report in `sources` (files, directories of *.jsonl, or literal JSONL text), in input order.

    A report with zero sentences is returned as is; deciding whether to warn is the caller's business. A file
    without any report is an InputError: an evaluation of nothing must not look like a success.
    """
    return [report for report, *_ in _each_report(sources)]


def _each_report(sources: Sources) -> Iterator[tuple[Report, Source, int, bytes]]:
    """(report, its source, byte offset of its line, the line's bytes) for every report, checked; refuses a
    duplicate (run, request) and a file without reports."""
    seen: dict[tuple[str, str], str] = {}
    for source in expand_paths(sources):
        name = source_name(source)
        found = 0
        for line, offset, raw, record in iter_jsonl_located(source):
            found += 1
            report = _read_report(record, name, line)
            if report.key in seen:
                raise InputError(
                    f"duplicate report for run_id {report.run_id!r} and request {report.request_id!r} "
                    f"(first at {seen[report.key]}); each run may answer a request only once — remove one",
                    name, line)
            seen[report.key] = report.source or ""
            yield report, source, offset, raw
        if not found:
            raise InputError("no reports in this file (it is empty); give one JSON report per line", name)


@dataclass(frozen=True, slots=True)
class ReportEntry:
    """What a run needs to know of a report before judging it, and where to read the rest."""

    run_id: str
    request_id: str
    name: str                  # the file as messages name it
    line: int
    sentences: int
    # Where the report is: (path, byte offset, byte length) of its line in a plain file; for a compressed file or
    # literal text, which cannot be read from the middle, the line's bytes (zlib-compressed); or the report.
    where: tuple[Path, int, int] | bytes | Report

    @property
    def key(self) -> tuple[str, str]:
        return (self.run_id, self.request_id)

    @property
    def source(self) -> str | None:
        """`file:line`, as Report.source; for a report given in memory, its name (`reports[3]`) or None."""
        if not self.name:
            return None
        return f"{self.name}:{self.line}" if self.line else self.name


class ReportIndex(Sequence[Report]):
    """Reports read on demand. `scan` checks every report once, as `read_reports` does (same errors, same file:line),
    but keeps only an entry per report (ids, place, sentence count) and the ids of the documents they cite; a
    report is parsed again from its file when it is asked for (`read`, indexing, iteration). Memory then grows with
    the number of reports by a few hundred bytes each, never with their text.

    A plain file must not change while the run reads it (its size and modification time are checked at each
    read); a .gz file or literal text keeps each line's compressed bytes in memory instead."""

    def __init__(self, entries: list[ReportEntry], cited: dict[str, None],
                 stamps: dict[Path, tuple[int, int]] | None = None):
        self.entries = entries
        self.cited = cited        # every cited document id, in order of first citation (an ordered set)
        self._stamps = stamps or {}

    @classmethod
    def scan(cls, sources: Sources, keep: Callable[[Report], bool] | None = None) -> ReportIndex:
        """Every report of `sources`, checked; with `keep`, the index holds only the reports it accepts (all are
        checked, duplicates too, so a shard refuses what a whole run refuses)."""
        entries: list[ReportEntry] = []
        cited: dict[str, None] = {}
        stamps: dict[Path, tuple[int, int]] = {}
        shared: dict[str, str] = {}  # one copy of each id and file name, however many reports repeat it
        for report, source, offset, raw in _each_report(sources):
            if keep is not None and not keep(report):
                continue
            where: tuple[Path, int, int] | bytes
            if _seekable(source):
                path = Path(source)
                if path not in stamps:
                    stamps[path] = _stamp(path)
                where = (path, offset, len(raw))
            else:
                where = zlib.compress(raw)
            name, _, line = (report.source or "").rpartition(":")
            entries.append(ReportEntry(shared.setdefault(report.run_id, report.run_id),
                                       shared.setdefault(report.request_id, report.request_id),
                                       shared.setdefault(name, name), int(line), len(report.sentences), where))
            for sentence in report.sentences:
                cited.update(dict.fromkeys(sentence.citations))
        return cls(entries, cited, stamps)

    @classmethod
    def of(cls, reports: Iterable[Report], keep: Callable[[Report], bool] | None = None,
           name: str = "reports") -> ReportIndex:
        """An index of reports already in memory (the API's objects): checked as `scan` checks a file's (a
        (run, request) given twice is refused), `keep` as in `scan`. A report without a `source` is named
        `name[index]` in messages."""
        entries: list[ReportEntry] = []
        cited: dict[str, None] = {}
        seen: dict[tuple[str, str], str] = {}
        for index, report in enumerate(reports):
            found = _LOCATED.fullmatch(report.source or "")
            where, line = (found.group(1), int(found.group(2))) if found else (report.source or f"{name}[{index}]", 0)
            label = f"{where}:{line}" if line else where
            if report.key in seen:
                raise InputError(
                    f"duplicate report for run_id {report.run_id!r} and request {report.request_id!r} "
                    f"(first at {seen[report.key]}); each run may answer a request only once — remove one", label)
            seen[report.key] = label
            if keep is not None and not keep(report):
                continue
            entries.append(ReportEntry(report.run_id, report.request_id, where, line, len(report.sentences), report))
            for sentence in report.sentences:
                cited.update(dict.fromkeys(sentence.citations))
        return cls(entries, cited)

    def read(self, entry: ReportEntry) -> Report:
        where = entry.where
        if isinstance(where, Report):
            return where
        if isinstance(where, bytes):
            raw = zlib.decompress(where)
        else:
            path, offset, length = where
            with path.open("rb") as fh:
                if _stamp(path, fh.fileno()) != self._stamps.get(path):
                    raise InputError("the file changed after the run read it; rerun on a file that stays as it is "
                                     "(copy it first if it is still being written)", entry.name, entry.line)
                fh.seek(offset)
                raw = fh.read(length)
        report = _read_report(read_jsonl_line(raw, entry.name, entry.line), entry.name, entry.line)
        if report.key != entry.key:
            raise InputError("the file changed after the run read it; rerun on a file that stays as it is",
                             entry.name, entry.line)
        return report

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> Report: ...

    @overload
    def __getitem__(self, index: slice) -> list[Report]: ...

    def __getitem__(self, index: int | slice) -> Report | list[Report]:
        if isinstance(index, slice):
            return [self.read(entry) for entry in self.entries[index]]
        return self.read(self.entries[index])

    def __iter__(self) -> Iterator[Report]:
        return (self.read(entry) for entry in self.entries)


def _seekable(source: Source) -> bool:
    return not is_literal(source) and not str(source).endswith(".gz")


def _stamp(path: Path, fd: int | None = None) -> tuple[int, int]:
    status = os.fstat(fd) if fd is not None else path.stat()
    return (status.st_size, status.st_mtime_ns)


def _read_report(record: dict[str, Any], name: str, line: int) -> Report:
    """One report, read by the report format that detects it (judge.formats.registry)."""
    return read_one(registry.parse("reports", record, name, line), Report, name, line)


def _parse_report(record: dict[str, Any], name: str, line: int | None) -> Report:
    metadata = record.get("metadata")
    if metadata is None:
        raise InputError("missing field 'metadata' (an object with run_id and topic_id)", name, line)
    if not isinstance(metadata, dict):
        raise InputError(f"field 'metadata' must be an object, found {type_name(metadata)}", name, line)

    run_id = get_id(metadata, "run_id", "metadata.run_id", name, line)
    if run_id is None:
        raise InputError("missing field 'metadata.run_id'; name the run that produced this report",
                         name, line)

    given = {key: get_id(metadata, key, f"metadata.{key}", name, line) for key in _REQUEST_ID_KEYS}
    ids = {key: value for key, value in given.items() if value is not None}
    if not ids:
        raise InputError("missing field 'metadata.topic_id' (or 'narrative_id' for TREC RAG, 'request_id' for "
                         "RAGTIME); name the request this report answers", name, line)
    if len(set(ids.values())) > 1:
        listed = ", ".join(f"metadata.{k}={v!r}" for k, v in ids.items())
        raise InputError(f"conflicting request ids ({listed}); keep one", name, line)
    request_id = next(iter(ids.values()))

    team_id = metadata.get("team_id")
    if team_id is not None and not isinstance(team_id, str):
        raise InputError(f"metadata.team_id must be a string, found {type_name(team_id)}", name, line)

    entries_key = _entries_key(record, name, line)
    entries = record[entries_key]
    if not isinstance(entries, list):
        raise InputError(f"field '{entries_key}' must be a list of sentences, found {type_name(entries)}",
                         name, line)

    references = record.get("references")
    if references is not None and not isinstance(references, list):
        raise InputError(f"field 'references' must be a list of document ids, found {type_name(references)}",
                         name, line)

    sentences = tuple(
        _parse_sentence(entry, i, f"{entries_key}[{i}]", references, name, line)
        for i, entry in enumerate(entries)
    )
    return Report(run_id=run_id, request_id=request_id, team_id=team_id, sentences=sentences,
                  source=f"{name}:{line}" if line is not None else name)


def _entries_key(record: dict[str, Any], name: str, line: int) -> str:
    has_responses, has_answer = "responses" in record, "answer" in record
    if has_responses and has_answer:
        raise InputError("report has both 'responses' and 'answer'; keep one list of sentences", name, line)
    if has_responses:
        return "responses"
    if has_answer:
        return "answer"
    raise InputError("missing field 'responses' (NeuCLIR) or 'answer' (TREC RAG): the list of sentences",
                     name, line)


def _parse_sentence(entry: Any, index: int, label: str, references: list[Any] | None,
                    name: str, line: int) -> Sentence:
    if not isinstance(entry, dict):
        raise InputError(f"{label} must be an object with 'text' and 'citations', found {type_name(entry)}",
                         name, line)
    if "text" not in entry:
        raise InputError(f"missing field '{label}.text'; every sentence needs its text", name, line)
    text = entry["text"]
    if not isinstance(text, str):
        raise InputError(f"{label}.text must be a string, found {type_name(text)}", name, line)
    citations = _parse_citations(entry.get("citations"), f"{label}.citations", references, name, line)
    return Sentence(index=index, text=text, citations=citations)


def _parse_citations(raw: Any, label: str, references: list[Any] | None,
                     name: str, line: int) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, dict):
        items: list[Any] = list(raw)  # keys in JSON order; the scores carry no meaning here
    elif isinstance(raw, list):
        items = raw
    else:
        raise InputError(f"{label} must be a list of document ids or indexes, or an object "
                         f"{{doc_id: score}}, found {type_name(raw)}", name, line)

    doc_ids: dict[str, None] = {}  # an ordered set: duplicates keep their first position
    for item in items:
        doc_id = _resolve_citation(item, label, references, name, line)
        doc_ids.setdefault(doc_id, None)
    return tuple(doc_ids)


def _resolve_citation(item: Any, label: str, references: list[Any] | None, name: str, line: int) -> str:
    if isinstance(item, str):
        if not item.strip():
            raise InputError(f"{label} contains an empty document id; remove it", name, line)
        return item
    if isinstance(item, int) and not isinstance(item, bool):
        if references is None:
            raise InputError(f"{label} cites index {item}, but the report has no 'references' list to index "
                             "into; add 'references' or cite document ids", name, line)
        if not 0 <= item < len(references):
            n = len(references)
            raise InputError(f"{label} cites index {item}, out of range of 'references' ({n} "
                             f"{'entry' if n == 1 else 'entries'}, indexes start at 0); fix the index",
                             name, line)
        doc_id = references[item]
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputError(f"references[{item}] (cited by {label}) must be a document id string, "
                             f"found {type_name(doc_id)}", name, line)
        return doc_id
    raise InputError(f"{label} entries must be document ids (strings) or indexes into 'references' "
                     f"(integers), found {type_name(item)}", name, line)

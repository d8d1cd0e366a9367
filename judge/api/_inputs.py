"""Inputs of the API calls: paths, or in-memory objects written to a temporary folder as the files their
readers read; and the argument checks every call shares.

One check for every record argument (`_records`): None where the argument is optional, paths (the readers check
the files), or one or more objects of the argument's kind or dicts in its file format. An empty list, a string
where records are wanted, an object of another kind, or a dict the file reader refuses is a one-line TypeError or
ValueError naming the argument and the record's index ("reports[3]: missing field 'metadata.run_id' ..."): each
dict is read by the reader `argue-judge` reads that file with, as one line of literal text, so the API and the
command line refuse the same records with the same words."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pydantic import InstanceOf

from judge.errors import InputError
from judge.formats.judgments import ReportJudgment
from judge.formats.judgments import write_judgments as _write_judgments
from judge.llm.cache.backends import DEFAULT_CACHE_DIR
from judge.settings import JudgeSettings, check
from judge.types import Document, NuggetBank, Report, Request

PathLike = str | Path
DEFAULT_CACHE = str(DEFAULT_CACHE_DIR)   # eval's and calibrate's --cache-dir default

# What an input argument takes: a path, several paths, or objects of the package's type or plain dicts in the file's
# format (one or an iterable of them). Objects are written as the files their readers read, so both are checked alike.
Paths = PathLike | Sequence[PathLike]
Record = Mapping[str, object]
ReportInputs = Paths | Report | Record | Iterable[Report | Record]
RequestInputs = Paths | Request | Record | Iterable[Request | Record]
DocumentInputs = Paths | Document | Record | Iterable[Document | Record]
NuggetInputs = Paths | NuggetBank | Record | Iterable[NuggetBank | Record]
JudgmentInputs = Paths | ReportJudgment | Record | Iterable[ReportJudgment | Record]


def _paths(value: PathLike | Sequence[PathLike] | None) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, str | Path):
        return [Path(value)]
    return [Path(v) for v in value]


def _check_path(argument: str, value: Any, *, many: bool = False, optional: bool = True) -> None:
    """TypeError naming `argument` unless `value` is a path (str or Path), with `many` a list of paths too."""
    if (value is None and optional) or isinstance(value, str | Path) or (many and _is_paths(value)):
        return
    wanted = "a path (str or Path)" + (" or a list of paths" if many else "") + (" or None" if optional else "")
    raise TypeError(f"{argument} must be {wanted}, not {type(value).__name__} {value!r:.60}")


def _check_input(argument: str, value: Any, kind: type, *, optional: bool = True) -> None:
    """`_records`' check, before any work so that a wrong input never waits behind a slow one. A one-pass
    iterable (a generator) is left whole for the call to read; it is checked then."""
    _records(argument, value, kind, optional=optional, consume=not isinstance(value, Iterator))


def _records(argument: str, value: Any, kind: type, *, optional: bool = False, consume: bool = True
             ) -> list[Any] | None:
    """The records of argument `argument` (see the module's docstring): None for paths (or an optional None),
    else the list of `kind` objects and checked dicts. `consume`: False checks only what needs no iteration."""
    if value is None:
        if optional:
            return None
        raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
    if _is_paths(value):
        return None
    if isinstance(value, kind | Mapping):
        value = [value]
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{argument} must be a path, paths, or {kind.__name__} objects (or dicts), "
                        f"not {type(value).__name__} {value!r:.60}")
    if not consume:
        return None
    items = list(value)
    if not items:
        raise ValueError(f"{argument} is empty: give a path or at least one {kind.__name__} (or dict)")
    for index, item in enumerate(items):
        if isinstance(item, Report | Request | Document | NuggetBank | ReportJudgment) and not isinstance(item, kind):
            raise TypeError(f"{argument}[{index}]: a {type(item).__name__} where a {kind.__name__} (or dict) is wanted")
        if not isinstance(item, kind | Mapping):
            raise TypeError(f"{argument}[{index}]: {type(item).__name__} {item!r:.60} is neither a path nor a "
                            f"{kind.__name__} (or dict)")
    _read_dicts(argument, items, _record_reader(kind))
    return items


def _read_dicts(argument: str, items: list[Any], read: Callable[[str], Any]) -> Any:
    """The dicts among `items` read by `read` as the lines of one file (what `read` returns; None without dicts);
    a refusal as a ValueError naming argument[index], the index in `items` of the line the reader names."""
    where = [index for index, item in enumerate(items) if isinstance(item, Mapping)]
    if not where:
        return None
    lines = []
    for index in where:
        try:
            lines.append(json.dumps(dict(items[index]), ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{argument}[{index}]: not JSON data ({exc})") from None
    try:
        return read("\n".join(lines) + "\n")
    except InputError as exc:
        if exc.line is not None and 0 < exc.line <= len(where):
            raise ValueError(f"{argument}[{where[exc.line - 1]}]: {exc.message}") from None
        for index, line in zip(where, lines):  # a refusal without a line (a nugget bank's): find its record
            try:
                read(line + "\n")
            except InputError as one:
                raise ValueError(f"{argument}[{index}]: {one.message}") from None
        raise ValueError(f"{argument}: {exc.message}") from None


def _read_document(text: str) -> Any:
    from judge.formats._jsonl import iter_jsonl
    from judge.formats.documents import _parse_document  # the document collection's per-line check

    return [_parse_document(record, "", line) for line, record in iter_jsonl(text)]


def _read_judgment(text: str) -> list[ReportJudgment]:
    from judge.judging.judgments_reader import iter_judgments  # the judgments file's reader, decision names known

    return list(iter_judgments(text))


def _record_reader(kind: type) -> Callable[[str], Any]:
    """The reader of the file a `kind` record is a line of: what checks a dict given in its place."""
    from judge.formats import read_nugget_banks, read_reports, read_requests

    readers: dict[type, Callable[[str], Any]] = {Report: read_reports, Request: read_requests,
                                                 NuggetBank: read_nugget_banks, Document: _read_document,
                                                 ReportJudgment: _read_judgment}
    return readers[kind]


def _is_paths(value: Any) -> bool:
    if isinstance(value, str | Path):
        return True
    return isinstance(value, Sequence) and bool(value) and all(isinstance(v, str | Path) for v in value)


def _report_record(report: Report | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(report, Mapping):
        return report
    metadata = {"run_id": report.run_id, "topic_id": report.request_id}
    if report.team_id is not None:
        metadata["team_id"] = report.team_id
    return {"metadata": metadata, "responses": [{"text": s.text, "citations": list(s.citations)}
                                                for s in report.sentences]}


def _request_record(request: Request | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(request, Mapping):
        return request
    record: dict[str, Any] = {"request_id": request.request_id, "title": request.title,
                              "background": request.background, "problem_statement": request.problem_statement,
                              "collection_ids": list(request.collection_ids)}
    if request.limit is not None:
        record["word_limit" if request.limit_unit == "words" else "limit"] = request.limit
    return record


def _document_record(document: Document | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(document, Mapping):
        return document
    return {"doc_id": document.doc_id, "title": document.title, "text": document.text}


def _bank_record(bank: NuggetBank | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(bank, Mapping):
        return bank
    return {"query_id": bank.request_id, "format_version": "v3", "nugget_bank": [
        {"question": n.question, "question_id": n.nugget_id, "aggregator_type": n.aggregator,
         "importance": n.importance, "absence": n.absence,
         "answers": {a.text: {"answer": a.text, "references": [{"doc_id": d} for d in a.doc_ids]} for a in n.answers}}
        for n in bank.nuggets]}


class _Materialised:
    """In-memory inputs written as the files their readers read (one JSONL file per kind, in a temporary folder
    that lives as long as the call): objects are checked exactly as files are, and errors name the argument."""

    def __init__(self, stack: ExitStack):
        self._stack = stack
        self._folder: Path | None = None

    def _write(self, name: str, records: Iterable[Mapping[str, Any]]) -> Path:
        if self._folder is None:
            self._folder = Path(self._stack.enter_context(tempfile.TemporaryDirectory(prefix="argue-api-")))
        path = self._folder / name
        with path.open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        return path

    def judgments(self, argument: str, records: Iterable[ReportJudgment]) -> Path:
        """Records written as a judgments file, by the format's own writer."""
        path = self._write(f"{argument}.jsonl", ())
        _write_judgments(path, records)
        return path

    def paths(self, argument: str, value: Any, record: Callable[[Any], Mapping[str, Any]], kind: type,
              *, optional: bool = False) -> list[Path]:
        """Paths as given, or objects (`kind` or dicts, checked by `_records`) written to `argument`.jsonl."""
        items = _records(argument, value, kind, optional=optional)
        if items is None:
            return _paths(value)
        return [self._write(f"{argument}.jsonl", (record(item) for item in items))]


def _judgment_records(argument: str, judgments: Any, banks: Mapping[str, NuggetBank] | None = None
                      ) -> list[ReportJudgment]:
    """Judgments files (ours or Auto-ARGUE's, told apart by their first record), records, or dicts."""
    from judge.adapters.autoargue import read_any_judgments

    items = _records(argument, judgments, ReportJudgment)
    if items is None:
        return list(read_any_judgments(_paths(judgments), banks or {}))
    # The dicts are read as the lines of a judgments file (checked so by _records; read again here for the records).
    read = iter(_read_dicts(argument, items, _read_judgment) or ())
    return [item if isinstance(item, ReportJudgment) else next(read) for item in items]


def _banks(argument: str, nuggets: Any, stack: ExitStack) -> dict[str, NuggetBank]:
    from judge.formats import read_nugget_banks

    paths = _Materialised(stack).paths(argument, nuggets, _bank_record, NuggetBank, optional=True)
    return read_nugget_banks(paths) if paths else {}



def _check_judge(judge: JudgeSettings | None) -> None:
    check("judge", judge, InstanceOf[JudgeSettings] | None)


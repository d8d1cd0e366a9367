"""Inputs of the API calls: paths, or in-memory objects written to a temporary folder as the files their
readers read; and the argument checks every call shares."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from judge.formats.judgments import ReportJudgment
from judge.formats.judgments import write_judgments as _write_judgments
from judge.llm.cache.backends import DEFAULT_CACHE_DIR
from judge.settings import InstanceOf, JudgeSettings
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
    """TypeError naming `argument` unless `value` is paths, or `kind` objects or dicts (one or a list), checked
    before any work so that a wrong input never waits behind a slow one."""
    if value is None:
        if optional:
            return
        raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
    if _is_paths(value) or isinstance(value, kind | Mapping):
        return
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{argument} must be a path, paths, or {kind.__name__} objects (or dicts), "
                        f"not {type(value).__name__} {value!r:.60}")
    if isinstance(value, Sequence):
        for item in value:
            if not isinstance(item, kind | Mapping):
                raise TypeError(f"{argument}: {type(item).__name__} {item!r:.60} is neither a path nor a "
                                f"{kind.__name__} (or dict)")


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
        """Paths as given, or objects (`kind` or dicts) written to `argument`.jsonl."""
        if value is None:
            if optional:
                return []
            raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
        if _is_paths(value):
            return _paths(value)
        if isinstance(value, kind | Mapping):
            value = [value]
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise TypeError(f"{argument} must be a path, paths, or {kind.__name__} objects (or dicts), "
                            f"not {type(value).__name__}")
        items = list(value)
        for item in items:
            if not isinstance(item, kind | Mapping):
                raise TypeError(f"{argument}: {type(item).__name__} {item!r:.60} is neither a path nor a "
                                f"{kind.__name__} (or dict)")
        return [self._write(f"{argument}.jsonl", (record(item) for item in items))]


def _judgment_records(argument: str, judgments: Any, banks: Mapping[str, NuggetBank] | None = None
                      ) -> list[ReportJudgment]:
    """Judgments files (ours or Auto-ARGUE's, told apart by their first record), records, or dicts."""
    from judge.adapters.autoargue import read_any_judgments

    if _is_paths(judgments):
        return list(read_any_judgments(_paths(judgments), banks or {}))
    if isinstance(judgments, ReportJudgment | Mapping):
        judgments = [judgments]
    if isinstance(judgments, str | bytes) or not isinstance(judgments, Iterable):
        raise TypeError(f"{argument} must be judgments files or ReportJudgment records, "
                        f"not {type(judgments).__name__}")
    records = []
    for item in judgments:
        if isinstance(item, Mapping):
            item = ReportJudgment.model_validate(dict(item))
        elif not isinstance(item, ReportJudgment):
            raise TypeError(f"{argument}: {type(item).__name__} is neither a path nor a ReportJudgment (or dict)")
        records.append(item)
    return records


def _banks(argument: str, nuggets: Any, stack: ExitStack) -> dict[str, NuggetBank]:
    from judge.formats import read_nugget_banks

    paths = _Materialised(stack).paths(argument, nuggets, _bank_record, NuggetBank, optional=True)
    return read_nugget_banks(paths) if paths else {}



def _check_judge(judge: JudgeSettings | None) -> None:
    InstanceOf((JudgeSettings,), optional=True).check("judge", judge)


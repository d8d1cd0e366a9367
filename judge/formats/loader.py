"""The loader: each input, given as files (paths, directories, literal text) or as domain objects, into what the core
takes. Files are read by the reader of their kind (judge.formats.reports, requests, nuggets, documents), which reads
each record with the registered format that detects it (judge.formats.registry); objects are taken as they are,
never written to disk, and refused as a file's reader refuses records (an id given twice), named `name[index]`.
A dict given in place of an object (`read_record`) is read as a line of its file would be. `records` and `given` are
the one check of an input argument (paths, or objects of its kind or dicts), shared by the API's calls (judge.api)
and the nugget calls (judge.nuggets.api), so each refuses a wrong input with the same words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from judge.errors import InputError
from judge.formats import registry
from judge.formats._jsonl import parse_json, read_one
from judge.formats.documents import DocumentStore
from judge.formats.judgments import ReportJudgment, parse_judgment
from judge.formats.nugget_fields import Where
from judge.formats.nuggets import banks_in, read_nugget_banks
from judge.formats.reports import ReportIndex, read_reports
from judge.formats.requests import read_requests
from judge.types import Document, NuggetBank, Report, Request

# What an input argument of the API takes: a path, several paths, or objects of the package's type or plain dicts in
# the file's format (one or an iterable of them). The one declaration: the API's signatures and the run's
# specification (judge.run.spec) use these.
PathLike = str | Path
Paths = PathLike | Sequence[PathLike]
Record = Mapping[str, object]
ReportInputs = Paths | Report | Record | Iterable[Report | Record]
RequestInputs = Paths | Request | Record | Iterable[Request | Record]
DocumentInputs = Paths | Document | Record | Iterable[Document | Record]
NuggetInputs = Paths | NuggetBank | Record | Iterable[NuggetBank | Record]
JudgmentInputs = Paths | ReportJudgment | Record | Iterable[ReportJudgment | Record]

_T = TypeVar("_T")
# An input: its files (paths, or literal text), or its objects.
Given = Sequence[str | Path] | Sequence[_T]
_KIND_OF: dict[type, registry.Kind] = {Report: "reports", Request: "requests", Document: "documents",
                                       NuggetBank: "nuggets", ReportJudgment: "judgments"}


def objects(given: Sequence[Any], kind: type[_T]) -> list[_T] | None:
    """`given` as a list of `kind` objects when it holds them, None when it holds files."""
    return list(given) if given and all(isinstance(item, kind) for item in given) else None


def keyed(items: Sequence[_T], key: str, what: str, name: str) -> dict[str, _T]:
    """Objects by their `key` id, in order; an id given twice is an InputError naming `name[index]`."""
    found: dict[str, _T] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        value = getattr(item, key)
        if value in found:
            raise InputError(f"second {what} for {key} {value!r} (first at {name}[{first[value]}]); keep one",
                             f"{name}[{index}]")
        found[value], first[value] = item, index
    return found


def reports(given: Given[Report], keep: Callable[[Report], bool] | None = None, name: str = "reports"
            ) -> ReportIndex:
    """The reports, indexed (judge.formats.reports.ReportIndex: files are read again when a report is needed);
    `keep`: only the reports it accepts (every report is checked)."""
    found = objects(given, Report)
    return ReportIndex.of(found, keep, name) if found is not None else ReportIndex.scan(list(given), keep)  # type: ignore[arg-type]


def report_list(given: Given[Report], name: str = "reports") -> list[Report]:
    """The reports in memory, in order (a report given twice refused)."""
    found = objects(given, Report)
    if found is None:
        return read_reports(list(given))  # type: ignore[arg-type]
    ReportIndex.of(found, name=name)
    return found


def requests(given: Given[Request], name: str = "requests") -> dict[str, Request]:
    """The requests by id."""
    found = objects(given, Request)
    return keyed(found, "request_id", "request", name) if found is not None else read_requests(list(given))  # type: ignore[arg-type]


def banks(given: Given[NuggetBank] | None, name: str = "nuggets") -> dict[str, NuggetBank]:
    """The nugget banks by request id ({} for none)."""
    if not given:
        return {}
    found = objects(given, NuggetBank)
    return (keyed(found, "request_id", "nugget bank", name) if found is not None
            else read_nugget_banks(list(given)))  # type: ignore[arg-type]


def documents(given: Given[Document], index_dir: str | Path, name: str = "docs") -> DocumentStore:
    """The documents' store: files indexed on disk in `index_dir` (reused while they do not change), objects in
    memory. The caller closes it."""
    found = objects(given, Document)
    return DocumentStore.of(found, name) if found is not None else DocumentStore.open(list(given), index_dir)  # type: ignore[arg-type]


def read_record(kind: type, item: Mapping[str, Any], where: str, *, decisions: Collection[str] = ()) -> list[Any]:
    """A dict given in place of a `kind` object, read as its file's reader reads that line: JSON data (what a line
    can hold), then the format that detects it; InputError naming `where`. A nugget-bank dict may hold several
    banks. `decisions`: the decision names a judgments record may have (the judging floor's, which this floor
    cannot import)."""
    try:
        data = parse_json(json.dumps(dict(item), ensure_ascii=False), where, None)
    except (TypeError, ValueError) as exc:
        raise InputError(f"not JSON data ({exc})", where) from None
    if kind is ReportJudgment:
        return [parse_judgment(data, where, None, decisions=decisions)]
    if kind is NuggetBank:
        return banks_in(data, Where(where))
    return [read_one(registry.parse(_KIND_OF[kind], data, where, None), kind, where, None)]


def is_paths(value: Any) -> bool:
    """Whether `value` names files: a path (str or Path), or a non-empty sequence of them."""
    if isinstance(value, str | Path):
        return True
    return isinstance(value, Sequence) and bool(value) and all(isinstance(v, str | Path) for v in value)


def path_list(value: Any) -> list[Path]:
    """The paths `value` names ([] for None, or for objects: they have no file)."""
    if value is None or not is_paths(value):
        return []
    return [Path(value)] if isinstance(value, str | Path) else [Path(v) for v in value]


def records(argument: str, value: Any, kind: type, *, optional: bool = False, consume: bool = True,
            decisions: Collection[str] = ()) -> list[Any] | None:
    """The records of argument `argument`: None for paths (their reader checks the files) or an optional None, else
    the `kind` objects, each dict read into them (`read_record`). An empty list, a string where records are
    wanted, an object of another kind, or a dict its format refuses is a one-line TypeError or ValueError naming
    the argument and the record's index. `consume`: False checks only what needs no iteration (a generator is
    left whole to be read later)."""
    if value is None:
        if optional:
            return None
        raise TypeError(f"{argument} is required: a path or {kind.__name__} objects (or dicts)")
    if is_paths(value):
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
    found: list[Any] = []
    for index, item in enumerate(items):
        if isinstance(item, tuple(_KIND_OF)) and not isinstance(item, kind):
            raise TypeError(f"{argument}[{index}]: a {type(item).__name__} where a {kind.__name__} (or dict) is wanted")
        if not isinstance(item, kind | Mapping):
            raise TypeError(f"{argument}[{index}]: {type(item).__name__} {item!r:.60} is neither a path nor a "
                            f"{kind.__name__} (or dict)")
        try:
            found += read_record(kind, item, f"{argument}[{index}]", decisions=decisions) \
                if isinstance(item, Mapping) else [item]
        except InputError as exc:
            raise ValueError(f"{argument}[{index}]: {exc.message}") from None
    return found


def check(argument: str, value: Any, kind: type, *, optional: bool = True) -> None:
    """`records`' check, before any work so that a wrong input never waits behind a slow one; a one-pass iterable
    (a generator) is left whole for the call to read, and checked then."""
    records(argument, value, kind, optional=optional, consume=not isinstance(value, Iterator))


def given(argument: str, value: Any, kind: type, *, optional: bool = False, decisions: Collection[str] = ()
          ) -> list[Any]:
    """What the core takes for `argument`: its objects (dicts read into them), or its paths; [] for a None."""
    found = records(argument, value, kind, optional=optional, decisions=decisions)
    return found if found is not None else path_list(value)

"""Inputs of the API calls, and the argument checks every call shares: paths, read at this edge by the format
readers, or domain objects (and dicts in their file format) handed to the core as they are, never written to disk.

One check for every record argument (`_records`): None where the argument is optional, paths (the readers check
the files), or one or more objects of the argument's kind or dicts in its file format. An empty list, a string
where records are wanted, an object of another kind, or a dict its format refuses is a one-line TypeError or
ValueError naming the argument and the record's index ("reports[3]: missing field 'metadata.run_id' ..."): each
dict is read by the format that reads that line of a file (judge.formats.registry), so the API and the command
line refuse the same records with the same words."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import InstanceOf

from judge.formats.judgments import ReportJudgment
from judge.formats.loader import (  # noqa: F401  (the API's input types, declared with the loader)
    DocumentInputs,
    JudgmentInputs,
    NuggetInputs,
    PathLike,
    Paths,
    Record,
    ReportInputs,
    RequestInputs,
)
from judge.formats.loader import is_paths as _is_paths  # noqa: F401  (the API modules' names for the loader's)
from judge.formats.loader import path_list as _paths
from judge.llm.cache.backends import DEFAULT_CACHE_DIR
from judge.settings import JudgeSettings, check
from judge.types import Document, NuggetBank, Report, Request

if TYPE_CHECKING:
    from judge.formats.documents import DocumentStore
    from judge.run.prediction_powered import HumanJudgments

DEFAULT_CACHE = str(DEFAULT_CACHE_DIR)   # eval's and calibrate's --cache-dir default


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
    """The records of argument `argument` (judge.formats.loader.records): None for paths (or an optional None),
    else the `kind` objects, the dicts read into them. `consume`: False checks only what needs no iteration."""
    from judge.formats import loader

    decisions: tuple[str, ...] = ()
    if kind is ReportJudgment and consume:
        from judge.judging.decisions import REGISTRY  # the decision names a judgments record may have

        decisions = tuple(REGISTRY.names)
    return loader.records(argument, value, kind, optional=optional, consume=consume, decisions=decisions)


def _given(argument: str, value: Any, kind: type, *, optional: bool = False) -> list[Any]:
    """What the core takes for `argument`: its objects (dicts read into them), or its paths; [] for a None."""
    from judge.formats import loader

    return loader.given(argument, value, kind, optional=optional)


def _reports(argument: str, value: Any, *, optional: bool = False) -> list[Report] | None:
    """The reports of `argument` in memory: the objects given, or the files read (None for an optional None)."""
    from judge.formats import loader

    given = _given(argument, value, Report, optional=optional)
    return loader.report_list(given, argument) if given else None


def _banks(argument: str, nuggets: Any) -> dict[str, NuggetBank]:
    """The nugget banks by request, from objects or files ({} for None)."""
    from judge.formats import loader

    return loader.banks(_given(argument, nuggets, NuggetBank, optional=True), argument)


def _requests(argument: str, requests: Any) -> dict[str, Request] | None:
    """The requests by id, from objects or one requests file (None for None)."""
    from judge.formats import loader

    given = _given(argument, requests, Request, optional=True)
    return loader.requests(given, argument) if given else None


def _documents(argument: str, docs: Any, cache: PathLike | None) -> DocumentStore | None:
    """A document store of the objects (in memory) or the files (indexed beside the cache); None for None. The
    caller closes it."""
    from judge.formats import loader
    from judge.llm.cache.backends import docstore_dir

    given = _given(argument, docs, Document, optional=True)
    return loader.documents(given, docstore_dir(cache), argument) if given else None


def _judgment_records(argument: str, judgments: Any, banks: Mapping[str, NuggetBank] | None = None
                      ) -> list[ReportJudgment]:
    """Judgments files (ours or Auto-ARGUE's, told apart by their first record), records, or dicts."""
    from judge.adapters.autoargue import read_any_judgments

    items = _records(argument, judgments, ReportJudgment)
    if items is None:
        return list(read_any_judgments(_paths(judgments), banks or {}))
    return items


def _humans(argument: str, human: Any, design: str = "reports") -> HumanJudgments:
    """Human judgments read once: files (a sample file among them), or records named `argument[index]`."""
    from judge.run.prediction_powered import HumanJudgments

    items = _records(argument, human, ReportJudgment)
    if items is None:
        return HumanJudgments.read(_paths(human), design)  # type: ignore[arg-type]
    return HumanJudgments.of(items, argument)


def _check_judge(judge: JudgeSettings | None) -> None:
    check("judge", judge, InstanceOf[JudgeSettings] | None)


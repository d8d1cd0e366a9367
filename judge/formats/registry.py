"""The input formats argue-judge reads, one module per format (judge/formats/known/), each registering one `Format`.

A format says what kind of input it is (reports, requests, documents, nuggets, judgments, calibration items), how to
tell a record of it (`detect`, on the record's fields), how to read a record into the domain types (`parse`, with
an InputError naming the file and line of what is wrong), how to write one back where argue-judge writes it
(`write`), and what it is, in one line (`description`). Everything else about formats is read from here:

- the readers (judge.formats.reports, requests, documents, nuggets) read each record with the first format of its
  kind that detects it; a record no format detects is read by the kind's `refuse`, whose errors say what is missing;
- "this is a nugget bank, not a requests file" (judge.formats.sniff) names the first format that detects a file's
  first record;
- the command line's help of the input options and the format table of docs/inputs.md list the formats of a kind.

Adding a format is one module that calls `register`: a module in judge/formats/known/ is found and imported by the
registry itself; one of your own is imported before reading.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

Kind = Literal["reports", "requests", "documents", "nuggets", "judgments", "calibration items"]
KINDS: tuple[Kind, ...] = get_args(Kind)

# Each kind's name in messages ("this is X, not Y") and how a file of it is given to argue-judge.
WHAT: dict[Kind, str] = {"reports": "a reports file", "requests": "a requests file", "documents": "a documents file",
                         "nuggets": "a nugget bank", "judgments": "a judgments file",
                         "calibration items": "a calibration items file"}

# The order in which a file's first record is matched against the kinds ("this is X, not Y"): the kinds whose
# records have the most specific fields first.
SNIFF_ORDER: tuple[Kind, ...] = ("judgments", "nuggets", "reports", "calibration items", "documents", "requests")


@dataclass(frozen=True)
class Format:
    """One input format. `parse(record, name, line)` gives the domain objects of one record (a report, a request,
    a document, the nugget banks a record holds: always a list) or raises judge.errors.InputError naming `name`
    and `line`; None where the record is read elsewhere (judgments: judge.judging.judgments_reader, which knows the
    decision names; calibration items: judge.calibration.importers). `write(obj)` is the record of a domain
    object in this format, where argue-judge writes the format. `what`: the format as messages name it (the
    kind's name by default); `use`: how to give such a file to argue-judge. `rank`: among the formats of its
    kind, the lower is tried first (then the order of registration), for records two formats would both take."""

    name: str
    kind: Kind
    description: str
    detect: Callable[[dict[str, Any]], bool]
    parse: Callable[[dict[str, Any], str, int | None], list[Any]] | None = None
    write: Callable[[Any], dict[str, Any]] | None = None
    what: str = ""
    use: str = ""
    rank: int = 50

    @property
    def called(self) -> str:
        return self.what or WHAT[self.kind]

    @property
    def title(self) -> str:
        """The description's name for the format (what comes before its first colon)."""
        return self.description.split(":", 1)[0]


_FORMATS: list[Format] = []
_REFUSE: dict[Kind, Callable[[dict[str, Any], str, int | None], list[Any]]] = {}
_loaded = False


def register(fmt: Format) -> Format:
    """Add `fmt`; a second format of the same name replaces the first."""
    _built_in()
    unregister(fmt.name)
    _FORMATS.append(fmt)
    return fmt


def unregister(name: str) -> None:
    _FORMATS[:] = [f for f in _FORMATS if f.name != name]


def refuse_with(kind: Kind, parse: Callable[[dict[str, Any], str, int | None], list[Any]]) -> None:
    """What reads a `kind` record that no format detects: its errors say what the record lacks."""
    _REFUSE[kind] = parse


def formats(kind: Kind | None = None) -> list[Format]:
    """The registered formats (of `kind`), in the order records are told apart: by kind (SNIFF_ORDER), rank, and
    order of registration."""
    _built_in()
    ordered = sorted(enumerate(_FORMATS), key=lambda found: (SNIFF_ORDER.index(found[1].kind), found[1].rank,
                                                             found[0]))
    return [f for _, f in ordered if kind is None or f.kind == kind]


def detect(record: Any, kind: Kind | None = None) -> Format | None:
    """The first format (of `kind`) whose `detect` accepts `record` (a dict), else None."""
    if not isinstance(record, dict):
        return None
    return next((f for f in formats(kind) if f.detect(record)), None)


def parse(kind: Kind, record: dict[str, Any], name: str, line: int | None) -> list[Any]:
    """The domain objects of one `kind` record: read by the first format of the kind that detects it and reads
    records, else by the kind's refusal (which raises the InputError that says what is missing)."""
    found = next((f for f in formats(kind) if f.parse is not None and f.detect(record)), None)
    if found is not None:
        return found.parse(record, name, line)  # type: ignore[misc]
    if kind not in _REFUSE:  # judgments and calibration items are read by their own readers (see Format)
        raise ValueError(f"no reader of {kind} records is registered here")
    return _REFUSE[kind](record, name, line)


def writer(name: str) -> Callable[[Any], dict[str, Any]]:
    """The `write` of the format `name` (KeyError when it has none)."""
    found = next((f for f in formats() if f.name == name and f.write is not None), None)
    if found is None:
        raise KeyError(f"no format {name!r} with a writer")
    return found.write  # type: ignore[return-value]


def listing(kind: Kind) -> str:
    """The formats of `kind` by their titles ("A, B or C"), for the command line's help."""
    titles = [f.title for f in formats(kind)]
    return " or ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)


def table() -> str:
    """The formats as a Markdown table (docs/inputs.md): input, name, description; by input, and within one in
    the order their records are told apart."""
    rows = ["| input | format | what it is |", "|-------|--------|------------|"]
    rows += [f"| {f.kind} | `{f.name}` | {f.description} |" for kind in KINDS for f in formats(kind)]
    return "\n".join(rows)


def _built_in() -> None:
    """Import every module of judge/formats/known/ once: each registers its format."""
    global _loaded
    if not _loaded:
        _loaded = True
        from judge.formats import known

        for module in sorted(info.name for info in pkgutil.iter_modules(known.__path__)):
            importlib.import_module(f"{known.__name__}.{module}")

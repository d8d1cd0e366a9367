"""The judgments format, both ways: `read_judgments` and `write_judgments` (ours, or Auto-ARGUE's)."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Literal

from judge.api._inputs import (
    DEFAULT_CACHE,
    DocumentInputs,
    NuggetInputs,
    PathLike,
    _banks,
    _check_input,
    _check_path,
    _documents,
    _judgment_records,
)
from judge.errors import SettingError
from judge.formats.judgments import ReportJudgment
from judge.formats.judgments import write_judgments as _write_judgments
from judge.judging.judgments_reader import iter_judgments
from judge.settings import check
from judge.types import Document, NuggetBank

# The judgments files read and written: ours, and Auto-ARGUE's.
JudgmentsFormat = Literal["argue-judge", "auto-argue"]


def read_judgments(path: PathLike, *, nuggets: NuggetInputs | None = None, format: str | None = None
                   ) -> list[ReportJudgment]:
    """Every record of a judgments file (JSONL, .gz too), checked line by line: a bad line raises InputError
    naming the file and line. `format`: "argue-judge" (ours), "auto-argue" (Auto-ARGUE's, as `import auto-argue`;
    it needs `nuggets`), or None: ours, or with `nuggets` either, told apart by the first record.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> len(judgments), judgments[0].run_id, judgments[0].request_id
    (6, 'run-cited', 'ex-101')
    >>> [int(s.outcome) for s in judgments[0].sentences][:3]   # ARGUE outcomes #1..#8
    [4, 3, 3]
    """
    check("format", format, JudgmentsFormat | None)
    _check_path("path", path, optional=False)
    _check_input("nuggets", nuggets, NuggetBank)
    if format == "argue-judge" or (format is None and nuggets is None):
        return list(iter_judgments(path))
    if nuggets is None:
        raise SettingError("format='auto-argue' needs nuggets= (Auto-ARGUE names matched nuggets by question text)")
    banks = _banks("nuggets", nuggets)
    if format == "auto-argue":
        from judge.adapters.autoargue import read_auto_argue

        return read_auto_argue(Path(path), banks)
    return _judgment_records("path", path, banks)


def write_judgments(path: PathLike, judgments: Iterable[ReportJudgment], *, format: str = "argue-judge",
                    nuggets: NuggetInputs | None = None, docs: DocumentInputs | None = None,
                    cache: PathLike | None = DEFAULT_CACHE) -> int:
    """Write records as a judgments file (one JSON object a line, the format `read_judgments` and every command
    read), replacing it; returns how many records were written. `format="auto-argue"` writes Auto-ARGUE's format
    instead (as `export auto-argue`): it needs the `nuggets`, and `docs` fill each citation's text.

    >>> import judge
    >>> judgments = judge.read_judgments("argue-out/judgments.jsonl")
    >>> cited = [j for j in judgments if j.run_id == "run-cited"]
    >>> judge.write_judgments("run-cited.jsonl", cited)
    2
    >>> judge.read_judgments("run-cited.jsonl") == cited
    True
    """
    check("format", format, JudgmentsFormat)
    _check_path("path", path, optional=False)
    _check_path("cache", cache)
    if isinstance(judgments, str | bytes) or not isinstance(judgments, Iterable):
        raise TypeError(f"judgments must be ReportJudgment records, not {type(judgments).__name__}")
    _check_input("nuggets", nuggets, NuggetBank)
    _check_input("docs", docs, Document)
    records = _judgment_records("judgments", judgments)  # records or dicts, checked as the CLI reads them
    if format == "argue-judge":
        _write_judgments(Path(path), records)
        return len(records)
    from judge.adapters.autoargue import write_auto_argue

    if nuggets is None:
        raise SettingError("format='auto-argue' needs nuggets= (the banks Auto-ARGUE names nuggets from)")
    with ExitStack() as stack:
        banks = _banks("nuggets", nuggets)
        found = _documents("docs", docs, cache)
        if found is None:
            return write_auto_argue(Path(path), records, banks)
        store = stack.enter_context(found)

        def text(doc_id: str) -> str:
            document = store.get(doc_id)
            if document is None:
                return ""
            return f"Title: {document.title}\n\nContent: {document.text}" if document.title else document.text

        return write_auto_argue(Path(path), records, banks, text)

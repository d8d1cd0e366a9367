"""Which of the formats this package reads a file is in, so a reader that refuses a file can say "this is a nugget
bank, not a requests file" instead of blaming the first thing that failed (a JSON column, a missing field).

Looks at the first record only (the first line of a JSONL file, or the whole file when it is one JSON document),
by the fields that set each format apart; never raises."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judge.errors import InputError
from judge.formats._jsonl import Source, is_literal, open_binary

# How much of a file is read to tell its format: a pretty-printed nugget bank is one JSON document.
_SNIFF_BYTES = 4 << 20

# (what the file is, how to use it), by the fields that set each format apart, most specific first.
_FORMATS: tuple[tuple[str, str, Callable[[dict[str, Any]], bool]], ...] = (
    ("an Auto-ARGUE judgments file", "convert it with `argue-judge import auto-argue FILE --nuggets BANKS` "
     "(or give it to `argue-judge score` with --nuggets)", lambda d: "report" in d and "judgments" in d),
    ("an argue-judge judgments file", "give it to `argue-judge score`, or to --human / --judged",
     lambda d: "sentences" in d and "run_id" in d and "request_id" in d),
    ("a nugget bank", "give it to --nuggets",
     lambda d: any(k in d for k in ("nugget_bank", "claim_bank", "nuggets", "banks"))),
    ("a reports file", "give it as the reports (eval's first argument)",
     lambda d: isinstance(d.get("metadata"), dict) and ("responses" in d or "answer" in d)),
    ("an AttributionBench file", "give it to `argue-judge calibrate --attributionbench`",
     lambda d: "attribution_label" in d),
    ("a WiCE file", "give it to `argue-judge calibrate --wice`", lambda d: "claim" in d and "evidence" in d),
    ("a documents file", "give it to --docs",
     lambda d: any(k in d for k in ("doc_id", "docid", "id")) and any(k in d for k in ("text", "contents",
                                                                                       "segment", "body"))),
    ("a requests file", "give it to --requests",
     lambda d: any(k in d for k in ("request_id", "topic_id", "narrative_id"))
     and any(k in d for k in ("problem_statement", "narrative", "title", "background"))),
)


def _first_record(source: Source) -> Any:
    if is_literal(source):
        text = str(source)[:_SNIFF_BYTES]
    else:
        with open_binary(source) as handle:
            text = handle.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in text.splitlines():
        if line.strip():
            return json.loads(line)
    return None


def known_format(source: Source) -> tuple[str, str] | None:
    """(what the file is, how to use it) for a file in a format this package reads, else None."""
    try:
        record = _first_record(source)
    except Exception:  # noqa: BLE001 - a corrupt .gz (zlib.error), JSON nested too deep (RecursionError), ...:
        return None    # the reader's own refusal stands
    if isinstance(record, list) and record and isinstance(record[0], dict):
        record = record[0]
    if not isinstance(record, dict):
        return None
    return next(((what, use) for what, use, test in _FORMATS if test(record)), None)


@contextmanager
def naming_the_format(expected: str) -> Iterator[None]:
    """Turn a refusal of a file into one that says which known format the file is in, when it is one and not the
    `expected` one (e.g. "a requests file"): the cause, instead of the first field or column that failed."""
    try:
        yield
    except InputError as exc:
        found = known_format(exc.path) if exc.path and Path(exc.path).is_file() else None
        if found is None or found[0] == expected:
            raise
        raise InputError(f"this is {found[0]}, not {expected}: {found[1]}", exc.path) from None

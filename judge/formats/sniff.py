"""Which of the formats this package reads a file is in, so a reader that refuses a file can say "this is a nugget
bank, not a requests file" instead of blaming the first thing that failed (a JSON column, a missing field).

Looks at the first record only (the first line of a JSONL file, or the whole file when it is one JSON document),
by the fields that set each format apart: the first registered format (judge.formats.registry) that detects it;
never raises."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judge.errors import InputError
from judge.formats import registry
from judge.formats._jsonl import Source, is_literal, open_binary

# How much of a file is read to tell its format: a pretty-printed nugget bank is one JSON document.
_SNIFF_BYTES = 4 << 20

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
    found = registry.detect(record)
    return (found.called, found.use) if found is not None else None


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

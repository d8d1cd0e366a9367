"""Moving decision-cache entries between caches (`argue-judge cache export` / `cache import`), as JSONL.

A header line `{"format": "argue-judge-cache/1"}`, then one `{"key", "value", "sha256"}` object per entry: the
value is the stored text exactly as a backend holds it (judge.llm.cache.backends), and the checksum covers its
UTF-8 bytes, so a damaged or hand-edited file is refused line by line instead of poisoning a cache. Entries move
byte for byte between a directory and Redis in either direction.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from judge.errors import InputError
from judge.llm.cache.backends import CacheBackend
from judge.llm.cache.store import UnreadableEntry, unseal

EXPORT_FORMAT = "argue-judge-cache/1"
_KEY = re.compile(r"[0-9a-f]{64}")


def _checksum(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def export_entries(source: CacheBackend) -> Iterator[str]:
    """JSONL lines (each ending in a newline): the header, then every entry in key order (a stable file)."""
    yield json.dumps({"format": EXPORT_FORMAT}) + "\n"
    for key in sorted(source.keys()):
        value = source.get(key)
        if value is None:  # deleted by another process since the listing
            continue
        yield json.dumps({"key": key, "value": value, "sha256": _checksum(value)}, ensure_ascii=False) + "\n"


@dataclass
class ImportCounts:
    added: int = 0
    unchanged: int = 0        # the destination already held the same value
    conflicts: int = 0        # the destination held a different value and kept it (overwrite=False)
    replaced: int = 0         # ... and lost it (overwrite=True)


def import_entries(destination: CacheBackend, lines: Iterable[str], source: str = "<stdin>", *,
                   overwrite: bool = False) -> ImportCounts:
    """Add exported entries. An entry whose key exists with another value is a conflict: the destination keeps
    its own answer (the first answer recorded is the one every rerun replays) unless `overwrite`.

    Streams: memory stays flat however large the export. A bad line stops the import with an InputError naming
    it; the entries before it are in (each is complete on its own), and importing again is harmless.
    """
    counts = ImportCounts()
    for key, value in _parse_export(lines, source):
        present = destination.get(key)
        if present is None:
            counts.added += 1
        elif present == value:
            counts.unchanged += 1
            continue
        elif not overwrite:
            counts.conflicts += 1
            continue
        else:
            counts.replaced += 1
        destination.set(key, value)
    return counts


def _parse_export(lines: Iterable[str], source: str) -> Iterator[tuple[str, str]]:
    header_seen = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON at column {exc.colno}: {exc.msg}; is this a cache export?",
                             source, number) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object on each line", source, number)
        if not header_seen:
            if record.get("format") != EXPORT_FORMAT:
                raise InputError(f"not a cache export: the first line must be {{\"format\": \"{EXPORT_FORMAT}\"}}",
                                 source, number)
            header_seen = True
            continue
        key, value, checksum = record.get("key"), record.get("value"), record.get("sha256")
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise InputError("field 'key' must be 64 lowercase hex digits (a decision-cache key)", source, number)
        if not isinstance(value, str):
            raise InputError("field 'value' must be a string (the cached answer as canonical JSON)", source, number)
        if checksum != _checksum(value):
            raise InputError("checksum mismatch: the value was changed or damaged after export; export again",
                             source, number)
        try:
            unseal(key, value)
        except UnreadableEntry as exc:
            raise InputError(f"the value is not a cached answer ({exc})", source, number) from None
        yield key, value
    if not header_seen:
        raise InputError(f"empty file: a cache export starts with {{\"format\": \"{EXPORT_FORMAT}\"}}", source)

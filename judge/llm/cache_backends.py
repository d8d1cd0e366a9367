"""Where the decision cache lives: a local directory (diskcache) or a shared Redis server.

Both backends hold the same entries: the key is `judge.llm.cache.cache_key` (64 hex digits of SHA-256) and the
value the canonical JSON string of a `CachedAnswer`, stored as the same UTF-8 text. Redis keeps them under
`argue-judge:decision:<key>`, so one Redis database can also hold other data. Several machines pointing at one
Redis server share every answer: whatever one shard asked, the others read.

    open_cache("caches")                       -> DiskBackend (caches/decisions, the layout DecisionCache uses)
    open_cache("redis://10.0.0.5:6379/0")      -> RedisBackend
    open_decision_cache(url_or_dir)            -> DecisionCache (a directory) or BackendDecisionCache (Redis)

`export_entries` / `import_entries` move entries between backends as JSONL: a header line, then one
`{"key", "value", "sha256"}` object per entry, the checksum covering the value's UTF-8 bytes so a damaged or
hand-edited file is refused line by line instead of poisoning a cache.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from judge.errors import ConfigurationError, InputError
from judge.llm.cache import (
    DEFAULT_CACHE_DIR,
    CachedAnswer,
    DecisionCache,
    SealedReads,
    UnreadableEntry,
    open_decisions,
    seal,
    unseal,
)

EXPORT_FORMAT = "argue-judge-cache/1"
REDIS_PREFIX = "argue-judge:decision:"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_KEY = re.compile(r"[0-9a-f]{64}")
_SCAN_BATCH = 1000


@runtime_checkable
class CacheBackend(Protocol):
    """A key-value store of decision-cache entries: keys and values are str (values: canonical JSON)."""

    location: str

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> bool: ...

    def keys(self) -> Iterator[str]: ...

    def __len__(self) -> int: ...

    def size_bytes(self) -> int | None: ...

    def close(self) -> None: ...


class DiskBackend:
    """The local diskcache under `<directory>/decisions`: the very store `judge.llm.cache.DecisionCache` uses."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.location = str(self.directory)
        self._store = open_decisions(self.directory)

    def get(self, key: str) -> str | None:
        return self._store.get(key)

    def set(self, key: str, value: str) -> None:
        self._store.set(key, value)

    def delete(self, key: str) -> bool:
        return self._store.delete(key)

    def keys(self) -> Iterator[str]:
        return iter(self._store)

    def __len__(self) -> int:
        return len(self._store)

    def size_bytes(self) -> int | None:
        return self._store.volume()

    def close(self) -> None:
        self._store.close()


class RedisBackend:
    """A Redis database shared by every machine of an evaluation. Values are the same UTF-8 text as on disk."""

    def __init__(self, url: str):
        import redis  # a core dependency, imported here so local runs never pay for it

        self.location = url
        self._redis_errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
        try:
            # A bounded connect: an unreachable host must fail in seconds, not hang the run.
            self._client = redis.Redis.from_url(url, socket_connect_timeout=5)
        except ValueError as exc:
            raise ConfigurationError(f"cache URL {url!r}: {exc}; write redis://HOST:PORT/DB") from None
        try:
            self._client.ping()
        except self._redis_errors as exc:
            raise ConfigurationError(f"cannot reach the Redis cache at {url}: {exc}; start the server or fix "
                                     "the cache URL") from None
        except redis.exceptions.ResponseError as exc:  # e.g. a database number the server does not have
            raise ConfigurationError(f"the Redis cache at {url} refused the connection: {exc}") from None

    def get(self, key: str) -> str | None:
        raw = self._client.get(REDIS_PREFIX + key)
        return None if raw is None else raw.decode("utf-8")

    def set(self, key: str, value: str) -> None:
        self._client.set(REDIS_PREFIX + key, value.encode("utf-8"))

    def delete(self, key: str) -> bool:
        return bool(self._client.delete(REDIS_PREFIX + key))

    def keys(self) -> Iterator[str]:
        # SCAN, never KEYS: it does not block a server other machines are using.
        for raw in self._client.scan_iter(match=REDIS_PREFIX + "*", count=_SCAN_BATCH):
            yield raw.decode("utf-8")[len(REDIS_PREFIX):]

    def __len__(self) -> int:
        return sum(1 for _ in self.keys())

    def size_bytes(self) -> int | None:
        return None  # Redis reports memory per server, not per key prefix; counting every value would be O(n)

    def close(self) -> None:
        self._client.close()


def is_url(target: str | Path) -> bool:
    return isinstance(target, str) and "://" in target


def open_cache(target: str | Path) -> CacheBackend:
    """A directory (str or Path) -> DiskBackend; `redis://HOST:PORT/DB` (or rediss://, unix://) -> RedisBackend."""
    if is_url(target):
        url = str(target)
        if not url.startswith(REDIS_SCHEMES):
            raise ConfigurationError(f"cache {url!r}: unknown scheme; give a directory or redis://HOST:PORT/DB")
        return RedisBackend(url)
    return DiskBackend(target)


class BackendDecisionCache(SealedReads):
    """`judge.llm.cache.DecisionCache`'s interface (get/put/stats/clear/close) over any backend, so the client
    can take either without knowing which."""

    def __init__(self, backend: CacheBackend):
        self.backend = backend
        # A network round trip per call: DecisionClient runs such calls in a thread, off the event loop.
        self.blocking = isinstance(backend, RedisBackend)
        self.unreadable: Counter[str] = Counter()   # as DecisionCache: why entries could not be used
        self.resealed = 0

    def get(self, key: str) -> CachedAnswer | None:
        raw = self.backend.get(key)
        if raw is None:
            return None
        return self._accept(key, raw)

    def _drop(self, key: str) -> None:
        self.backend.delete(key)

    @property
    def location(self) -> str:
        return self.backend.location

    def put(self, key: str, answer: CachedAnswer) -> None:
        self.backend.set(key, seal(key, answer))

    def stats(self) -> dict[str, Any]:
        return {"location": self.backend.location, "entries": len(self.backend), "bytes": self.backend.size_bytes()}

    def clear(self) -> int:
        removed = 0
        for key in list(self.backend.keys()):  # listed first: deleting while scanning may skip entries
            removed += self.backend.delete(key)
        return removed

    def close(self) -> None:
        self.backend.close()


def open_decision_cache(target: str | Path) -> DecisionCache | BackendDecisionCache:
    """What `eval --cache` and `calibrate --cache` judge with: a directory is judge.llm.cache.DecisionCache itself
    (the local cache exactly as before), a URL the shared Redis cache behind the same interface."""
    if is_url(target):
        return BackendDecisionCache(open_cache(target))
    return DecisionCache(Path(target))


def local_directory(target: str | Path) -> Path:
    """Where local files that go with a cache live (the document index): the cache directory itself, or the
    default directory when the decisions are in Redis (the index is per machine; only answers are shared)."""
    return DEFAULT_CACHE_DIR if is_url(target) else Path(target)


# ------------------------------------------------------------------------------------------------------------
# export / import
# ------------------------------------------------------------------------------------------------------------

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

"""Where the decision cache's entries live: a local directory (diskcache) or a shared Redis server.

A backend is a plain key-value store of text: the key is `judge.llm.cache.store.cache_key` (64 hex digits of SHA-256),
the value the sealed canonical JSON of an answer (judge.llm.cache.store.seal), stored as the same UTF-8 text in both.
It knows nothing of answers; `judge.llm.cache.store.DecisionCache` is the one interface the client, the calibration
suite and the `cache` commands use over either. Redis keeps the entries under `argue-judge:decision:<key>`, so
one Redis database can also hold other data; several machines pointing at one Redis server share every answer.

    open_backend("caches")                     -> DiskBackend (caches/decisions)
    open_backend("redis://10.0.0.5:6379/0")    -> RedisBackend

Errors, one way for both: a store that cannot be opened or reached is a ConfigurationError naming the cure; a
read or write that fails once open is a CacheBackendError (`DamagedStore` when the disk database itself is
damaged), which DecisionCache turns into a miss (read) or an OutputError (write).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

import diskcache

from judge.errors import ConfigurationError, missing_extra

DEFAULT_CACHE_DIR = Path("caches")
DECISIONS_SUBDIR = "decisions"
REDIS_PREFIX = "argue-judge:decision:"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_SCAN_BATCH = 1000

T = TypeVar("T")


class CacheBackendError(Exception):
    """A read or write of an open cache store failed; the message is the reason, in one phrase."""


class DamagedStore(CacheBackendError):
    """The disk database is damaged (not merely locked or read-only): only removing it cures it."""


@runtime_checkable
class CacheBackend(Protocol):
    """A key-value store of decision-cache entries: keys and values are str (values: sealed canonical JSON)."""

    location: str
    blocking: bool   # each call is a network round trip: the client runs it in a thread, off the event loop

    def get(self, key: str) -> str | None: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> bool: ...

    def keys(self) -> Iterator[str]: ...

    def __len__(self) -> int: ...

    def size_bytes(self) -> int | None: ...

    def clear(self) -> int: ...

    def close(self) -> None: ...


def open_store(directory: Path) -> diskcache.Cache:
    """The diskcache under `directory`. Never culled: diskcache's default drops the least recently stored entries
    once the store passes 1 GB, which at TREC scale would silently turn a free, byte-identical rerun into new
    model calls (and, on the embedded judge, possibly other answers)."""
    return diskcache.Cache(str(directory), eviction_policy="none")


def reason(exc: BaseException) -> str:
    text = " ".join(str(getattr(exc, "strerror", None) or exc).split())
    return text or type(exc).__name__


class DiskBackend:
    """The local diskcache under `<directory>/decisions`; a database that cannot be opened (corrupt, not a
    database, unreadable) is a ConfigurationError that names the cure."""

    blocking = False

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.location = str(self.directory)
        try:
            self._store = open_store(self.directory / DECISIONS_SUBDIR)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise ConfigurationError(
                f"cannot open the decision cache in {directory}: {reason(exc)}; run  argue-judge cache clear "
                f"--cache-dir {directory}  to reset it (or pass --no-cache)") from exc

    def _call(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except sqlite3.OperationalError as exc:   # locked, read-only, full disk, I/O: the database is sound
            raise CacheBackendError(reason(exc)) from exc
        except sqlite3.DatabaseError as exc:      # a damaged page, not a database
            raise DamagedStore(reason(exc)) from exc
        except OSError as exc:
            raise CacheBackendError(reason(exc)) from exc

    def get(self, key: str) -> str | None:
        return self._call(lambda: self._store.get(key))

    def set(self, key: str, value: str) -> None:
        self._call(lambda: self._store.set(key, value))

    def delete(self, key: str) -> bool:
        return self._call(lambda: self._store.delete(key))

    def keys(self) -> Iterator[str]:
        return iter(self._call(lambda: list(self._store)))

    def __len__(self) -> int:
        return self._call(lambda: len(self._store))

    def size_bytes(self) -> int | None:
        return self._call(self._store.volume)

    def clear(self) -> int:
        return self._call(self._store.clear)

    def close(self) -> None:
        self._store.close()


class RedisBackend:
    """A Redis database shared by every machine of an evaluation. Values are the same UTF-8 text as on disk."""

    blocking = True

    def __init__(self, url: str):
        try:
            import redis  # imported here so local runs never pay for it
        except ImportError:
            raise missing_extra("a Redis decision cache (--cache redis://...)", "redis") from None

        self.location = url
        self._errors = redis.exceptions.RedisError
        try:
            # A bounded connect: an unreachable host must fail in seconds, not hang the run.
            self._client = redis.Redis.from_url(url, socket_connect_timeout=5)
        except ValueError as exc:
            raise ConfigurationError(f"cache URL {url!r}: {exc}; write redis://HOST:PORT/DB") from None
        try:
            self._client.ping()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise ConfigurationError(f"cannot reach the Redis cache at {url}: {exc}; start the server or fix "
                                     "the cache URL") from None
        except redis.exceptions.ResponseError as exc:  # e.g. a database number the server does not have
            raise ConfigurationError(f"the Redis cache at {url} refused the connection: {exc}") from None

    def _call(self, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except self._errors as exc:   # connection lost, timeout, a refused command
            raise CacheBackendError(reason(exc)) from exc

    def get(self, key: str) -> str | None:
        raw = self._call(lambda: self._client.get(REDIS_PREFIX + key))
        return None if raw is None else raw.decode("utf-8")

    def set(self, key: str, value: str) -> None:
        self._call(lambda: self._client.set(REDIS_PREFIX + key, value.encode("utf-8")))

    def delete(self, key: str) -> bool:
        return bool(self._call(lambda: self._client.delete(REDIS_PREFIX + key)))

    def keys(self) -> Iterator[str]:
        # SCAN, never KEYS: it does not block a server other machines are using. Listed whole, so an error
        # surfaces here and a caller deleting while iterating cannot skip entries.
        raw_keys = self._call(lambda: list(self._client.scan_iter(match=REDIS_PREFIX + "*", count=_SCAN_BATCH)))
        return iter([raw.decode("utf-8")[len(REDIS_PREFIX):] for raw in raw_keys])

    def __len__(self) -> int:
        return sum(1 for _ in self.keys())

    def size_bytes(self) -> int | None:
        return None  # Redis reports memory per server, not per key prefix; counting every value would be O(n)

    def clear(self) -> int:
        return sum(self.delete(key) for key in self.keys())

    def close(self) -> None:
        self._client.close()


def is_url(target: str | Path) -> bool:
    return isinstance(target, str) and "://" in target


def open_backend(target: str | Path) -> CacheBackend:
    """A directory (str or Path) -> DiskBackend; `redis://HOST:PORT/DB` (or rediss://, unix://) -> RedisBackend."""
    if is_url(target):
        url = str(target)
        if not url.startswith(REDIS_SCHEMES):
            raise ConfigurationError(f"cache {url!r}: unknown scheme; give a directory or redis://HOST:PORT/DB")
        return RedisBackend(url)
    return DiskBackend(target)


def local_directory(target: str | Path) -> Path:
    """Where local files that go with a cache live (the document index): the cache directory itself, or the
    default directory when the decisions are in Redis (the index is per machine; only answers are shared)."""
    return DEFAULT_CACHE_DIR if is_url(target) else Path(target)


def docstore_dir(cache: str | Path | None) -> Path:
    """The document index of a run with this decision cache: beside the cache (with none, or a Redis one, beside the
    default cache directory)."""
    return local_directory(cache if cache is not None else DEFAULT_CACHE_DIR) / "docstore"

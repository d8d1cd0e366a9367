"""The decision cache (argue-judge cache stats|clear|export|import)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judge.api._inputs import DEFAULT_CACHE, PathLike, _check_path
from judge.settings import Flag, check


@contextmanager
def _cache_failures(target: PathLike, *, writing: bool) -> Iterator[None]:
    """A store that fails mid-call (a lost Redis connection, a locked or damaged database): OutputError when the
    call was writing to it, ConfigurationError (an unreadable cache) when reading."""
    from judge.errors import ConfigurationError, OutputError
    from judge.llm.cache.backends import CacheBackendError

    try:
        yield
    except CacheBackendError as exc:
        if writing:
            raise OutputError(f"cannot write the decision cache at {target}: {exc}") from exc
        raise ConfigurationError(f"cannot read the decision cache at {target}: {exc}") from exc


def _cache_target(cache: PathLike) -> str | Path:
    """A URL as given; a directory only when it holds a cache (opening a mistyped path would create one)."""
    _check_path("cache", cache, optional=False)
    from judge.llm.cache.backends import is_url
    from judge.llm.cache.store import existing_cache_directory

    return str(cache) if is_url(str(cache)) else existing_cache_directory(Path(cache))


def cache_stats(cache: PathLike = DEFAULT_CACHE) -> dict[str, Any]:
    """How many decisions a cache (a directory or redis://...) holds and how much space they use:
    {"location", "entries", "bytes"} (bytes None where the store cannot say)."""
    from judge.llm.cache.store import open_decision_cache

    with _cache_failures(cache, writing=False):
        store = open_decision_cache(_cache_target(cache))
        try:
            return dict(store.stats())
        finally:
            store.close()


def clear_cache(cache: PathLike = DEFAULT_CACHE) -> int | None:
    """Delete every cached decision; the number removed (None: an unreadable database was removed whole)."""
    from judge.llm.cache.backends import is_url
    from judge.llm.cache.store import clear_cache_directory, existing_cache_directory, open_decision_cache

    _check_path("cache", cache, optional=False)
    with _cache_failures(cache, writing=True):
        if is_url(str(cache)):
            store = open_decision_cache(str(cache))
            try:
                return store.clear()
            finally:
                store.close()
        # a directory: this also cures a database that cannot be opened (DecisionCache's error says so)
        return clear_cache_directory(existing_cache_directory(Path(cache)))


def export_cache(cache: PathLike = DEFAULT_CACHE, out: PathLike | None = None) -> Iterator[str] | int:
    """Every cached decision as JSONL lines (key, value, checksum; a header first), in key order: into the file
    `out` (replaced when complete; returns the count), or with no `out` as the lines themselves."""
    from judge.formats.atomic import atomic_path
    from judge.llm.cache.backends import open_backend
    from judge.llm.cache.transfer import export_entries

    _check_path("cache", cache, optional=False)
    _check_path("out", out)
    if out is None:
        def lines() -> Iterator[str]:
            with _cache_failures(cache, writing=False):
                source = open_backend(_cache_target(cache))
                try:
                    yield from export_entries(source)
                finally:
                    source.close()
        return lines()
    with _cache_failures(cache, writing=False):
        source = open_backend(_cache_target(cache))
        try:
            with atomic_path(Path(out)) as temp, temp.open("w", encoding="utf-8") as handle:
                return sum(handle.write(line) > 0 for line in export_entries(source)) - 1  # minus the header
        finally:
            source.close()


def import_cache(file: PathLike, cache: PathLike = DEFAULT_CACHE, *, overwrite: bool = False) -> Any:
    """Add the decisions of a `cache export` file to a cache; counts of added, unchanged, replaced (with
    `overwrite`) or conflicting entries kept."""
    from judge.formats._jsonl import decode_utf8
    from judge.llm.cache.backends import open_backend
    from judge.llm.cache.transfer import import_entries

    check("overwrite", overwrite, Flag)
    _check_path("file", file, optional=False)
    _check_path("cache", cache, optional=False)
    with _cache_failures(cache, writing=True):
        destination = open_backend(str(cache))
        try:
            with Path(file).open("rb") as lines:
                text = (decode_utf8(line, str(file), number) for number, line in enumerate(lines, start=1))
                return import_entries(destination, text, str(file), overwrite=overwrite)
        finally:
            destination.close()


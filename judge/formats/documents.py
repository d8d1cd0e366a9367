"""Document collections behind an on-disk SQLite index, so millions of documents never sit in memory.

Sources are JSONL files (or .jsonl.gz, or directories of them) with one document per line:
    {"doc_id": str, "title"?: str | null, "text": str}
Aliases, for collections that spell fields differently: `docid`, `id` or `docno` for `doc_id` (MS MARCO /
Pyserini / ir_datasets exports such as the TREC AutoJudge spot-check corpus),
`contents` (Pyserini) or `segment` (MS MARCO v2.1 segmented, TREC RAG) for `text`. Other keys are ignored.

The index lives in `index_dir` as `<hash>.docstore.sqlite`, the hash taken over the sorted (absolute path,
size, mtime_ns) of the sources, so a later run reuses it and a changed source gets a fresh one. Old indexes
are not deleted (another run may still use them); clear the directory to reclaim space. A build writes a
temporary file and renames it into place, so a killed build leaves a stray `*.tmp` file at worst, never a
half index; the next open removes such strays once their process is gone (or they sat untouched for an hour,
for a build on another machine sharing the directory).

Each row keeps the source file and line of its document, so a size limit (`check_sizes`, `--max-doc-bytes`)
names where the oversized document is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from judge.errors import InputError
from judge.formats import registry
from judge.formats._jsonl import (
    Source,
    Sources,
    expand_paths,
    get_id,
    is_literal,
    iter_jsonl,
    read_one,
    source_name,
    type_name,
)
from judge.types import Document

log = logging.getLogger(__name__)

# Bump when the table layout or the parsing rules change, so existing indexes are not reused by mistake.
_SCHEMA_VERSION = 3
_STALE_SECONDS = 3600
_BATCH = 5000
_ID_KEYS = ("doc_id", "docid", "id", "docno")
_TEXT_KEYS = ("text", "contents", "segment")


class DocumentStore:
    """Read-only lookup of documents by id. One SQLite connection; safe for many asyncio tasks in one thread
    (and, thanks to a lock, for a few threads)."""

    def __init__(self, conn: sqlite3.Connection, index_path: Path, *, built: bool, count: int,
                 duplicates: int, empty_sources: tuple[str, ...] = (), sources: tuple[str, ...] = ()):
        self._conn = conn
        self._lock = threading.Lock()
        self.index_path = index_path
        self.built = built  # True when this open() had to (re)build the index
        self.duplicates = duplicates  # lines whose doc_id was already seen; the first copy is kept
        self.empty_sources = empty_sources  # source files that held no document (reported by input_warnings)
        self.sources = sources  # source names, indexed by each row's `source` column
        self._count = count
        self._label: str | None = None  # documents given in memory: named `label[index]` (see `of`)

    @classmethod
    def open(cls, sources: Sources, index_dir: str | Path) -> DocumentStore:
        files = expand_paths(sources)
        if not files:
            raise InputError("no document collection given; pass at least one JSONL file or directory")
        index_dir = Path(index_dir)
        try:
            index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the document index directory: {exc.strerror or exc}",
                             index_dir) from exc
        index_path = index_dir / f"{_fingerprint(files)}.docstore.sqlite"
        remove_stale_builds(index_dir)

        if index_path.exists():
            store = cls._try_open(index_path, built=False)
            if store is not None:
                return store
            log.warning("document index %s is unreadable; rebuilding it", index_path)
        _build(files, index_path)
        store = cls._try_open(index_path, built=True)
        if store is None:  # pragma: no cover - we just wrote it
            raise InputError("the freshly built document index cannot be read", index_path)
        return store

    @classmethod
    def of(cls, documents: Iterable[Document], name: str = "documents") -> DocumentStore:
        """A store of documents already in memory (the API's `docs=` objects), indexed in an in-memory SQLite
        database: nothing is written to disk, and lookups, sizes and duplicates behave as for files. Errors name
        a document as `name[index]`."""
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        rows = ((d.doc_id, d.title, d.text, i, 0) for i, d in enumerate(documents))
        duplicates = _fill(conn, rows, [], [])
        store = cls._try_open_connection(conn, Path(":memory:"), built=True)
        if store is None:  # pragma: no cover - we just filled it
            raise InputError("the in-memory document index cannot be read", name)
        store._label = name
        if duplicates:
            log.warning("%d duplicate doc_id line(s) in the collection; kept the first copy of each", duplicates)
        return store

    @classmethod
    def _try_open(cls, index_path: Path, *, built: bool) -> DocumentStore | None:
        uri = index_path.resolve().as_uri() + "?mode=ro"
        return cls._try_open_connection(sqlite3.connect(uri, uri=True, check_same_thread=False), index_path,
                                        built=built)

    @classmethod
    def _try_open_connection(cls, conn: sqlite3.Connection, index_path: Path, *, built: bool) -> DocumentStore | None:
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if int(meta.get("schema_version", -1)) != _SCHEMA_VERSION:
                conn.close()
                return None
            return cls(conn, index_path, built=built, count=int(meta["count"]),
                       duplicates=int(meta["duplicates"]), empty_sources=tuple(json.loads(meta["empty_sources"])),
                       sources=tuple(json.loads(meta["sources"])))
        except (sqlite3.DatabaseError, KeyError, ValueError, TypeError):
            conn.close()
            return None

    def get(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._conn.execute("SELECT title, text FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()
        if row is None:
            return None
        return Document(doc_id=doc_id, title=row[0], text=row[1])

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, str):
            return False
        with self._lock:
            return self._conn.execute("SELECT 1 FROM docs WHERE doc_id = ?", (doc_id,)).fetchone() is not None

    def __len__(self) -> int:
        return self._count

    def check_sizes(self, doc_ids: Iterable[str], max_bytes: int) -> None:
        """InputError (naming the document's file and line) for the first of `doc_ids` whose text is over
        `max_bytes` bytes of UTF-8; ids the collection lacks are skipped (they are reported elsewhere)."""
        for doc_id in doc_ids:
            with self._lock:
                row = self._conn.execute("SELECT length(CAST(text AS BLOB)), source, line FROM docs WHERE doc_id = ?",
                                         (doc_id,)).fetchone()
            if row is not None and row[0] > max_bytes:
                size, source, line = row
                if self._label is not None:
                    where, line = f"{self._label}[{source}]", None
                else:
                    where = self.sources[source] if 0 <= source < len(self.sources) else str(self.index_path)
                raise InputError(f"document '{doc_id}' is {size:,} bytes, over --max-doc-bytes {max_bytes:,}; raise "
                                 "--max-doc-bytes or remove the document from the collection", where, line)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DocumentStore({str(self.index_path)!r}, {self._count} documents)"


def _fingerprint(files: list[Source]) -> str:
    """Identity of the source set: changes whenever a file is added, removed, replaced or edited."""
    parts: list[list[Any]] = []
    for source in files:
        if is_literal(source):
            parts.append(["<string>", hashlib.sha256(str(source).encode("utf-8")).hexdigest()])
        else:
            path = Path(source).resolve()
            st = path.stat()
            parts.append([str(path), st.st_size, st.st_mtime_ns])
    parts.sort()
    blob = json.dumps({"schema": _SCHEMA_VERSION, "sources": parts}, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def remove_stale_builds(index_dir: Path) -> int:
    """Delete temp files of index builds that were killed (their process is gone, or they sat untouched for an
    hour); returns how many. A build still running in another process keeps its file."""
    removed = freed = 0
    for temp in index_dir.glob(".*.docstore.sqlite.*.tmp"):
        try:
            pid = int(temp.name.rsplit(".", 3)[-3])
            stat = temp.stat()
        except (ValueError, IndexError, OSError):
            continue
        if _process_alive(pid) and time.time() - stat.st_mtime < _STALE_SECONDS:
            continue
        try:
            temp.unlink()
        except OSError:
            continue
        removed, freed = removed + 1, freed + stat.st_size
    if removed:
        log.warning("removed %d temporary file(s) (%.1f MB) left in %s by interrupted document index builds",
                    removed, freed / 1e6, index_dir)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, owned by someone else
        return True
    return True


def _build(files: list[Source], index_path: Path) -> None:
    # Unique temp name in the same directory: rename is atomic only within one filesystem, and two processes
    # building at once must not write the same file.
    tmp = index_path.with_name(f".{index_path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    log.info("building document index %s from %d file(s)", index_path, len(files))
    conn = sqlite3.connect(tmp)
    try:
        # The temp file is thrown away on any failure, so durability pragmas would only slow the build.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        empty: list[str] = []

        def rows() -> Iterator[tuple[str, str | None, str, int, int]]:
            for number, source in enumerate(files):
                name = source_name(source)
                lines = 0
                for line, record in iter_jsonl(source):
                    lines += 1
                    document = read_one(registry.parse("documents", record, name, line), Document, name, line)
                    yield (document.doc_id, document.title, document.text, number, line)
                if not lines:
                    empty.append(name)

        duplicates = _fill(conn, rows(), empty, [source_name(s) for s in files])
        conn.close()
        os.replace(tmp, index_path)
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    if duplicates:
        log.warning("%d duplicate doc_id line(s) in the collection; kept the first copy of each", duplicates)


def _fill(conn: sqlite3.Connection, rows: Iterable[tuple[str, str | None, str, int, int]], empty: list[str],
          sources: list[str]) -> int:
    """The index's tables, filled with `rows` (doc_id, title, text, source number, line), first copy wins; returns
    how many rows repeated a doc_id. `empty` is read once `rows` is exhausted."""
    conn.execute("CREATE TABLE docs (doc_id TEXT PRIMARY KEY, title TEXT, text TEXT NOT NULL, "
                 "source INTEGER NOT NULL, line INTEGER NOT NULL)")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    count = duplicates = 0
    batch: list[tuple[str, str | None, str, int, int]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _BATCH:
            added = _insert(conn, batch)
            count, duplicates, batch = count + added, duplicates + len(batch) - added, []
    if batch:
        added = _insert(conn, batch)
        count, duplicates = count + added, duplicates + len(batch) - added
    meta = {"schema_version": _SCHEMA_VERSION, "count": count, "duplicates": duplicates,
            "empty_sources": json.dumps(empty, ensure_ascii=False), "sources": json.dumps(sources, ensure_ascii=False)}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
    conn.commit()
    return duplicates


def _insert(conn: sqlite3.Connection, batch: list[tuple[str, str | None, str, int, int]]) -> int:
    """Insert a batch, first copy wins; returns how many rows were new."""
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO docs VALUES (?, ?, ?, ?, ?)", batch)
    return conn.total_changes - before


def _parse_document(record: dict[str, Any], name: str, line: int | None) -> tuple[str, str | None, str]:
    doc_id = None
    for key in _ID_KEYS:
        doc_id = get_id(record, key, key, name, line)
        if doc_id is not None:
            break
    if doc_id is None:
        raise InputError("missing field 'doc_id' (or 'docid' / 'id' / 'docno')", name, line)

    text_key = next((k for k in _TEXT_KEYS if k in record), None)
    if text_key is None:
        raise InputError(f"document {doc_id!r}: missing field 'text' (or 'contents' / 'segment')", name, line)
    text = record[text_key]
    if not isinstance(text, str):
        raise InputError(f"document {doc_id!r}: field '{text_key}' must be a string, found {type_name(text)}",
                         name, line)

    title = record.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(f"document {doc_id!r}: field 'title' must be a string or null, found "
                         f"{type_name(title)}", name, line)
    return doc_id, title, text

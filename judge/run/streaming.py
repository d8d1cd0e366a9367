"""The judgments file written as the run goes: one line per report, appended and flushed the moment the report's
judgment is complete, then put in canonical order when the run ends.

While a run is going, its `judgments.jsonl` is a log in completion order (in the working folder
`OUT/.argue-run/`, see judge.formats.atomic.WorkingFolder, so a finished run's file stays whole beside it): valid
JSONL that `argue-judge score` can read at any time, and all a killed run leaves behind besides its cache.
`finalise()` rewrites it in the order a single uninterrupted run writes (sorted by run id, then request id)
through a temporary file and an atomic rename, copying each line's bytes unchanged: the final file is
byte-identical to `write_judgments` of the same judgments, whatever order they completed in, and a crash during
the rewrite leaves the log intact.

On restart `JudgmentStream.open(path, resume=True)` reads the log back (dropping a last line cut short by the
kill), so the caller can skip the reports already judged; `resume=False` starts an empty log. A report judged
again later supersedes its earlier line. Only an index (key -> byte offset) is kept in memory, never the
judgments themselves, so memory stays flat however many reports there are; after the run `StoredJudgments`
reads the final file back one judgment at a time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, Self, overload

from judge.errors import InputError
from judge.formats.atomic import output_errors
from judge.formats.judgments import ReportJudgment, dumps
from judge.judging.judgments_reader import iter_judgments

Key = tuple[str, str]


class JudgmentStream:
    def __init__(self, path: Path, handle: IO[bytes], index: dict[Key, tuple[int, int]], *, fsync: bool):
        self.path = path
        self._out = handle
        self._index = index          # (run_id, request_id) -> (offset, length) of its latest line, newline included
        self._fsync = fsync
        self._closed = False

    @classmethod
    def open(cls, path: str | Path, *, resume: bool, signature: str | None = None, fsync: bool = False) -> Self:
        """`resume=True` keeps what an earlier, interrupted run wrote; given the run's judge `signature`, a log
        written by another judge configuration is refused rather than mixed in. `fsync=True` also survives a
        power cut (slower: one disk sync per report); a kill -9 of the process loses nothing once a line is
        flushed."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        index: dict[Key, tuple[int, int]] = {}
        if resume and path.exists():
            index = _scan(path, signature)
            handle = path.open("r+b")
            handle.seek(0, os.SEEK_END)
        else:
            handle = path.open("wb")
        return cls(path, handle, index, fsync=fsync)

    # -- reading back -------------------------------------------------------------------------------------

    def done(self) -> set[Key]:
        """Keys of the reports already in the file (judged by this run or the interrupted one before it)."""
        return set(self._index)

    def __contains__(self, key: Key) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def get(self, key: Key) -> ReportJudgment | None:
        """The latest judgment of one report, read from disk (None if it is not in the file)."""
        if key not in self._index:
            return None
        self._out.flush()
        offset, length = self._index[key]
        with self.path.open("rb") as log:
            log.seek(offset)
            return next(iter_judgments(log.read(length).decode("utf-8")))

    def discard(self, key: Key) -> None:
        """Leave a report out of the final file (e.g. a resumed log holds a report this run no longer has)."""
        self._index.pop(key, None)

    def judgments(self) -> Iterator[ReportJudgment]:
        """The latest judgment of every report, in canonical order, read from disk one at a time."""
        self._out.flush()
        with self.path.open("rb") as log:
            for key in sorted(self._index):
                offset, length = self._index[key]
                log.seek(offset)
                yield from iter_judgments(log.read(length).decode("utf-8"))

    # -- writing ------------------------------------------------------------------------------------------

    def append(self, judgment: ReportJudgment) -> None:
        """Write one report's judgment and push it to the OS before returning."""
        if self._closed:
            raise ValueError(f"{self.path}: the judgment stream is already closed")
        line = (dumps(judgment) + "\n").encode("utf-8")
        with output_errors(self.path):  # a full disk: one line naming the file, exit 6
            offset = self._out.tell()
            self._out.write(line)
            self._out.flush()
            if self._fsync:
                os.fsync(self._out.fileno())
        self._index[judgment.key] = (offset, len(line))

    def finalise(self) -> Path:
        """Rewrite the file in canonical order (atomically) and close the stream. Returns the path."""
        tmp = self.path.with_name(self.path.name + ".tmp")
        with output_errors(self.path):
            try:
                self._out.flush()
                with self.path.open("rb") as log, tmp.open("wb") as out:
                    for key in sorted(self._index):
                        offset, length = self._index[key]
                        log.seek(offset)
                        out.write(log.read(length))
                    out.flush()
                    os.fsync(out.fileno())
            except OSError:
                tmp.unlink(missing_ok=True)  # the log stays whole for --resume
                raise
            self.close()
            tmp.replace(self.path)
        return self.path

    def close(self) -> None:
        """Stop writing, leaving the log as it is (an interrupted run: resume it later)."""
        if not self._closed:
            self._closed = True
            with output_errors(self.path):  # closing flushes: on a full disk that fails too
                self._out.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StoredJudgments(Sequence[ReportJudgment]):
    """The judgments of a finished run, read back from its final file one at a time (never all in memory), each
    decision marked with whether this run took it from the cache: `cached` is a per-run fact the file does not
    hold, kept here per report as one byte per decision (a report absent from `cached`, e.g. one a resumed run
    kept, has every decision cached). Iterate it; indexing reads the file up to the judgment asked for."""

    def __init__(self, path: Path, count: int, cached: Mapping[Key, bytes]):
        self.path = path
        self._count = count
        self._cached = cached

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[ReportJudgment]:
        if not self._count:  # a shard may hold no report at all: its file is empty
            return
        for judgment in iter_judgments(self.path):
            flags = iter(self._cached.get(judgment.key, b""))
            for sentence in judgment.sentences:
                for decision in sentence.decisions:
                    decision.cached = bool(next(flags, True))
            yield judgment

    @overload
    def __getitem__(self, index: int) -> ReportJudgment: ...

    @overload
    def __getitem__(self, index: slice) -> list[ReportJudgment]: ...

    def __getitem__(self, index: int | slice) -> ReportJudgment | list[ReportJudgment]:
        if isinstance(index, slice):
            return list(islice(self, *index.indices(self._count)))
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(f"judgment {index} of {self._count}")
        return next(islice(self, position, None))


def _scan(path: Path, signature: str | None) -> dict[Key, tuple[int, int]]:
    """Index a judgments log; cut off a last line the kill left unfinished (no newline, or not JSON)."""
    index: dict[Key, tuple[int, int]] = {}
    offset = 0
    with path.open("rb") as log:
        for number, line in enumerate(log, start=1):
            complete = line.endswith(b"\n")
            try:
                record = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                record = None
                if complete:
                    raise InputError("not a judgments line (malformed JSON); this file cannot be resumed: start "
                                     "afresh or fix the line", path, number) from None
            if not complete:
                break  # the write the kill interrupted: dropped, and that report is judged again
            if record is not None:
                index[_key_of(record, path, number)] = (offset, len(line))
                if signature is not None and record.get("signature") != signature:
                    raise InputError(f"judged with another configuration ({record.get('signature')}) than this "
                                     f"run ({signature}); resume into a fresh --out directory or start afresh",
                                     path, number)
            offset += len(line)
    if offset != path.stat().st_size:
        with path.open("r+b") as log:
            log.truncate(offset)
    return index


def _key_of(record: object, path: Path, number: int) -> Key:
    if not isinstance(record, dict) or not isinstance(record.get("run_id"), str) \
            or not isinstance(record.get("request_id"), str):
        raise InputError("not a judgments line (needs string run_id and request_id); this file cannot be resumed",
                         path, number)
    return (record["run_id"], record["request_id"])

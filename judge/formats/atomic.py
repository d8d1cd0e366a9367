"""Outputs are written whole or not at all.

Every output goes to a temporary file in its own directory (a rename is atomic only within one filesystem) and
is renamed over the target once complete, so a full disk, a permission error or a kill leaves the previous file
(or none), never a truncated one beside complete ones. An `OSError` while writing becomes
`judge.errors.OutputError`: one line that names the file.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from judge.errors import OutputError


def temp_path_for(path: Path) -> Path:
    """A hidden, unique sibling: two processes writing the same output never share a temp file."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@contextmanager
def staged(paths: Iterable[Path]) -> Iterator[dict[Path, Path]]:
    """Temporary paths for several outputs (target -> temp); the caller writes them all, and only then are they
    renamed into place, so one failed write leaves every target as it was. Temps are removed on any failure."""
    temps = {Path(p): temp_path_for(Path(p)) for p in paths}
    try:
        for target in temps:
            target.parent.mkdir(parents=True, exist_ok=True)
        yield temps
        for target, temp in temps.items():
            os.replace(temp, target)
    except OSError as exc:
        raise OutputError(_describe(exc, temps)) from exc
    finally:
        for temp in temps.values():
            with suppress(OSError):
                temp.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """One output: write to the yielded temp path; it replaces `path` when the block ends without error."""
    with staged([path]) as temps:
        yield temps[Path(path)]


@contextmanager
def output_errors(path: Path) -> Iterator[None]:
    """An OSError inside (a full disk, a lost permission) becomes an OutputError naming `path`: for outputs
    written as they go (the judgments stream), which cannot be staged whole."""
    try:
        yield
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def write_text_atomic(path: Path, text: str) -> None:
    with atomic_path(path) as temp:
        temp.write_text(text, encoding="utf-8")


def _describe(exc: OSError, temps: dict[Path, Path]) -> str:
    """Name the output the user asked for, not our temp file."""
    where = exc.filename
    for target, temp in temps.items():
        if where is not None and str(where) in (str(temp), str(target)):
            where = target
            break
    if where is None:
        where = next(iter(temps), "the output directory")
    reason = exc.strerror or str(exc)
    return f"cannot write {where}: {reason}"


WORK_DIR = ".argue-run"
_COMMIT = "COMMIT"


class WorkingFolder:
    """`OUT/.argue-run/`: where a command writes a whole set of outputs before they replace the finished ones.

    A finished run's files are replaced only by another finished run's: everything is written here first (eval's
    judgments log too, which is what `--resume` reads after a kill), then `commit` moves the files into `OUT`.
    The move is journalled: a `COMMIT` file listing the names is written (atomically) once every file is complete,
    then each file is renamed over its target, then the folder is removed. A kill between two renames leaves the
    journal, and the next command into `OUT` finishes the move (`recover`) before doing anything else, so `OUT`
    never keeps a mix of two runs' files. Hold the folder's lock (judge.formats.lock) around all of it."""

    def __init__(self, out: str | Path):
        self.out = Path(out)
        self.path = self.out / WORK_DIR

    def file(self, name: str) -> Path:
        return self.path / name

    def exists(self) -> bool:
        return self.path.is_dir()

    def committing(self) -> bool:
        """Whether a commit was cut short (its journal is still there)."""
        return (self.path / _COMMIT).is_file()

    def recover(self) -> None:
        """Finish a commit a kill cut short; leave an uncommitted run's files (`--resume` reads its log)."""
        if self.committing():
            names = (self.path / _COMMIT).read_text(encoding="utf-8").split("\n")
            self._move([name for name in names if name])

    def start(self, keep: Iterable[str] = ()) -> None:
        """An empty working folder but for the files named in `keep` (a resumed run's log)."""
        self.recover()
        kept = set(keep)
        if self.exists():
            for entry in self.path.iterdir():
                if entry.name not in kept:
                    shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {exc.strerror or exc}") from exc

    def commit(self, names: Iterable[str]) -> dict[str, Path]:
        """Move the named files (complete, in the working folder) into `OUT` as one step; returns their new
        paths. An OSError becomes OutputError naming the output; the finished files are then left as they were."""
        names = list(names)
        try:
            for name in names:
                with self.file(name).open("rb") as written:
                    os.fsync(written.fileno())  # on disk before the journal says the set is complete
            journal = temp_path_for(self.path / _COMMIT)
            journal.write_text("\n".join(names) + "\n", encoding="utf-8")
            os.replace(journal, self.path / _COMMIT)
        except OSError as exc:
            raise self.output_error(exc, names) from exc
        self._move(names)
        return {name: self.out / name for name in names}

    def discard(self) -> None:
        """Remove the working folder (after an output error: every decision is in the cache)."""
        if not self.committing():
            shutil.rmtree(self.path, ignore_errors=True)

    def output_error(self, exc: OSError, names: Iterable[str]) -> OutputError:
        """One line naming the output the user asked for (`OUT/name`), not its working copy."""
        return OutputError(_describe(exc, {self.out / n: self.file(n) for n in names}))

    def _move(self, names: list[str]) -> None:
        try:
            for name in names:
                if self.file(name).exists():  # a recovered commit may have moved some already
                    os.replace(self.file(name), self.out / name)
        except OSError as exc:
            raise self.output_error(exc, names) from exc
        shutil.rmtree(self.path, ignore_errors=True)

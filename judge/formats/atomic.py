"""Outputs are written whole or not at all.

Every output goes to a temporary file in its own directory (a rename is atomic only within one filesystem) and
is renamed over the target once complete, so a full disk, a permission error or a kill leaves the previous file
(or none), never a truncated one beside complete ones. An `OSError` while writing becomes
`judge.errors.OutputError`: one line that names the file.
"""

from __future__ import annotations

import os
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

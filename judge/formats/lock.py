"""One writer per output folder: an exclusive `fcntl.flock` on `OUT/.argue-lock`.

Two runs writing one `--out` at once interleave their judgments lines and each renames its files over the
other's. While a command writes a folder it holds the lock; a second command refuses at once with one line that
names the holder, read from the lock file: "argue-judge eval (pid 4711) is writing OUT since 2026-11-26T20:11:09Z".
The kernel drops a flock when its holder exits, however it exits (kill -9 too), so a lock left by a dead process
never blocks anyone and needs no clean-up; the file itself stays (removing it would race with a process that has
just opened it). Its text is the holder's while the lock is held and empty once released.

Each command takes its folder's lock once and holds it from its first check to its last rename; nothing takes a
lock it already holds, so a second hold of a folder, in this process too (another thread, a notebook's second
call), is refused like another process's. Readers (merge reading shards) take a shared lock, which any number may
hold but not beside a writer; a folder this process is writing it reads without one.

Where there is no flock (Windows, a file system that refuses it) commands run unlocked, as they did before.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from judge.errors import InputError, OutputError

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".argue-lock"

_held: set[str] = set()          # the resolved folders this process is writing
_guard = threading.Lock()


@contextmanager
def output_lock(out: str | Path, command: str) -> Iterator[None]:
    """Hold `out` for writing (creating the folder) while the block runs; raises InputError (exit 2) naming the
    process that holds it. `command` ('eval', 'merge', 'view' ...) is what the refusal tells the other user."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError("--out must be a directory, and this is a file (or under one)", out) from None
    except OSError as exc:
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from exc
    key = str(out.resolve())
    advice = "wait for it to end or choose another --out"
    with _guard:
        if key in _held:  # where flock would not tell (no flock), this process's own hold refuses all the same
            raise InputError(f"{_holder(out / LOCK_NAME)} is writing {out}{_since(out / LOCK_NAME)}; {advice}")
        fd = _acquire(out, "exclusive", advice)
        _held.add(key)
        if fd is not None:
            _write_holder(fd, command)
    try:
        yield
    finally:
        with _guard:
            _held.discard(key)
            if fd is not None:
                os.ftruncate(fd, 0)  # while still held: nobody reads a released holder's line
                os.close(fd)


@contextmanager
def reading_lock(folder: str | Path) -> Iterator[None]:
    """Read `folder` (an earlier command's output) while no command writes it: InputError naming the writer if
    one does. A folder without a lock file was never written by a command that locks: nothing to wait for."""
    folder = Path(folder)
    if not (folder / LOCK_NAME).is_file() or str(folder.resolve()) in _held:
        yield
        return
    fd = _acquire(folder, "shared", "wait for it to end")
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _acquire(folder: Path, mode: str, advice: str) -> int | None:
    """The open, locked lock file; None where locks are not to be had (no flock; a shared lock on a folder we
    may only read, which no command of ours can be writing as this user either)."""
    if fcntl is None:
        return None
    path = folder / LOCK_NAME
    exclusive = mode == "exclusive"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT if exclusive else os.O_RDONLY, 0o644)
    except OSError as exc:
        if not exclusive:
            return None
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise InputError(f"{_holder(path)} is writing {folder}{_since(path)}; {advice}") from None
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            return None  # a file system without flock: unlocked, as before there were locks
        raise OutputError(f"cannot lock {path}: {exc.strerror or exc}") from exc
    return fd


def _write_holder(fd: int, command: str) -> None:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # not the command line: it may hold an --api-key
    text = json.dumps({"pid": os.getpid(), "command": command, "started": started}) + "\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode("utf-8"), 0)


def _read_holder(path: Path) -> dict[str, object]:
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # caught between the holder's lock and its first write: say less, not nothing
    return holder if isinstance(holder, dict) else {}


def _holder(path: Path) -> str:
    holder = _read_holder(path)
    if "pid" not in holder:
        return "another argue-judge command"
    return f"argue-judge {holder.get('command', '')} (pid {holder['pid']})".replace("  ", " ")


def _since(path: Path) -> str:
    started = _read_holder(path).get("started")
    return f" since {started}" if started else ""

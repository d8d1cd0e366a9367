"""Every output path, built in one place: from a folder a command was given and the ids and names it writes.

Three rules hold for every path built here.

1. **Inside `--out`.** An id becomes one file-name component by `file_name`: the characters `A-Z a-z 0-9 . _ -`
   stay, every other character is written as `%xx` (its UTF-8 bytes in lower-case hex), and so are a leading
   dot (no `.`, `..` or hidden name), a trailing dot (Windows drops it) and the first letter of a Windows device
   name (`con`, `nul`, `com1` ...). The mapping is reversible (`id_of(file_name(x)) == x`) and its names are
   ASCII, so no Unicode normalisation (macOS) can merge two of them. Two cases add `~` and eight hex digits of
   the id's SHA-256 (`~` never occurs otherwise, `id_of` drops it): an id holding an upper-case letter, so that
   two ids differing only in case never fall on one file of a case-insensitive file system (macOS, Windows); and
   an id whose name would pass `MAX_ID_CHARS`, cut there (such a name no longer holds the whole id: the file's
   contents do). Files written together whose names still fold to one (two digests alike) are refused.
2. **Apart from the inputs** (`check_apart`): no output is an input file, lies in an input folder, or lies in a
   folder every file of which that an input reader would take was given to this command one by one (the next
   run would read the outputs as inputs, or fail on them).
3. **Only over its own files** (`Outputs`): a command overwrites or removes only files it wrote itself and that
   nobody changed since; it records them, with their SHA-256, in `.argue-written` in the folder it holds the lock
   of. A bank folder (`exclusive`) must hold no other file a bank reader would take: `eval --nuggets` reads the
   folder whole. A rerun of the same command with the same inputs rewrites the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from judge.errors import InputError
from judge.formats._jsonl import JSONL_PATTERNS, is_literal
from judge.formats.atomic import staged, write_text_atomic
from judge.formats.nuggets import NUGGET_PATTERNS

# An id's part of a file name: with a prefix, a suffix and the temporary name beside it that judge.formats.atomic
# writes first (a dot, a pid and 13 more characters), the whole stays under the 255 bytes every file system allows.
MAX_ID_CHARS = 120
MANIFEST = ".argue-written"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})
# How an input reader picks files from a folder, per kind of input (judge.formats readers).
# Kinds absent here (a doc-lists file, a candidates file) are never read from a folder. eval's check takes its
# inputs as one kind, "inputs", read by the widest patterns.
READ_PATTERNS: dict[str, tuple[str, ...]] = {"reports": JSONL_PATTERNS, "requests": JSONL_PATTERNS,
                                             "documents": JSONL_PATTERNS, "nuggets": NUGGET_PATTERNS,
                                             "inputs": NUGGET_PATTERNS}


def _escape(char: str) -> str:
    return "".join(f"%{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def file_name(text: str) -> str:
    """`text` (an id, a name) as one safe file-name component (rules in the module docstring). ValueError for an
    empty text: nothing could name its file."""
    if not isinstance(text, str):
        raise TypeError(f"a file name is made from a str, not {type(text).__name__}")
    if not text:
        raise ValueError("an empty id cannot name a file")
    chars = [c if c in _SAFE else _escape(c) for c in text]
    if chars[0] == ".":
        chars[0] = _escape(".")
    if chars[-1] == ".":
        chars[-1] = _escape(".")
    if text.split(".")[0].lower() in _DEVICES:
        chars[0] = _escape(text[0])
    cut = len(chars)
    while sum(len(c) for c in chars[:cut]) > MAX_ID_CHARS:
        cut -= 1
    name = "".join(chars[:cut])
    if cut < len(chars) or any("A" <= c <= "Z" for c in text):
        name += "~" + _digest(text)
    return name


def id_of(name: str) -> str:
    """The id `file_name` made `name` from (for a name cut at MAX_ID_CHARS: its first part)."""
    stem = name.split("~", 1)[0]
    raw, i = bytearray(), 0
    while i < len(stem):
        if stem[i] == "%":
            raw.append(int(stem[i + 1:i + 3], 16))
            i += 3
        else:
            raw += stem[i].encode("ascii")
            i += 1
    return raw.decode("utf-8", "surrogatepass")


def link_name(*ids: str, limit: int = 80, digest: bool = True) -> str:
    """A file name for a page or figure that other pages link to (the view's, calibrate's): `file_name`'s `%`
    would be decoded by a browser in a link, so here every run of characters outside `A-Za-z0-9._-` becomes `_`,
    which is not reversible, and eight hex digits of the ids' SHA-256 keep distinct ids apart. `digest=False`:
    the digest only where the name alone would not (a character replaced, the name cut, an upper-case letter)."""
    joined = "__".join(ids)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", joined).strip("._")[:limit]
    if digest or stem != joined or joined.lower() != joined:
        return f"{stem}-{_digest(chr(0).join(ids))}"
    return stem


def beside(out: str | Path, suffix: str) -> Path:
    """The side file of `out` (a folder or a file): `OUT.review.jsonl` for suffix `.review.jsonl`, in the folder
    `out` is in. `out` is made absolute first, so `.` names the current folder by its name."""
    target = Path(os.path.abspath(out))
    if not target.name:
        raise InputError(f"--out {out} has no name to name its side files ({target.name}{suffix}) by; give a "
                         "folder below it")
    return target.with_name(target.name + suffix)


Inputs = Mapping[str, Iterable[str | Path]]


def _input_files(inputs: Inputs) -> dict[str, list[Path]]:
    return {kind: [Path(s) for s in sources if not is_literal(s)] for kind, sources in inputs.items()}


def check_apart(paths: Iterable[Path], inputs: Inputs, *, mine: Iterable[Path] = (), folders: bool = False
                ) -> None:
    """InputError (nothing written yet) for an output path that is an input file, lies inside an input folder,
    or lies in a folder that holds only inputs of one kind given one by one (every file there that the kind's
    reader would take: `READ_PATTERNS`). `inputs`: kind -> the paths given; `mine`: files the command wrote
    before or writes now, which do not count as another file in that folder; `folders`: the paths are output
    folders (eval's, the view's), whose files land in them."""
    own = {Path(p).resolve() for p in mine}
    input_dirs: list[tuple[Path, Path]] = []               # (as given, resolved)
    input_files: dict[Path, tuple[str, Path]] = {}         # resolved -> (kind, as given)
    by_folder: dict[tuple[Path, str], list[Path]] = {}     # (folder, kind) -> the files of that kind given from it
    for kind, sources in _input_files(inputs).items():
        for source in sources:
            if source.is_dir():
                input_dirs.append((source, source.resolve()))
            elif source.exists():
                root = source.resolve()
                input_files[root] = (kind, source)
                by_folder.setdefault((root.parent, kind), []).append(root)
    only: dict[tuple[Path, str], bool] = {}
    for path in paths:
        target = Path(path).resolve()
        for source, root in input_dirs:
            if target == root or root in target.parents:
                what = "--out" if folders else "an output"
                raise InputError(f"{what} {path} is inside the input folder {source}: outputs there are read as "
                                 "inputs by the next run; choose an --out outside every input folder")
        if target in input_files:
            kind, source = input_files[target]
            raise InputError(f"{path} is an input ({kind} {source}); an output never replaces an input: choose "
                             "another --out")
        lands_in = target if folders else target.parent
        for (folder, kind), given in by_folder.items():
            if folder != lands_in:
                continue
            if (folder, kind) not in only:
                only[folder, kind] = _only_inputs(folder, kind, set(given), own)
            if only[folder, kind]:
                raise InputError(f"{path} would be written among the {kind} given one by one from {folder} (it "
                                 f"holds nothing else {kind} are read from): a run reading that folder would read "
                                 "the outputs as inputs; choose an --out in another folder")


def _only_inputs(folder: Path, kind: str, given: set[Path], own: set[Path]) -> bool:
    if kind not in READ_PATTERNS:
        return False
    found = {p.resolve() for pattern in READ_PATTERNS[kind] for p in folder.glob(pattern)}
    return bool(found) and found - own <= given


def check_out_apart(out: Path, inputs: Iterable[str | Path]) -> None:
    """eval's check of its output folder, by the same rule (its inputs of every kind taken as one)."""
    check_apart([Path(out)], {"inputs": list(inputs)}, folders=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Outputs:
    """The files one command writes, every path built and checked here before anything is written.

    `home`: the folder the command holds the output lock of; its `.argue-written` records, per file (a path
    relative to `home`, `../NAME` for a side file beside it), the command that wrote it, the `--out` it was
    written for and the SHA-256 of its bytes. `inputs`: kind -> paths given (rule 2 of the module)."""

    home: Path
    command: str
    out: Path
    inputs: Inputs = field(default_factory=dict)
    texts: dict[Path, str] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)        # folded file name -> the id it was made from
    per_id: set[Path] = field(default_factory=set)           # the files named by an id (a bank per request)
    exclusive: list[tuple[Path, tuple[str, ...]]] = field(default_factory=list)

    def for_id(self, folder: Path, prefix: str, request_id: str, suffix: str, text: str) -> Path:
        """`folder/<prefix><file_name(id)><suffix>` holding `text`: InputError for an id no file can be named by,
        or one whose name folds onto another written here (a case-insensitive file system would merge them)."""
        try:
            name = prefix + file_name(request_id) + suffix
        except ValueError as exc:
            raise InputError(f"request id {request_id!r}: {exc}; give every request a non-empty id") from None
        folded = str(Path(os.path.abspath(folder)) / name).lower()
        if folded in self.ids and self.ids[folded] != request_id:
            raise InputError(f"request ids {self.ids[folded]!r} and {request_id!r} would be written to one file "
                             f"({name}) on a case-insensitive file system; rename one of them")
        self.ids[folded] = request_id
        path = self.add(Path(folder) / name, text)
        self.per_id.add(path)
        return path

    def add(self, path: Path, text: str) -> Path:
        path = Path(os.path.abspath(path))
        self.texts[path] = text
        return path

    def bank_folder(self, folder: Path, patterns: tuple[str, ...] = NUGGET_PATTERNS) -> None:
        """`folder` is read whole by the bank reader: every file in it that it would take must be this
        command's (no person's bank or stray JSON beside the written ones)."""
        self.exclusive.append((Path(os.path.abspath(folder)), patterns))

    # -- the record -------------------------------------------------------------------------------------------

    def _key(self, path: Path) -> str:
        return Path(os.path.relpath(path, os.path.abspath(self.home))).as_posix()

    def _record(self) -> dict[str, dict[str, object]]:
        manifest = self.home / MANIFEST
        if not manifest.is_file():
            return {}
        try:
            files = json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
        except (ValueError, AttributeError, OSError):
            raise InputError(f"{manifest} is not the record argue-judge writes (JSON with \"files\"); it cannot tell "
                             "which files here are argue-judge's: move the folder's files away or choose another "
                             "--out") from None
        return files if isinstance(files, dict) else {}

    def _mine(self, record: Mapping[str, Mapping[str, object]], path: Path) -> bool:
        """Written by this command and unchanged since (one of the hashes recorded: a kill between the record and
        the rename leaves the old bytes, which the record still holds)."""
        entry = record.get(self._key(path))
        if not isinstance(entry, Mapping) or entry.get("command") != self.command:
            return False
        hashes = entry.get("sha256")
        return isinstance(hashes, list) and _sha256(path) in hashes

    def _stale(self, record: Mapping[str, Mapping[str, object]]) -> list[Path]:
        """Files named by an id that an earlier run of this command for the same --out wrote and this one does
        not (a bank for a request no longer given): removed, so the folder holds this run's banks alone."""
        out = self._key(Path(os.path.abspath(self.out)))
        home = Path(os.path.abspath(self.home))
        paths = {key: Path(os.path.normpath(home / key)) for key in record}
        return [paths[key] for key, entry in record.items()
                if isinstance(entry, Mapping) and entry.get("command") == self.command and entry.get("out") == out
                and entry.get("per_id") and paths[key] not in self.texts and paths[key].is_file()]

    def check(self) -> list[Path]:
        """Every rule, before anything is written; the stale files of an earlier run (to remove)."""
        paths = list(self.texts)
        record = self._record()
        check_apart(paths, self.inputs, mine=[*paths, *(Path(os.path.normpath(self.home / k)) for k in record)])
        stale = self._stale(record)
        for path in [*paths, *stale]:
            if path.exists() and not (path.is_file() and self._mine(record, path)):
                raise InputError(f"{path} was not written by argue-judge {self.command} for this --out, or was "
                                 "changed since: it is never overwritten or removed; move it away or choose "
                                 "another --out")
        given = {p.resolve() for paths in _input_files(self.inputs).values() for p in paths}
        for folder, patterns in self.exclusive:
            for found in sorted({p for pattern in patterns for p in folder.glob(pattern)}):
                if Path(os.path.abspath(found)) not in self.texts and found not in stale:
                    what = " (an input)" if found.resolve() in given else ""
                    raise InputError(f"{found}{what} is in the bank folder {folder} and was not written by "
                                     f"argue-judge {self.command}: a bank reader would read it with the new banks; "
                                     "choose another --out")
        return stale

    def write(self) -> list[Path]:
        """Check, then write every file (renamed into place together) and record them; the paths written."""
        stale = self.check()
        record = self._record()
        out = self._key(Path(os.path.abspath(self.out)))
        new = {path: hashlib.sha256(text.encode("utf-8")).hexdigest() for path, text in self.texts.items()}
        # First the record of old and new bytes, then the files, then the record of the new bytes alone: a kill
        # anywhere between leaves each file with its bytes recorded.
        during = dict(record)
        for path, digest in new.items():
            now = [_sha256(path)] if path.is_file() else []  # checked above: bytes this command wrote
            during[self._key(path)] = self._entry(path, out, [digest, *now])
        self._save(during)
        with staged(list(self.texts)) as temps:
            for path, temp in temps.items():
                temp.write_bytes(self.texts[path].encode("utf-8"))
        for path in stale:
            path.unlink(missing_ok=True)
            during.pop(self._key(path), None)
        self._save({**during, **{self._key(p): self._entry(p, out, [d]) for p, d in new.items()}})
        return list(self.texts)

    def _entry(self, path: Path, out: str, hashes: list[str]) -> dict[str, object]:
        entry: dict[str, object] = {"command": self.command, "out": out, "sha256": hashes}
        if path in self.per_id:
            entry["per_id"] = True
        return entry

    def _save(self, files: Mapping[str, object]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.home / MANIFEST, json.dumps({"files": dict(sorted(files.items()))}, indent=1) + "\n")

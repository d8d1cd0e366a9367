"""Shared plumbing for every reader: where input comes from, and JSONL lines as (line_number, dict).

A *source* is a path (str or Path) or a literal string. A str counts as literal text when it contains a
newline or starts with `{`, so tests and small scripts can pass data inline; a Path is always a path.
Literal text is reported as `<string>` in errors.

Files ending in `.gz` are read through gzip, because document collections are usually shipped compressed.
A UTF-8 byte order mark at the start of a file is skipped (Windows editors write one).

Text that is not valid Unicode is an input error, never repaired: a lone UTF-16 surrogate (`"\\ud800"` as a JSON
escape) parses in Python but cannot be encoded as UTF-8, so it would crash the cache and the document index far
from its source. Repairing it (e.g. to U+FFFD) would silently change the text a judge sees.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from judge.errors import InputError

Source = str | Path
Sources = Source | Iterable[Source]

# One JSONL line (and one whole JSON file) may be at most this many bytes. Real reports, requests and
# documents are far below it; anything bigger is almost surely the wrong file (or a whole corpus on one line),
# and refusing it early beats exhausting memory. Tests may patch it.
MAX_LINE_BYTES = 50 * 1024 * 1024

LITERAL_NAME = "<string>"
JSONL_PATTERNS = ("*.jsonl", "*.jsonl.gz")

_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
# A JSON escape of a UTF-16 surrogate; valid pairs are joined by json.loads, so only lone ones survive parsing.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")
# What a corrupt or truncated gzip stream raises while being read (zlib.error is not an OSError).
_READ_ERRORS = (OSError, EOFError, zlib.error)


def is_literal(source: Source) -> bool:
    return isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))


def source_name(source: Source) -> str:
    return LITERAL_NAME if is_literal(source) else str(source)


def _as_list(sources: Sources) -> list[Source]:
    # A lone str/Path is one source, not an iterable of characters.
    if isinstance(sources, (str, Path)):
        return [sources]
    return list(sources)


def expand_paths(sources: Sources, patterns: tuple[str, ...] = JSONL_PATTERNS) -> list[Source]:
    """Files stay as given, a directory becomes its matching files (sorted, not recursive), literals pass.

    A missing path, or a directory with no matching file, is an InputError: silently reading nothing would
    produce an empty evaluation that looks like a success. So is a matching name in a directory that cannot be
    read (a symlink loop, a dangling symlink, no read permission): leaving it out would judge part of a run.
    """
    out: list[Source] = []
    for source in _as_list(sources):
        if is_literal(source):
            out.append(source)
            continue
        path = Path(source)
        if path.is_dir():
            found = sorted({p for pattern in patterns for p in path.glob(pattern)})
            for match in found:  # a matching name the run cannot read is refused, never left out without a word
                _check_readable(match)
            if not found:
                wanted = " or ".join(patterns)
                raise InputError(
                    f"directory has no {wanted} files; point at the files or at the right directory", path)
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise InputError("no such file or directory; check the path", path)
    return out


def _check_readable(path: Path) -> None:
    """InputError naming a file found in an input directory that cannot be read: a symlink loop, a dangling
    symlink, a directory or device named like an input, or a file without read permission."""
    try:
        status = path.stat()  # follows symlinks: a loop raises ELOOP, a dangling link ENOENT
    except OSError as exc:
        if path.is_symlink():
            what = "a symlink loop" if exc.errno == errno.ELOOP else "a symlink to a missing file"
            raise InputError(f"cannot read it: {what} (-> {os.readlink(path)}); fix or remove the link", path) from None
        raise InputError(f"cannot read it: {exc.strerror or exc}; fix or remove it", path) from None
    if not stat.S_ISREG(status.st_mode):
        raise InputError("cannot read it: not a regular file; rename or remove it", path)
    if not os.access(path, os.R_OK):
        raise InputError("cannot read it: permission denied; fix its permissions or remove it", path)


def open_binary(source: Source) -> IO[bytes]:
    if is_literal(source):
        # surrogatepass: a lone surrogate in literal text then fails UTF-8 decoding as an input error, like a file.
        return io.BytesIO(str(source).encode("utf-8", "surrogatepass"))
    path = Path(source)
    try:
        return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path) from exc


def decode_utf8(raw: bytes, name: str, line: int | None) -> str:
    """The text of a line (or of a whole file, `line` None); an InputError naming where it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if line in (None, 1) and raw.startswith(_UTF16_BOMS):
            raise InputError("the file is UTF-16 encoded; save it as UTF-8", name, line) from None
        where = "of the line" if line is not None else "of the file"
        raise InputError(f"not valid UTF-8 at byte {exc.start + 1} {where}; save the file as UTF-8",
                         name, line) from None


def _unreadable(exc: BaseException, name: str, line: int | None) -> InputError:
    if name.endswith(".gz"):
        return InputError(f"the compressed file is corrupt or truncated ({exc}); re-download or re-compress it",
                          name, line)
    return InputError(f"cannot read the file: {exc}", name, line)


def parse_json(text: str, name: str, line: int | None, line_offset: int = 0) -> Any:
    """json.loads with an InputError that points at the column (and the line, for multi-line documents)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno + line_offset
        raise InputError(f"malformed JSON at column {exc.colno}: {exc.msg}; fix the JSON syntax", name,
                         where) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read (more than about 1,000 levels); is this the right file?",
                         name, line) from None
    except ValueError as exc:  # Python refuses integers of more than 4,300 digits (CVE-2020-10735)
        if "digits" in str(exc):
            raise InputError("a number has more than 4,300 digits; no field needs one — remove it or quote it",
                             name, line) from None
        raise InputError(f"unreadable JSON: {exc}", name, line) from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_surrogates(value, name, line)
    return value


def _refuse_surrogates(value: Any, name: str, line: int | None) -> None:
    """Name the first field whose text holds a lone surrogate (iterative: the depth is not bounded here)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found:
                field = f"field '{path}'" if path else "the value"
                raise InputError(f"{field} contains a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), which is "
                                 "not valid text; remove it or fix the escape (pairs like \\ud83d\\ude00 are fine)",
                                 name, line)
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                if _SURROGATE.search(key):
                    raise InputError("a field name contains a lone UTF-16 surrogate; fix the escape", name, line)
                stack.append((f"{path}.{key}" if path else key, child))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))


def iter_jsonl(source: Source, max_line_bytes: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (1-based line number, object) for each non-blank line. Blank lines are skipped, not errors."""
    for line_no, _offset, _raw, obj in iter_jsonl_located(source, max_line_bytes):
        yield line_no, obj


def iter_jsonl_located(source: Source, max_line_bytes: int | None = None
                       ) -> Iterator[tuple[int, int, bytes, dict[str, Any]]]:
    """Like `iter_jsonl`, with where each line is: (line number, byte offset of the line in the decompressed
    stream, the line's raw bytes, object), so a reader can index a file and read one line again later
    (`read_jsonl_line`)."""
    cap = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    name = source_name(source)
    with open_binary(source) as fh:
        line_no = 0
        offset = 0
        while True:
            try:
                # Read at most cap+1 bytes so a monstrous line is detected without loading it whole.
                raw = fh.readline(cap + 1)
            except _READ_ERRORS as exc:  # e.g. a truncated or corrupt .gz
                raise _unreadable(exc, name, line_no + 1) from None
            if not raw:
                return
            line_no += 1
            start, offset = offset, offset + len(raw)
            if len(raw) > cap and not raw.endswith(b"\n"):
                raise InputError(f"line is longer than {cap:,} bytes; each line must hold one JSON object "
                                 "(is this the right file?)", name, line_no)
            obj = _parse_line(raw, name, line_no)
            if obj is not None:
                yield line_no, start, raw, obj


def read_jsonl_line(raw: bytes, name: str, line_no: int) -> dict[str, Any]:
    """The object on one line read again (raw bytes as `iter_jsonl_located` gave them, e.g. re-read from the
    file at its offset), checked as the first reading checked it."""
    obj = _parse_line(raw, name, line_no)
    if obj is None:
        raise InputError("the line is blank now; the file changed while the run was going", name, line_no)
    return obj


def _parse_line(raw: bytes, name: str, line_no: int) -> dict[str, Any] | None:
    """One line's object, None for a blank line."""
    if line_no == 1:
        raw = raw.removeprefix(_BOM)
    text = decode_utf8(raw, name, line_no).strip()
    if not text:
        return None
    obj = parse_json(text, name, line_no)
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object on each line, found {type_name(obj)}", name, line_no)
    return obj


def read_json_document(source: Source, max_bytes: int | None = None) -> Any:
    """Read one whole JSON document (e.g. a nugget bank), refusing anything over the size cap."""
    cap = MAX_LINE_BYTES if max_bytes is None else max_bytes
    name = source_name(source)
    with open_binary(source) as fh:
        try:
            raw = fh.read(cap + 1)
        except _READ_ERRORS as exc:
            raise _unreadable(exc, name, None) from None
    if len(raw) > cap:
        raise InputError(f"file is larger than {cap:,} bytes; is this the right file?", name)
    text = decode_utf8(raw.removeprefix(_BOM), name, None)
    if not text.strip():
        raise InputError("the file is empty; it should hold one JSON object", name)
    return parse_json(text, name, None)


def read_one(found: list[Any], kind: type, name: str, line: int | None) -> Any:
    """The one `kind` object a format read from one line (judge.formats.registry.parse gives a list)."""
    if len(found) != 1 or not isinstance(found[0], kind):
        raise InputError(f"the format read {len(found)} objects from one line, where one {kind.__name__} was wanted",
                         name, line)
    return found[0]


def type_name(value: Any) -> str:
    """JSON's name for a value's type, for messages a user (not a Python programmer) reads."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def get_id(obj: dict[str, Any], key: str, label: str, name: str, line: int | None) -> str | None:
    """An identifier field: a non-empty string, or an integer (TREC topic ids are often numbers in JSON).

    Returns None when the key is absent so callers can try aliases; any other type is an InputError.
    """
    if key not in obj:
        return None
    value = obj[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InputError(f"{label} must be a string, found {type_name(value)}", name, line)
    if not value.strip():
        raise InputError(f"{label} is empty; give it a value", name, line)
    check_plain_id(value, label, name, line)
    return value


# What splits a TSV row: the tab, and every character str.splitlines() breaks a line at.
_LINE_BREAKING = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_ROW_BREAKING = re.compile("[\t" + _LINE_BREAKING + "]")
_LINE_BREAK = re.compile(f"[{_LINE_BREAKING}]")


def row_breaking(text: str) -> str | None:
    """The first character of `text` that would break a row of a TSV output (a tab or a line break), or None."""
    found = _ROW_BREAKING.search(text)
    return found.group() if found else None


def tsv_line(fields: list[str]) -> str | None:
    """The fields as one TSV line (with its newline), or None when a field holds a tab or a line break. One scan
    of the joined line, not one per field: a TREC-size scores table has millions of fields."""
    line = "\t".join(fields)
    if line.count("\t") != len(fields) - 1 or _LINE_BREAK.search(line):
        return None
    return line + "\n"


def check_plain_id(value: str, label: str, name: str | None, line: int | None) -> None:
    """An id is written into TSV outputs (scores.tsv, leaderboard.tsv) as one field: one with a tab or a line
    break in it would shift every column after it, so it is refused where it is read."""
    bad = row_breaking(value)
    if bad is not None:
        raise InputError(f"{label} {value!r} contains {_CHARACTER_NAMES.get(bad, repr(bad))}, which would break the "
                         "tab-separated outputs; remove it from the id", name, line)


_CHARACTER_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return"}
